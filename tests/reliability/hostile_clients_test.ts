/**
 * Slow and hostile clients (issue 10): a client trickling its request one byte a second delays
 * no one; a huge, deeply nested body stalls no one; clients that never read cost at most their
 * bounded queue; 1,000 idle connections are all served.
 */
import assert from "node:assert/strict";
import { frameOf, type SseEvent } from "../helpers/sse.ts";
import { RawSse, rssKiB } from "../helpers/raw_sse.ts";
import { latin1 } from "./helpers/http.ts";
import { startMur, waitFor } from "./helpers/mur.ts";
import { report } from "./helpers/rand.ts";
import { provenLosses, type Telling } from "../helpers/told_losses.ts";

type R = Record<string, Record<string, unknown>>;

function requestBytes(method: string, params: unknown, extra: string[] = []): Uint8Array {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  return latin1(
    [
      "POST / HTTP/1.1",
      "Host: 127.0.0.1",
      "Content-Type: application/json",
      "A2A-Version: 1.0",
      `Content-Length: ${body.length}`,
      ...extra,
      "",
      body,
    ].join("\r\n"),
  );
}

/** Times `n` GetTask calls one after another; returns the slowest, in ms. */
async function slowestOf(n: number, call: () => Promise<unknown>): Promise<number> {
  let worst = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    worst = Math.max(worst, performance.now() - t);
  }
  return worst;
}

const HOLD = { tasks: [{ turns: [{ steps: [{ text: "holding" }, { delay_ms: 600_000 }] }] }] };

