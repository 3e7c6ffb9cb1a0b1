/**
 * Property (issue 13): whatever the events (every kind, 0 B–200 KiB, multi-byte UTF-8 at the
 * edges), whoever connects (watches, plain and activated task streams, joining mid-stream with or
 * without Last-Event-ID, request ids of every length) and however they read (stalling, resuming,
 * disconnecting), each connection's bytes are exactly what the reference framer gives for the
 * events seed 000 says it gets, and every hole in its ids is covered by `lagged` frames (or, on a
 * plain connection, by the stderr lines) that count it. Runs the log, the subscription, the wire,
 * the chunk merging and the view together, in this process, through the view's ReadableStream
 * (what the HTTP layer reads).
 */
import fc from "fast-check";
import { setImmediate } from "node:timers";
import assert from "node:assert/strict";
import type { TaskState } from "../../src/a2a/types.ts";
import { isTerminal } from "../../src/a2a/types.ts";
import { EventLog } from "../../src/events/log.ts";
import { openView } from "../../src/events/view.ts";
import { checkAsyncProperty } from "../helpers/property.ts";
import { requestId, type Session, sessions } from "./arbitraries.ts";
import { checkConnection, type Connection, inputOf, stateAfter } from "./reference.ts";

const macrotask = () => new Promise<void>((r) => setImmediate(r));

type Act = "stall" | "read" | "disconnect";

interface Spec {
  kind: "watch" | "send" | "subscribe";
  activated: boolean;
  task: number;
  join: number;
  last: { mode: "none" | "zero" | "back" | "ahead"; n: number };
  requestId: string | number;
  schedule: { at: number; act: Act }[];
}

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom("watch" as const, "send" as const, "subscribe" as const),
  activated: fc.boolean(),
  task: fc.nat({ max: 2 }),
  // Early joins often (a connection that lives through a flood), anywhere otherwise.
  join: fc.oneof(fc.nat({ max: 8 }), fc.nat()),
  last: fc.record({
    mode: fc.constantFrom("none" as const, "zero" as const, "back" as const, "ahead" as const),
    n: fc.nat({ max: 600 }),
  }),
  requestId,
  schedule: fc.array(
    fc.record({
      at: fc.nat(),
      act: fc.constantFrom<Act>("stall", "stall", "read", "disconnect"),
    }),
    { maxLength: 4 },
  ),
});

/** One client of a view's stream: reads while told to, keeps every chunk as handed over. */
class Reader {
  chunks: Uint8Array[] = [];
  warned: number[] = [];
  reading = true;
  done = false;
  disconnected = false;
  error: unknown = null;
  #pending = false;
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #onDone: (() => void) | null = null;
  readonly finished = new Promise<void>((r) => this.#onDone = r);

  constructor(readonly c: Connection, body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
    this.pump();
  }

  pump(): void {
    if (this.#pending || this.done || !this.reading) return;
    this.#pending = true;
    this.#reader.read().then(({ done, value }) => {
      this.#pending = false;
      if (done) return this.#end();
      // Kept as handed over, not copied: bytes a later event overwrote would show at the check.
      this.chunks.push(value);
      this.pump();
    }, (e) => {
      // A faulted stream (view.ts `#fault`): the property fails on it after the case.
      this.error = e;
      this.#end();
    });
  }

  act(a: Act): void {
    if (this.done) return;
    if (a === "disconnect") {
      this.disconnected = true;
      this.#end();
      this.#reader.cancel().catch(() => {});
    } else {
      this.reading = a === "read";
      this.pump();
    }
  }

  #end(): void {
    this.done = true;
    this.#onDone?.();
  }

  bytes(): Uint8Array {
    const n = this.chunks.reduce((a, b) => a + b.byteLength, 0);
    const out = new Uint8Array(n);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }
}

const LAGGED = /^SSE broadcast lagged by (\d+) events$/;

const stats = { cases: 0, events: 0, bytes: 0, connections: 0, lost: 0, lagging: 0 };

