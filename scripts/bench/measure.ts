/**
 * What every round shares: the plan (how many events, clients, rounds), and the measurements
 * that are the same whatever the server — idle memory per connection, RSS growth under a
 * stalled reader, and turning one load-generator run into a recorded figure.
 */
import type { Loadgen } from "./loadgen_client.ts";
import type { RequestSpec, RunResult, StreamJob } from "./loadgen.ts";
import { cpuUs, rssBytes, sampleRss } from "./procs.ts";
import type { Column, Measure, Results } from "./results.ts";

export interface Plan {
  rounds: number;
  ks: number[];
  /** Events per flood, by K: enough deliveries for a window well above timer noise. */
  floodN: Record<number, number>;
  /** The SDK with messages costs more per event the longer the task's history: kept short. */
  peerMsgN: number;
  paced: { k: number; rate: number; n: number };
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
      ks: [1, 10, 100],
      floodN: { 1: 2000, 10: 1000, 100: 500 },
      peerMsgN: 100,
      paced: { k: 100, rate: 200, n: 50 },
      idle: 100,
      stallN: 10_000,
      replay: 512,
      budgetMs: 60_000,
    }
    : {
      rounds: 3,
      ks: [1, 10, 100],
      // K=100 as many as the raw limit streams there (3,000): at 1,000 a flood to 100 clients was
      // over in 40–80 ms and its rate swung 2× between identical runs.
      floodN: { 1: 10_000, 10: 3_000, 100: 3_000 },
      peerMsgN: 300,
      paced: { k: 100, rate: 200, n: 200 },
      idle: 100,
      stallN: 100_000,
      replay: 512,
      budgetMs: 165_000,
    };
}

export interface Ctx {
  lg: Loadgen;
  res: Results;
  plan: Plan;
  log(msg: string): void;
}

export const COMPLETED = "TASK_STATE_COMPLETED";
/** Replays per round; the round records their median. */
export const REPLAY_TRIES = 3;
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
 * RSS per idle connection in KiB: `k` connections opened by `job` and held open with nothing
 * flowing, then `k` more; the figure is the second batch's growth over k. The first batch also
 * pays one-time costs (allocator arenas, lazily built code paths) that single runs showed to
 * swing the figure 4× from one fresh process to the next; the marginal cost does not.
 */
export async function idleKiB(ctx: Ctx, pid: number, job: StreamJob): Promise<number> {
  try {
    const first = await ctx.lg.hold(job);
    if (!first.ok) throw new Error(first.error ?? "hold failed");
    await sleep(400);
    const before = rssBytes(pid);
    const second = await ctx.lg.hold(job);
    if (!second.ok) throw new Error(second.error ?? "hold failed");
    await sleep(400);
    const after = rssBytes(pid);
    return (after - before) / job.k / 1024;
  } finally {
    await ctx.lg.release();
    await sleep(200);
  }
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
 * its threads were on a CPU over the whole run (producing the events included: the raw limit's
 * are pre-built), over every event every client counted (procs.ts cpuUs, in nanoseconds).
 */
export async function withCpu(
  ctx: Ctx,
  c: Column,
  k: number,
  pid: number,
  run: () => Promise<RunResult>,
): Promise<RunResult> {
  const before = cpuUs(pid);
  const r = await run();
  const after = cpuUs(pid);
  if (r.ok && r.events > 0 && Number.isFinite(before) && Number.isFinite(after)) {
    ctx.res.add(c, `cpu${k}` as Measure, (after - before) / r.events);
  }
  return r;
}