Deno.test("hostile: clients trickling headers and bodies one byte a second, and an 8 MiB nested body: GetTask is answered throughout", async () => {
  const mur = await startMur({
    manifest: { name: "slow", version: "0.1.0" },
    script: HOLD,
    args: ["--task", "hold"],
  });
  const conns: Deno.TcpConn[] = [];
  let trickling = true;
  try {
    const held = ((await mur.rpc("ListTasks")).result as { tasks: { id: string }[] }).tasks[0].id;
    const get = () => mur.rpc("GetTask", { id: held });
    await slowestOf(20, get); // warm
    const quiet = await slowestOf(50, get);

    // 20 clients send their head one byte a second, 20 send a full head then the body that way.
    const req = requestBytes("GetTask", { id: held });
    const headEnd = new TextDecoder().decode(req).indexOf("\r\n\r\n") + 4;
    const trickles: Promise<void>[] = [];
    const trickled: number[] = []; // bytes each trickling client has sent
    for (let i = 0; i < 40; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: mur.port });
      conns.push(conn);
      const start = i < 20 ? 0 : headEnd;
      if (start > 0) await conn.write(req.subarray(0, start));
      const k = trickled.push(0) - 1;
      trickles.push((async () => {
        for (let at = start; trickling && at < req.length - 1; at++) {
          await conn.write(req.subarray(at, at + 1)).catch(() => {});
          trickled[k]++;
          await new Promise((r) => setTimeout(r, 1000));
        }
      })());
    }
    // Every trickle well under way (two bytes each, a second apart) before GetTask is measured.
    await waitFor("every client trickling", () => trickled.every((n) => n >= 2), 20_000);
    const underTrickle = await slowestOf(100, get);
    // None of them has finished its request: GetTask was answered while all 40 were half-sent.
    assert.ok(trickling && trickled.every((n, i) => n < req.length - 1 - (i < 20 ? 0 : headEnd)));

    // A body of 8 MiB of '[': refused by its depth before it is parsed, in well under a second.
    const deep = new TextEncoder().encode("[".repeat(8 * 1024 * 1024 - 16));
    const deepConn = await Deno.connect({ hostname: "127.0.0.1", port: mur.port });
    conns.push(deepConn);
    const head = latin1(
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${deep.length}\r\n\r\n`,
    );
    const deepSent = (async () => {
      await deepConn.write(head);
      let off = 0;
      while (off < deep.length) off += await deepConn.write(deep.subarray(off));
      const buf = new Uint8Array(4096);
      const n = await deepConn.read(buf);
      return new TextDecoder().decode(buf.subarray(0, n ?? 0));
    })();
    const duringDeep = await slowestOf(40, get);
    const deepAnswer = await deepSent;
    assert.match(deepAnswer, /^HTTP\/1\.1 200/);
    assert.match(deepAnswer, /"code":-32700/);

    trickling = false;
    await Promise.all(trickles);
    report(
      "slow clients (ms, slowest GetTask)",
      `quiet ${quiet.toFixed(1)}, with 40 trickling one byte a second ${
        underTrickle.toFixed(1)
      }, during an 8 MiB nested body ${duringDeep.toFixed(1)}`,
    );
    // Every GetTask above was answered (each bounded by the rpc's 15 s) while the trickling
    // clients and the nested body were in flight; how fast is reported, and claimed only by
    // `deno task bench` (issue 13: no test asserts a wall-clock duration).
    assert.ok(mur.alive());
  } finally {
    trickling = false;
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await mur.close();
  }
});

/** One warm-up task, then `stalledCount` watchers that never read, then a flood of `N` events. */
async function flood(stalledCount: number) {
  const N = 20_000;
  const mur = await startMur({
    manifest: {
      name: "stall",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: {
      tasks: [
        { match: "^warm", turns: [{ steps: [{ text: "w".repeat(200), repeat: 2000 }] }] },
        { turns: [{ steps: [{ text: "x".repeat(200), repeat: N }] }] },
      ],
    },
    // Unbounded queues would need 20 × 20,000 × ~300 B = 120 MB of heap: over this cap, a crash.
    denoArgs: ["--v8-flags=--max-old-space-size=64"],
  });
  const stalled: RawSse[] = [];
  await mur.rpc("SendMessage", {
    message: { messageId: "warm", role: "ROLE_USER", parts: [{ text: "warm up" }] },
  });
  // Where they start: every event after this one is theirs to get or to be told of.
  const from = (await mur.rpc("murmur.PollSession", { cursor: 0 })).result as { cursor: number };
  for (let i = 0; i < stalledCount; i++) {
    stalled.push(
      await RawSse.open(mur.base, "murmur.WatchSession", {}, {
        "Last-Event-ID": String(from.cursor),
      }),
    );
  }
  if (stalledCount > 0) await mur.waitSubscriptions(stalledCount, 10_000);
  const before = await rssKiB(mur.pid);
  const sent = await mur.rpc("SendMessage", {
    message: { messageId: "flood", role: "ROLE_USER", parts: [{ text: "flood" }] },
    configuration: { returnImmediately: true },
  });
  const id = (sent.result as { task: { id: string } }).task.id;
  const state = async () =>
    ((await mur.rpc("GetTask", { id })).result as { status: { state: string } }).status.state;
  let peak = before;
  const sample = async () => (peak = Math.max(peak, await rssKiB(mur.pid)));
  await waitFor(
    "the flood to end",
    async () => (await sample(), (await state()) === "TASK_STATE_COMPLETED"),
    90_000,
    100,
  );
  // The task's end writes its 4 MB answer (result, conversation, trace): RSS peaks after it.
  for (let i = 0; i < 20; i++) await sample().then(() => new Promise((r) => setTimeout(r, 100)));
  return { mur, stalled, id, from: from.cursor, before, peak, N };
}

Deno.test("hostile: 20 watchers that never read cost only their bounded queues while 20,000 events flow", async () => {
  // The same flood with no watcher first: RSS counts the flood's own garbage (measured +61 to
  // +71 MiB here, over the old 64 MiB bound with no watcher at all), so the watchers' cost is
  // what the stalled run holds beyond this control.
  const control = await flood(0);
  await control.mur.close();
  const run = await flood(20);
  const { mur, stalled, id } = run;
  try {
    report(
      "never-reading watchers (KiB)",
      `20 stalled over ${run.N} events: RSS before ${run.before}, peak ${run.peak}; with none: before ${control.before}, peak ${control.peak}`,
    );
    assert.ok(mur.alive(), "the capsule died");
    // Each stalled watcher holds its queue of 128 events, its 256 KiB write buffer and its
    // connection's buffers (measured 0.7 to 1.5 MiB a watcher here); unbounded, 6 MiB each.
    const cost = run.peak - control.peak;
    assert.ok(cost < 20 * 3 * 1024, `20 stalled watchers cost ${cost} KiB`);

    // Reading now: each stalled watcher got every event after where it started, or was told of
    // it in the lagged frame written in its place (received + told = written).
    const completed = (e: SseEvent) => {
      const su = (e.data.result as R).statusUpdate as {
        taskId?: string;
        status?: { state: string };
      } | undefined;
      return su?.taskId === id && su.status?.state === "TASK_STATE_COMPLETED";
    };
    for (const s of stalled.slice(0, 3)) {
      const evs = await s.read(completed, 30_000);
      const last = evs.at(-1)!.id!;
      const told = tellingsOf(evs);
      assert.ok(told.length > 0, "a watcher that never read lost nothing");
      const ids = evs.filter((e) => e.id !== null).map((e) => e.id!);
      const p = provenLosses(ids, told, run.from, last);
      assert.equal(p.received + p.told, last - run.from);
    }
  } finally {
    for (const s of stalled) s.close();
    await mur.close();
  }
});

/** The `lagged`/`gap` frames of `events`, each where it came among the numbered ones. */
function tellingsOf(events: SseEvent[]): Telling[] {
  const out: Telling[] = [];
  let numbered = 0;
  for (const e of events) {
    if (e.id !== null) numbered++;
    else {
      const f = frameOf(e);
      if (f?.frame === "lagged") out.push({ at: numbered, missed: Number(f.missed) });
      if (f?.frame === "gap") {
        out.push({ at: numbered, firstAvailableId: Number(f.firstAvailableId) });
      }
    }
  }
  return out;
}

/** The soft open-files limit, raised to `want` (up to the hard limit) with prlimit if needed. */
async function openFiles(want: number): Promise<number> {
  const read = async () => {
    const limits = await Deno.readTextFile("/proc/self/limits");
    const m = /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(limits)!;
    const n = (s: string) => s === "unlimited" ? Infinity : Number(s);
    return { soft: n(m[1]), hard: n(m[2]) };
  };
  const { soft, hard } = await read();
  if (soft >= want) return soft;
  const target = Math.min(want, hard);
  try {
    await new Deno.Command("prlimit", {
      args: [
        "--pid",
        String(Deno.pid),
        `--nofile=${target}:${hard === Infinity ? "unlimited" : hard}`,
      ],
    }).output();
  } catch { /* no prlimit: stay below the limit */ }
  return (await read()).soft;
}

Deno.test("hostile: 1,000 idle connections and 1,000 idle watchers are all served", async () => {
  // Each connection is a socket here and one in the capsule (which inherits this limit).
  const limit = await openFiles(4096);
  const n = Math.min(1000, Math.floor((limit - 300) / 2));
  if (n < 1000) {
    console.log(
      `reliability: open-files limit ${limit}: ${n} idle connections instead of 1,000 (raise ulimit -n)`,
    );
  }
  const mur = await startMur({
    manifest: {
      name: "idle",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "hello" }] }] }] },
    env: { MURMUR_HEARTBEAT_MS: "1000" },
  });
  const idle: Deno.TcpConn[] = [];
  const watchers: RawSse[] = [];
  try {
    // n connections that never send a byte.
    for (let i = 0; i < n; i++) {
      idle.push(await Deno.connect({ hostname: "127.0.0.1", port: mur.port }));
    }
    // Served beside them (bounded; how fast is the bench's claim, not this test's).
    const card = await fetch(mur.base + "/.well-known/agent-card.json", {
      signal: AbortSignal.timeout(15_000),
    });
    assert.equal(card.status, 200);
    await card.body?.cancel();
    for (const c of idle) c.close();
    idle.length = 0;

    // n watchers that sit idle: each is acked, gets heartbeats, then every event of a task.
    for (let i = 0; i < n; i++) {
      watchers.push(await RawSse.open(mur.base, "murmur.WatchSession", {}));
    }
    await mur.waitSubscriptions(n, 30_000);
    const acks = await Promise.all(
      watchers.map((w) => w.read((e) => frameOf(e)?.frame === "connection-ack", 20_000)),
    );
    assert.equal(acks.length, n);
    // Idle for a few heartbeats: each watcher reads two before the task starts.
    await Promise.all(watchers.map((w) => w.readComments(2, 20_000)));

    const sent = await mur.rpc("SendMessage", {
      message: { messageId: "hello", role: "ROLE_USER", parts: [{ text: "hi" }] },
    });
    const id = (sent.result as { task: { id: string; status: { state: string } } }).task.id;
    const ends = await Promise.all(watchers.map((w) =>
      w.read((e) => {
        const su = (e.data.result as R).statusUpdate as {
          taskId?: string;
          status?: { state: string };
        } | undefined;
        return su?.taskId === id && su.status?.state === "TASK_STATE_COMPLETED";
      }, 30_000)
    ));
    for (const evs of ends) {
      const last = evs.at(-1)!;
      assert.equal(
        ((last.data.result as R).statusUpdate.status as { state: string }).state,
        "TASK_STATE_COMPLETED",
      );
      assert.ok(!evs.some((e) => frameOf(e)?.frame === "lagged"));
    }
    assert.ok(watchers.every((w) => w.comments >= 2), "an idle watcher missed its heartbeats");
    report(
      "idle connections served",
      `${n} silent sockets, then ${n} idle watchers (acked, heartbeats, every event of a task)`,
    );
    for (const w of watchers) w.close();
    await mur.waitSubscriptions(0, 20_000);
  } finally {
    for (const c of idle) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    for (const w of watchers) w.close();
    await mur.close();
  }
});