async function runCase(s: Session, specs: Spec[]): Promise<void> {
  const log = new EventLog();
  const n = s.events.length;
  const state = new Map<string, TaskState>(s.tasks.map((t) => [t, "TASK_STATE_SUBMITTED"]));
  const readers: Reader[] = [];
  // Any other stderr line is a connection's fault (view.ts `#fault`): the property fails on it.
  const faults: string[] = [];
  const open = (sp: Spec, i: number) => {
    const kind = sp.kind;
    const task = kind === "watch" ? undefined : s.tasks[sp.task % s.tasks.length];
    // SubscribeToTask / SendStreamingMessage name a task that has not ended (the door refuses).
    if (task !== undefined && isTerminal(state.get(task)!)) return;
    const lastEventId = sp.last.mode === "none"
      ? undefined
      : sp.last.mode === "zero"
      ? 0
      : sp.last.mode === "back"
      ? Math.max(0, i - sp.last.n)
      : i + sp.last.n;
    const c: Connection = {
      kind,
      requestId: sp.requestId,
      activated: kind === "watch" ? true : sp.activated,
      task,
      ctx: task === undefined ? undefined : `ctx_${s.tasks.indexOf(task)}`,
      joinedAfter: i,
      lastEventId,
      openingState: task === undefined ? undefined : state.get(task),
    };
    const warned: number[] = [];
    const body = openView({
      kind,
      log,
      requestId: c.requestId,
      activated: c.activated,
      heartbeatMs: 3_600_000,
      taskId: task,
      opening: task === undefined
        ? undefined
        : { task: { id: task, contextId: c.ctx!, status: { state: c.openingState! } } } as never,
      lastEventId,
      warn: (line) => {
        const m = LAGGED.exec(line);
        if (m) warned.push(Number(m[1]));
        else faults.push(line);
      },
    });
    const r = new Reader(c, body);
    r.warned = warned;
    readers.push(r);
    return r;
  };
  const joins = specs.map((sp) => sp.join % (n + 1));
  const acts = specs.map((sp) => sp.schedule.map((a) => ({ at: a.at % (n + 1), act: a.act })));
  const byIndex: (Reader | undefined)[] = [];
  for (let i = 0; i <= n; i++) {
    specs.forEach((sp, k) => {
      if (joins[k] === i) byIndex[k] = open(sp, i);
    });
    specs.forEach((_, k) => {
      for (const a of acts[k]) if (a.at === i && joins[k] <= i) byIndex[k]?.act(a.act);
    });
    if (i === n) break;
    const ev = s.events[i];
    log.append(inputOf(ev));
    state.set(ev.task, stateAfter(ev));
    if (s.yields[i]) await macrotask();
  }
  log.close();
  for (const r of readers) r.act("read");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error("a stream did not end after the log closed")),
      20_000,
    );
  });
  try {
    await Promise.race([Promise.all(readers.map((r) => r.finished)), stuck]);
  } finally {
    clearTimeout(timer);
  }
  assert.deepEqual(faults, [], "no connection faulted");
  for (const r of readers) if (r.error) throw r.error;
  assert.equal(log.subscriptionCount, 0, "every connection let go of its subscription");
  stats.cases++;
  stats.events += n;
  for (const r of readers) {
    const bytes = r.bytes();
    const { lost } = checkConnection(r.c, s.events, {
      bytes,
      complete: !r.disconnected,
      warned: r.warned,
    });
    stats.connections++;
    stats.bytes += bytes.byteLength;
    stats.lost += lost;
    if (lost > 0) stats.lagging++;
  }
}

Deno.test("view property: every connection gets exactly the reference's bytes, holes counted by lagged", async () => {
  const runs = await checkAsyncProperty(
    { name: "view property", numRuns: 500 },
    fc.asyncProperty(sessions, fc.array(spec, { minLength: 1, maxLength: 6 }), runCase),
  );
  console.log(
    `property: view: ${runs} cases, ${stats.events} events, ${stats.connections} connections, ` +
      `${(stats.bytes / 2 ** 20).toFixed(1)} MiB read, ${stats.lagging} connections lagged ` +
      `(${stats.lost} events lost, each counted)`,
  );
});
