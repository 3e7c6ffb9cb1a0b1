/**
 * One round against `mur`: a fresh `mur run --json` on core 0 with the bench capsule
 * (mur_capsule.ts), spoken to as docs/protocol.md says. WatchSession clients attach first and the
 * task is sent once they are all armed (by the connection-ack); SubscribeToTask clients attach
 * between SendMessage and the end of the task's `delay_ms` gate. Counting starts at the first
 * text frame, so a replayed or opening event is never counted.
 *
 * Until the capsule and its streams exist, every failure becomes a "not available: <why>"
 * note on the cells it was for, never a failed bench.
 */
import {
  addLg,
  attempt,
  checkRun,
  COMPLETED,
  CPU_PAIRS,
  type Ctx,
  idleKiBEach,
  K1_WARM_FLOODS,
  REPLAY_TRIES,
  REPLAY_WARM,
  stallMiB,
  withCpu,
} from "./measure.ts";
import { median } from "./stats.ts";
import { kill, MAIN, murCmd, SpawnError, spawnReady } from "./procs.ts";
import { INSPECT_FLAG, type Inspector, inspectorOf } from "./inspector.ts";
import type { RequestSpec, RunResult, TriggerSpec } from "./loadgen.ts";
import type { Column, Measure } from "./results.ts";
import { type MurTaskKind, taskText, writeCapsule } from "./mur_capsule.ts";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };
const TEXT_FRAME = '"frame":"text"';

/**
 * Gate before a SubscribeToTask task's first frame: long enough to attach k clients (1,000
 * arm in about a second on this machine; beyond 100 the margin per client is smaller). The base
 * was 400 ms until a load average near 30 on 2 cores let a task pass its gate and end before one
 * client's SubscribeToTask arrived.
 */
export const gateMs = (k: number) => 800 + 6 * Math.min(k, 100) + 3 * Math.max(0, k - 100);

/**
 * The task idle SubscribeToTask connections follow: it waits in its gate (far longer than the
 * measure) until CancelTask ends it.
 */
export const IDLE_TASK: MurTaskKind = { mode: "sub", n: 1, rate: 0, gateMs: 600_000 };

/** Every task kind a round sends, so one script serves all rounds. */
export function murKinds(ctx: Ctx): MurTaskKind[] {
  const { plan } = ctx;
  const kinds: MurTaskKind[] = [{ mode: "watch", n: 1000, rate: 0, gateMs: 0 }, IDLE_TASK];
  for (const k of plan.ks) {
    kinds.push({ mode: "watch", n: plan.floodN[k], rate: 0, gateMs: 0 });
    kinds.push({ mode: "sub", n: plan.floodN[k], rate: 0, gateMs: gateMs(k) });
  }
  kinds.push({ mode: "watch", n: plan.paced.n, rate: plan.paced.rate, gateMs: 0 });
  kinds.push({ mode: "sub", n: plan.paced.n, rate: plan.paced.rate, gateMs: gateMs(plan.paced.k) });
  kinds.push({ mode: "watch", n: plan.stallN, rate: 0, gateMs: 0 });
  kinds.push({ mode: "watch", n: plan.stallN / 4, rate: 0, gateMs: 0 });
  return kinds;
}

/**
 * mur drops events for a connection more than 128 behind (docs/protocol.md "Slow readers"): a run
 * that lost some still measures what was delivered, and the loss is said next to the table.
 */
function delivered(ctx: Ctx, c: Column, m: Measure, r: RunResult, n: number): RunResult {
  checkRun(r);
  ctx.res.delivered(c, m, Math.min(1, r.minPerClient / n));
  if (r.minPerClient < n || r.idleEnded > 0) {
    ctx.res.facts.push(
      `${c} ${m}: events lost to lagging — a client received ${r.minPerClient} of ${n}` +
        (r.idleEnded ? `; ${r.idleEnded} connection(s) never saw the task end` : ""),
    );
  }
  return r;
}

const ALL: Measure[] = [
  "tp1",
  "tp10",
  "tp100",
  "tp1000",
  "p50",
  "p99",
  "idleKiB",
  "idleRestKiB",
  "stallMiB",
  "replayMs",
  "coldMs",
];

function firstLine(s: string): string {
  return s.split("\n").map((l) => l.trim()).find((l) => l.length > 0) ?? "";
}

/** `mur run --json` of the bench capsule on core 0; `inspect` also opens its inspector. */
export async function startMur(
  ctx: Ctx,
  dir: string,
  tag: string,
  inspect = false,
  entry: string = MAIN,
) {
  const manifest = await writeCapsule(dir, murKinds(ctx));
  const home = `${dir}/home`;
  await Deno.mkdir(home, { recursive: true });
  return await spawnReady({
    name: "mur run",
    cmd: murCmd(manifest, `${dir}/wd-${tag}`, [], inspect ? [INSPECT_FLAG] : [], entry),
    // A 1 s heartbeat: a lagged task stream learns its task ended at the next heartbeat.
    env: { MURMUR_HOME: home, NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "1000" },
    core: 0,
    readyTimeoutMs: 30_000,
  });
}

