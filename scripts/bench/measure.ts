/**
 * What every round shares: the plan (how many events, clients, rounds), and the measurements
 * that are the same whatever the server — idle memory per connection, RSS growth under a
 * stalled reader, and turning one load-generator run into a recorded figure.
 */
import type { Loadgen } from "./loadgen_client.ts";
import type { RequestSpec, RunResult, StreamJob } from "./loadgen.ts";
import { rssBytes, sampleRss } from "./procs.ts";
import type { Column, Measure, Results } from "./results.ts";
import type { Inspector } from "./inspector.ts";

export interface Plan {
  rounds: number;
  ks: number[];
  /**
   * The K issue 9's throughput goals are judged at, whose load-generator busy share is
   * recorded and whose unmeasured flood warms every server before its throughput runs.
   */
  goalK: number;
  /** Events per flood, by K: enough deliveries for a window well above timer noise. */
  floodN: Record<number, number>;
  /** The SDK with messages costs more per event the longer the task's history: kept short. */
  peerMsgN: number;
  /**
   * Events per SDK (metadata) flood at K=1,000: it delivered 21,000–45,000 events/s there, so
   * 300 took up to 18 s a round and the common N over 20. The SDK with messages is not run at
   * K=1,000 at all (`PEER_MSG_MAX_K`).
   */
  peerWideN: number;
  paced: { k: number; rate: number; n: number };
  /**
   * Idle connections per batch (idleKiBEach). At 100, mur's figure swung 50–95 KiB from one
   * process to the next — its first connections reuse memory the process freed since it
   * started — while the raw server's held at 56–58; from 400 on, every endpoint of every
   * process read within 57–61 KiB.
   */
  idle: number;
  stallN: number;
  replay: number;
  /** Whole-bench budget: rounds that would start after it are skipped, and said so. */
  budgetMs: number;
}

export function plan(quick: boolean): Plan {
  return quick
    ? {
      rounds: 1,
      ks: [1, 10, 100, 1000],
      goalK: 100,
      floodN: { 1: 2000, 10: 1000, 100: 500, 1000: 300 },
      peerMsgN: 100,
      peerWideN: 100,
      paced: { k: 100, rate: 200, n: 50 },
      idle: 200,
      stallN: 10_000,
      replay: 512,
      budgetMs: 60_000,
    }
    : {
      rounds: 3,
      ks: [1, 10, 100, 1000],
      goalK: 100,
      // K=100 as many as the raw limit streams there (3,000): at 1,000 a flood to 100 clients was
      // over in 40–80 ms and its rate swung 2× between identical runs. K=1,000: 300 events are
      // 300,000 deliveries, as many as the raw limit's other floods.
      floodN: { 1: 10_000, 10: 3_000, 100: 3_000, 1000: 1_000 },
      peerMsgN: 300,
      peerWideN: 100,
      paced: { k: 100, rate: 200, n: 200 },
      idle: 400,
      stallN: 100_000,
      replay: 512,
      // A round took 75–105 s with K=1,000 and the idle processes (load average 5–8).
      budgetMs: 330_000,
    };
}

export interface Ctx {
  lg: Loadgen;
  res: Results;
  plan: Plan;
  log(msg: string): void;
}

export const COMPLETED = "TASK_STATE_COMPLETED";

/** The K whose floods record the load generator's busy share (`lg<k>`): is the client the ceiling? */
export function lgMeasure(k: number): Measure | undefined {
  return k === 100 || k === 1000 ? `lg${k}` : undefined;
}

/** Records a flood's load-generator busy share when its K has a measure for it. */
export function addLg(ctx: Ctx, c: Column, k: number, r: RunResult): void {
  const m = lgMeasure(k);
  if (m && Number.isFinite(r.lgBusy)) ctx.res.add(c, m, r.lgBusy!);
}
/** Replays per round; the round records their median. */
export const REPLAY_TRIES = 9;
/**
 * Replays before those, unmeasured: a replay of 512 events takes under a millisecond here, and
 * with one warm-up and three measured a round, mur's rounds read 0.64 to 1.83 ms in one run.
 */
export const REPLAY_WARM = 3;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Throws with the run's error when it failed or missed events, so the caller can note why. */
export function checkRun(r: RunResult, perClient?: number): RunResult {
  if (!r.ok) throw new Error(r.error ?? "run failed");
  if (r.lateArm) {
    throw new Error("a client attached after the stream had started; events were missed");
  }
  if (perClient !== undefined && r.minPerClient < perClient) {
    throw new Error(`a client received ${r.minPerClient} of at least ${perClient} events`);
  }
  return r;
}

/**
 * K=1 floods of each mur endpoint before any row (round_mur.ts says why); the first is measured
 * on its own as `cpu1first`.
 */
export const K1_WARM_FLOODS = 4;

/** Floods of each mur endpoint per K and round whose CPU per event is recorded (round_mur.ts). */
export const CPU_PAIRS = 3;

