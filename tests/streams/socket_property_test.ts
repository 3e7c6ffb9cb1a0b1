/**
 * The event-path property end to end (issue 13): a real session's door on a real socket, watchers
 * over raw TCP that join mid-stream (with and without Last-Event-ID, request ids of every length,
 * strings and integers), stall, resume and disconnect at random while events of every kind and
 * size are appended to the session's log. Each watcher's body, de-chunked from the HTTP response,
 * is exactly the reference framer's events for it (tests/events/reference.ts), every hole covered
 * by `lagged` frames that count it.
 *
 * One door serves every case (a door per case would spend the run starting sessions): the log
 * goes on from case to case, and the reference keeps every event appended so far. A seed replays
 * the whole run; a path alone replays its case against a fresh log.
 */
import fc from "fast-check";
import assert from "node:assert/strict";
import { checkAsyncProperty } from "../helpers/property.ts";
import { doorRequestId, type Ev, session } from "../events/arbitraries.ts";
import { byteSize } from "../events/arbitraries.ts";
import { checkConnection, type Connection, inputOf } from "../events/reference.ts";
import { inprocCapsule } from "../door/inproc.ts";
import { type Act, RawStream } from "../helpers/raw_stream.ts";

const spec = fc.record({
  requestId: doorRequestId,
  join: fc.oneof(fc.nat({ max: 4 }), fc.nat()),
  // Without Last-Event-ID (or with 0, or one never issued) a watch replays the whole buffer of
  // 512 events, which the shared log keeps full: the cheap "a few back" is the common case.
  last: fc.record({
    mode: fc.oneof(
      { weight: 6, arbitrary: fc.constant("back" as const) },
      fc.constantFrom("none" as const, "zero" as const, "ahead" as const, "garbage" as const),
    ),
    n: fc.oneof({ weight: 4, arbitrary: fc.nat({ max: 40 }) }, fc.nat({ max: 600 })),
  }),
  schedule: fc.array(
    fc.record({ at: fc.nat(), act: fc.constantFrom<Act>("stall", "stall", "read", "disconnect") }),
    { maxLength: 3 },
  ),
});

/** A small event that ends every case: every watcher still there reads until it has it. */
function sentinel(n: number): Ev {
  return {
    kind: "status",
    task: "tsk_end",
    ctx: "ctx_end",
    status: { state: "TASK_STATE_WORKING", timestamp: new Date(n).toISOString() },
    reopen: null,
  };
}

/** Bounded wait (a stalled door would otherwise hang the run). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("socket property: every watcher's body over a real socket is exactly the reference's", async () => {
  const lines: string[] = [];
  const cap = await inprocCapsule(
    {
      name: "socket-property",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    { tasks: [{ turns: [{ steps: [{ text: "unused" }] }] }] },
    {},
    (l) => lines.push(l),
  );
  const log = cap.session.log;
  // Every event the log ever took, by id − 1 (the session itself appends none: no task runs).
  const history: Ev[] = [];
  const stats = { watchers: 0, bytes: 0, lost: 0 };
  try {
    const runs = await checkAsyncProperty(
      { name: "socket property", numRuns: 500 },
      fc.asyncProperty(
        // Sizes as the in-process property draws them, the large ones rarer (each stays in the
        // replay buffer for the next 512 events, and most watchers replay some of it).
        session({
          max: 40,
          sizes: fc.oneof(
            { weight: 60, arbitrary: fc.integer({ min: 0, max: 300 }) },
            { weight: 20, arbitrary: byteSize },
            { weight: 1, arbitrary: fc.integer({ min: 20 * 1024, max: 200 * 1024 }) },
          ),
          burst: 3,
        }),
        fc.array(spec, { minLength: 1, maxLength: 3 }),
        async (s, specs) => {
          const events = [...s.events, sentinel(history.length)];
          const base = history.length;
          const watchers: RawStream<Connection>[] = [];
          const byIndex: (RawStream<Connection> | undefined)[] = [];
          const joins = specs.map((sp) => sp.join % events.length);
          for (let i = 0; i < events.length; i++) {
            for (let k = 0; k < specs.length; k++) {
              const sp = specs[k];
              if (joins[k] === i) {
                const at = base + i; // events the log holds when the watcher opens
                const header = sp.last.mode === "none"
                  ? null
                  : sp.last.mode === "zero"
                  ? "0"
                  : sp.last.mode === "back"
                  ? String(Math.max(0, at - sp.last.n))
                  : sp.last.mode === "ahead"
                  ? String(at + sp.last.n)
                  : "abc";
                const c: Connection = {
                  kind: "watch",
                  requestId: sp.requestId,
                  activated: true,
                  joinedAfter: at,
                  lastEventId: header === null || header === "abc" ? undefined : Number(header),
                };
                const w = await RawStream.open(
                  cap.base,
                  c,
                  { id: c.requestId, method: "murmur.WatchSession" },
                  { "Last-Event-ID": header },
                );
                // The door subscribes the stream before it answers: once the head is here, the
                // watcher sees every event appended from now on.
                await within(w.headed, 10_000, "the response head");
                watchers.push(w);
                byIndex[k] = w;
              }
              for (const a of sp.schedule) {
                if (a.at % events.length === i) byIndex[k]?.act(a.act);
              }
            }
            log.append(inputOf(events[i]));
            history.push(events[i]);
            if (s.yields[i]) await new Promise((r) => setTimeout(r, 0));
          }
          const last = history.length;
          for (const w of watchers) w.act("read");
          await within(
            Promise.all(watchers.filter((w) => !w.closed).map((w) => w.received(last))),
            20_000,
            `every watcher still there receiving event ${last}`,
          );
          for (const w of watchers) w.close();
          await Promise.all(watchers.map((w) => w.done));
          for (const w of watchers) {
            assert.match(w.head, /^HTTP\/1\.1 200 /);
            const bytes = w.bytes();
            const { lost } = checkConnection(w.c, history, {
              bytes,
              complete: !w.disconnected,
              warned: null,
            });
            stats.watchers++;
            stats.bytes += bytes.length;
            stats.lost += lost;
          }
        },
      ),
    );
    const faults = lines.filter((l) => !/^SSE broadcast lagged by \d+ events$/.test(l));
    assert.deepEqual(faults.filter((l) => /fault|Error/.test(l)), [], "no connection faulted");
    console.log(
      `property: socket: ${runs} cases, ${history.length} events, ${stats.watchers} watchers, ` +
        `${(stats.bytes / 2 ** 20).toFixed(1)} MiB read, ${stats.lost} events lost (each counted)`,
    );
  } finally {
    await cap.close();
  }
});