/** How the bench speaks to one running mur (docs/protocol.md), as load-generator jobs. */
export function murClient(url: string, tag: string) {
  const host = "127.0.0.1";
  const port = Number(url.split(":").pop());
  let seq = 0;
  let lastId = 0;
  const sendBody = (text: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: ++seq,
      method: "SendMessage",
      params: {
        message: { messageId: `bench-${tag}-${seq}`, role: "ROLE_USER", parts: [{ text }] },
        configuration: { returnImmediately: true },
      },
    });
  const sendTrigger = (kind: MurTaskKind): TriggerSpec => ({
    url: `http://${host}:${port}/`,
    headers: HEADERS,
    body: sendBody(taskText(kind)),
  });
  const newTask = async (kind: MurTaskKind): Promise<string> => {
    const r = await fetch(`http://${host}:${port}/`, {
      method: "POST",
      headers: HEADERS,
      body: sendBody(taskText(kind)),
    });
    const text = await r.text();
    let id: unknown;
    try {
      id = JSON.parse(text)?.result?.task?.id;
    } catch { /* not JSON */ }
    if (typeof id !== "string") {
      throw new Error(`SendMessage answered HTTP ${r.status}: ${text.slice(0, 200)}`);
    }
    return id;
  };
  const cancelTask = async (id: string): Promise<void> => {
    const r = await fetch(`http://${host}:${port}/`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++seq, method: "CancelTask", params: { id } }),
    });
    const text = await r.text();
    if (!text.includes('"result"')) {
      throw new Error(`CancelTask answered HTTP ${r.status}: ${text.slice(0, 200)}`);
    }
  };
  // Last-Event-ID: the newest id seen, so a WatchSession replays nothing already measured.
  const watch = (): RequestSpec => ({
    path: "/",
    headers: { ...HEADERS, "Accept": "text/event-stream", "Last-Event-ID": String(lastId) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "murmur.WatchSession", params: {} }),
  });
  const subscribe = (id: string): RequestSpec => ({
    path: "/",
    headers: { ...HEADERS, "Accept": "text/event-stream", "A2A-Extensions": STREAM_URI },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id } }),
  });
  const base = {
    host,
    port,
    preamble: 1,
    startMarker: TEXT_FRAME,
    endMarker: COMPLETED,
    idleMs: 3_000,
    timeoutMs: 60_000,
  };
  const seen = (id: number) => (lastId = Math.max(lastId, id));
  return {
    host,
    port,
    base,
    sendTrigger,
    newTask,
    cancelTask,
    watch,
    subscribe,
    seen,
    lastId: () => lastId,
  };
}