/** Runs `f`, recording its failure as the note of every (column, measure) it was for. */
export async function attempt(
  ctx: Ctx,
  cells: [Column, Measure][],
  f: () => Promise<void>,
): Promise<boolean> {
  try {
    await f();
    return true;
  } catch (e) {
    const why = (e as Error).message;
    for (const [c, m] of cells) ctx.res.note(c, m, `not available: ${why}`);
    ctx.log(`  ${cells.map(([c, m]) => `${c}.${m}`).join(", ")}: ${why}`);
    return false;
  }
}

/**
 * RSS per idle connection in KiB, for one or several endpoints of one server, one figure per
 * job: `k` connections of each job opened and held open with nothing flowing, then `k` more of
 * each in turn, its figure the RSS growth that second batch alone caused over its k. The first
 * batch also pays one-time costs (allocator arenas, lazily built code paths) that single runs
 * showed to swing the figure 4× from one fresh process to the next; the marginal cost does not. Nothing is closed before
 * the end: a batch measured after another was released would reuse the memory that one freed
 * and read as almost free. With `gc` (the server's inspector), every RSS reading follows a full
 * collection, and the JS heap's growth per connection is read beside it.
 */
export async function idleKiBEach(
  ctx: Ctx,
  pid: number,
  jobs: StreamJob[],
  gc?: Inspector,
): Promise<IdleKiB[]> {
  const hold = async (job: StreamJob) => {
    const r = await ctx.lg.hold(job);
    if (!r.ok) throw new Error(r.error ?? "hold failed");
  };
  const read = async () => {
    const heap = gc ? await gc.collect() : NaN;
    return { rss: rssBytes(pid), heap };
  };
  try {
    for (const job of jobs) await hold(job);
    await sleep(400);
    const out: IdleKiB[] = [];
    let before = await read();
    for (const job of jobs) {
      await hold(job);
      await sleep(400);
      const after = await read();
      const kib = {
        rss: (after.rss - before.rss) / job.k / 1024,
        heap: (after.heap - before.heap) / job.k / 1024,
      };
      out.push(kib);
      ctx.log(
        `  idle ${job.request.path}: RSS ${kib.rss.toFixed(1)} KiB, JS heap ${
          kib.heap.toFixed(1)
        } KiB per connection`,
      );
      before = after;
    }
    return out;
  } finally {
    await ctx.lg.release();
    await sleep(200);
  }
}

/** One endpoint's idle cost per connection, KiB: RSS, and the JS heap (NaN without `gc`). */
export interface IdleKiB {
  rss: number;
  heap: number;
}

/**
 * RSS growth in MiB while one connection never reads: the stalled request is sent, then
 * `run` streams the events to one reading client; growth is the peak RSS sampled during the
 * run over the RSS just before it.
 *
 * `warm`, when given, first streams as many events with no stalled reader, unmeasured: a
 * garbage-collected server's heap grows to its working size the first time it streams that
 * many events whether or not anyone stalls (measured here: mur +25 to +38 MiB on a first flood
 * of 100,000 events with no stalled client, +3 to +5 MiB on later ones), and that first growth
 * is not the stalled reader's.
 */
export async function stallMiB(
  ctx: Ctx,
  pid: number,
  host: string,
  port: number,
  stalled: RequestSpec,
  run: () => Promise<RunResult>,
  warm?: () => Promise<RunResult>,
): Promise<number> {
  if (warm) {
    checkRun(await warm());
    await sleep(200);
  }
  try {
    const s = await ctx.lg.stall(host, port, stalled);
    if (!s.ok) throw new Error(s.error ?? "stall failed");
    await sleep(300);
    const before = rssBytes(pid);
    const sampler = sampleRss(pid);
    let peak = NaN;
    let r: RunResult;
    try {
      r = await run();
    } finally {
      peak = sampler.stop();
    }
    ctx.log(
      `  stall: rss ${(before / 2 ** 20).toFixed(1)} → peak ${(peak / 2 ** 20).toFixed(1)} MiB`,
    );
    checkRun(r);
    return (peak - before) / 2 ** 20;
  } finally {
    await ctx.lg.release();
    await sleep(200);
  }
}

/**
 * Runs one flood and records the server's CPU per delivered event (µs) under `cpu<k>`: the time
 * its threads were on a CPU from the flood's first counted event to the moment every client was
 * done (connections accepted, requests answered and a task's gate are outside: loadgen.ts
 * `StreamJob.cpuPid`), over every event every client counted (procs.ts cpuUs).
 */
export async function withCpu(
  ctx: Ctx,
  c: Column,
  k: number,
  pid: number,
  run: (cpu: { cpuPid: number }) => Promise<RunResult>,
): Promise<RunResult> {
  const r = await run({ cpuPid: pid });
  if (r.ok && r.events > 0 && r.serverCpuUs !== undefined) {
    ctx.res.add(c, `cpu${k}` as Measure, r.serverCpuUs / r.events);
  }
  return r;
}