export async function roundMur(ctx: Ctx, dir: string, round: number): Promise<void> {
  const { lg, res, plan } = ctx;
  let s;
  try {
    s = await startMur(ctx, dir, String(round));
  } catch (e) {
    const why = e instanceof SpawnError && e.stderr
      ? `${e.message}: ${firstLine(e.stderr)}`
      : (e as Error).message;
    for (const c of ["mur-watch", "mur-sub"] as Column[]) {
      for (const m of ALL) res.note(c, m, `not available: ${why}`);
    }
    ctx.log(`  mur: ${why}`);
    return;
  }
  try {
    res.add("mur-watch", "coldMs", s.startMs);
    res.add("mur-sub", "coldMs", s.startMs);
    const { host, port, base, sendTrigger, newTask, watch, subscribe, seen, lastId } = murClient(
      String(s.ready.url),
      String(round),
    );

    const warmed = await attempt(ctx, [["mur-watch", "tp1"]], async () => {
      const r = checkRun(
        await lg.run({
          ...base,
          k: 1,
          request: watch(),
          trigger: sendTrigger({ mode: "watch", n: 1000, rate: 0, gateMs: 0 }),
        }),
      );
      seen(r.maxId);
    });
    if (!warmed) {
      const why = res.why("mur-watch", "tp1") ?? "the warm-up stream failed";
      for (const c of ["mur-watch", "mur-sub"] as Column[]) {
        for (const m of ALL) if (m !== "coldMs") res.note(c, m, why);
      }
      return;
    }

    // Then a flood at the goals' K, as every server gets (a fresh process's first K=100 flood
    // runs its code cold: measured at a third of its fourth).
    {
      const n = plan.floodN[plan.goalK];
      const r = await lg.run({
        ...base,
        k: plan.goalK,
        request: watch(),
        trigger: sendTrigger({ mode: "watch", n, rate: 0, gateMs: 0 }),
      });
      seen(r.maxId);
    }
    // Then K=1 floods on each endpoint, taking turns, before any row: V8 takes about 30,000 events
    // of one endpoint to settle its code for the event path (optimized, then re-optimized for
    // the shapes it meets later; profiled: its compiler threads alone were a third to half of a
    // fresh endpoint's first floods, a fiftieth of its fourth), and a capsule that serves a
    // watcher for long is in that settled state. The first flood of each is recorded on its own
    // (`cpu1first`), so what a fresh process pays is in the report too.
    for (let i = 0; i < K1_WARM_FLOODS; i++) {
      const n = plan.floodN[1];
      const cpu = i === 0 ? { cpuPid: s.pid } : {};
      const w = await lg.run({
        ...base,
        ...cpu,
        k: 1,
        request: watch(),
        trigger: sendTrigger({ mode: "watch", n, rate: 0, gateMs: 0 }),
      });
      seen(w.maxId);
      const id = await newTask({ mode: "sub", n, rate: 0, gateMs: gateMs(1) });
      const sub = await lg.run({ ...base, ...cpu, k: 1, request: subscribe(id) });
      seen(sub.maxId);
      if (i > 0) continue;
      for (const [c, r] of [["mur-watch", w], ["mur-sub", sub]] as const) {
        if (r.ok && r.events > 0 && r.serverCpuUs !== undefined) {
          res.add(c, "cpu1first", r.serverCpuUs / r.events);
        } else res.note(c, "cpu1first", `not available: ${r.error ?? "no events"}`);
      }
    }

    // Each K's floods: the two endpoints in turn, CPU_PAIRS times, every flood's CPU per event
    // recorded and the first pair's throughput. One pair a round read SubscribeToTask at 0.73× to
    // 1.43× WatchSession at the same K from one run to the next (the load generator is the
    // ceiling from K = 100, so how events batch moves each figure): the median of several is
    // the comparison.
    for (const k of plan.ks) {
      const m = `tp${k}` as "tp1";
      const n = plan.floodN[k];
      for (let pair = 0; pair < CPU_PAIRS; pair++) {
        const first = pair === 0;
        await attempt(ctx, first ? [["mur-watch", m]] : [], async () => {
          const kind: MurTaskKind = { mode: "watch", n, rate: 0, gateMs: 0 };
          const r = delivered(
            ctx,
            "mur-watch",
            m,
            await withCpu(
              ctx,
              "mur-watch",
              k,
              s.pid,
              (cpu) => lg.run({ ...base, ...cpu, k, request: watch(), trigger: sendTrigger(kind) }),
            ),
            n,
          );
          seen(r.maxId);
          if (!first) return;
          res.add("mur-watch", m, r.rate);
          addLg(ctx, "mur-watch", k, r);
        });
        await attempt(ctx, first ? [["mur-sub", m]] : [], async () => {
          const id = await newTask({ mode: "sub", n, rate: 0, gateMs: gateMs(k) });
          const r = delivered(
            ctx,
            "mur-sub",
            m,
            await withCpu(
              ctx,
              "mur-sub",
              k,
              s.pid,
              (cpu) => lg.run({ ...base, ...cpu, k, request: subscribe(id) }),
            ),
            n,
          );
          seen(r.maxId);
          if (!first) return;
          res.add("mur-sub", m, r.rate);
          addLg(ctx, "mur-sub", k, r);
        });
      }
    }

    await attempt(ctx, [["mur-watch", "replayMs"]], async () => {
      // The newest 512 numbered events are in the replay buffer: ask for exactly those.
      const from = lastId() - plan.replay;
      if (from < 0) throw new Error(`only ${lastId()} events written, fewer than ${plan.replay}`);
      const times: number[] = [];
      // The first replays on a fresh process also pay for compiling its code path: a few
      // unmeasured, then the median of more, as a client reconnecting to a running server sees it.
      for (let i = 0; i < REPLAY_WARM + REPLAY_TRIES; i++) {
        const r = checkRun(
          await lg.run({
            ...base,
            k: 1,
            startMarker: undefined,
            endMarker: undefined,
            stopAfter: plan.replay,
            timeoutMs: 10_000,
            request: { ...watch(), headers: { ...watch().headers, "Last-Event-ID": String(from) } },
          }),
          plan.replay,
        );
        if (i >= REPLAY_WARM) times.push(r.requestToEndMs);
      }
      res.add("mur-watch", "replayMs", median(times));
    });
    res.note("mur-sub", "replayMs", "measured on WatchSession (left column)");

    const { k: pk, rate, n: pn } = plan.paced;
    await attempt(ctx, [["mur-watch", "p50"], ["mur-watch", "p99"]], async () => {
      const kind: MurTaskKind = { mode: "watch", n: pn, rate, gateMs: 0 };
      const r = delivered(
        ctx,
        "mur-watch",
        "p50",
        await lg.run({
          ...base,
          k: pk,
          latency: true,
          request: watch(),
          trigger: sendTrigger(kind),
        }),
        pn,
      );
      seen(r.maxId);
      res.add("mur-watch", "p50", r.latency!.p50);
      res.add("mur-watch", "p99", r.latency!.p99);
    });
    await attempt(ctx, [["mur-sub", "p50"], ["mur-sub", "p99"]], async () => {
      const id = await newTask({ mode: "sub", n: pn, rate, gateMs: gateMs(pk) });
      const r = delivered(
        ctx,
        "mur-sub",
        "p50",
        await lg.run({ ...base, k: pk, latency: true, request: subscribe(id) }),
        pn,
      );
      seen(r.maxId);
      res.add("mur-sub", "p50", r.latency!.p50);
      res.add("mur-sub", "p99", r.latency!.p99);
    });

    // Twice, over a quarter of the events and over all of them: growth that does not depend
    // on the count is about the same both times. Both after one unmeasured flood of as many
    // events as the larger (see stallMiB's `warm`).
    const flood = async (n: number) => {
      const r = await lg.run({
        ...base,
        k: 1,
        request: watch(),
        trigger: sendTrigger({ mode: "watch", n, rate: 0, gateMs: 0 }),
        timeoutMs: 90_000,
      });
      seen(r.maxId);
      return r;
    };
    let warm: (() => Promise<RunResult>) | undefined = () => flood(plan.stallN);
    for (const [m, n] of [["stallSmallMiB", plan.stallN / 4], ["stallMiB", plan.stallN]] as const) {
      await attempt(ctx, [["mur-watch", m]], async () => {
        const w = warm;
        warm = undefined;
        res.add("mur-watch", m, await stallMiB(ctx, s.pid, host, port, watch(), () => flood(n), w));
      });
    }
    res.note("mur-sub", "stallMiB", "measured on WatchSession (left column)");
  } finally {
    kill(s.pid);
  }
  await murIdle(ctx, dir, round);
}

/**
 * Idle memory of every mur stream endpoint — WatchSession and SubscribeToTask on JSON-RPC and on
 * the HTTP+JSON binding — in a `mur run` of its own, started with its inspector so that each RSS
 * reading follows a full garbage collection (measure.ts `idleKiBEach`). The task streams follow
 * a task waiting in its gate until it is canceled.
 */
export async function murIdle(ctx: Ctx, dir: string, round: number): Promise<void> {
  const { res, plan } = ctx;
  const cells: [Column, Measure][] = [
    ["mur-watch", "idleKiB"],
    ["mur-sub", "idleKiB"],
    ["mur-watch", "idleRestKiB"],
    ["mur-sub", "idleRestKiB"],
  ];
  await attempt(ctx, cells, async () => {
    const s = await startMur(ctx, dir, `idle-${round}`, true);
    let gc: Inspector | undefined;
    try {
      gc = await inspectorOf(s);
      const mur = murClient(String(s.ready.url), `idle-${round}`);
      const { base, watch, subscribe } = mur;
      // The same warm-up stream the main round's process gets before anything is measured.
      const warm = checkRun(
        await ctx.lg.run({
          ...base,
          k: 1,
          request: watch(),
          trigger: mur.sendTrigger({ mode: "watch", n: 1000, rate: 0, gateMs: 0 }),
        }),
      );
      mur.seen(warm.maxId);
      const id = await mur.newTask(IDLE_TASK);
      try {
        // The JSON-RPC request's headers (a watch's Last-Event-ID: no replay), a bare body.
        const rest = (path: string, like: RequestSpec): RequestSpec => ({
          path,
          headers: { ...like.headers, "A2A-Extensions": STREAM_URI },
          body: "{}",
        });
        const kib = await idleKiBEach(ctx, s.pid, [
          { ...base, k: plan.idle, request: watch() },
          { ...base, k: plan.idle, request: subscribe(id) },
          { ...base, k: plan.idle, request: rest("/murmur/session:watch", watch()) },
          {
            ...base,
            k: plan.idle,
            request: rest(`/tasks/${encodeURIComponent(id)}:subscribe`, subscribe(id)),
          },
        ], gc);
        cells.forEach(([c, m], i) => {
          res.add(c, m, kib[i].rss);
          res.add(c, m === "idleKiB" ? "idleHeapKiB" : "idleRestHeapKiB", kib[i].heap);
        });
      } finally {
        await mur.cancelTask(id);
      }
    } finally {
      gc?.close();
      kill(s.pid);
    }
  });
}
