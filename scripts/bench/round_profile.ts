/**
 * Where a K=1 flood's microseconds go: a `mur run` of the bench capsule of its own, started with
 * its inspector; after the rounds' unmeasured K=1 floods on each endpoint, V8's sampling profiler runs over
 * `FLOODS` K=1 floods of WatchSession and then of SubscribeToTask, and each profile's self time
 * is summed per part of the event path (cpu_profile.ts `EVENT_PATH`) over the events delivered.
 * Beside it, the server's on-CPU time per event over as many floods without the profiler
 * (every thread, as the rounds' CPU rows read it): what the samples of the main thread do not
 * show is the runtime's other threads (V8's compiler and collector helpers). This capsule runs
 * from source (main.ts), as the start profiles do (start_profile.ts): a sample is put in its part
 * by its module's path under src/, and a bundle's chunks have no such names.
 */
import type { Ctx } from "./measure.ts";
import { checkRun, K1_WARM_FLOODS } from "./measure.ts";
import { kill, SOURCE_MAIN } from "./procs.ts";
import { type Inspector, inspectorOf } from "./inspector.ts";
import { byPart, EVENT_PATH } from "./cpu_profile.ts";
import { gateMs, murClient, startMur } from "./round_mur.ts";

const FLOODS = 3;
/** One sample every 100 µs: a flood of 10,000 events at ~1.5 µs each gets ~150 samples. */
const INTERVAL_US = 100;

export interface PathProfile {
  /** µs per delivered event by part, per endpoint. */
  parts: { part: string; watch: number; sub: number }[];
  /** Server on-CPU µs per event (all threads) over the profiled floods. */
  cpu: { watch: number; sub: number };
  events: number;
}

export async function profileEventPath(ctx: Ctx, dir: string): Promise<PathProfile> {
  const n = ctx.plan.floodN[1];
  const s = await startMur(ctx, dir, "profile", true, SOURCE_MAIN);
  let gc: Inspector | undefined;
  try {
    gc = await inspectorOf(s);
    const mur = murClient(String(s.ready.url), "profile");
    const watchRun = async (cpu: boolean) => {
      const r = checkRun(
        await ctx.lg.run({
          ...mur.base,
          k: 1,
          request: mur.watch(),
          trigger: mur.sendTrigger({ mode: "watch", n, rate: 0, gateMs: 0 }),
          ...(cpu ? { cpuPid: s.pid } : {}),
        }),
      );
      mur.seen(r.maxId);
      return r;
    };
    const subRun = async (cpu: boolean) => {
      const id = await mur.newTask({ mode: "sub", n, rate: 0, gateMs: gateMs(1) });
      const r = checkRun(
        await ctx.lg.run({
          ...mur.base,
          k: 1,
          request: mur.subscribe(id),
          ...(cpu ? { cpuPid: s.pid } : {}),
        }),
      );
      mur.seen(r.maxId);
      return r;
    };
    // The K=1 warm-up every round gives (round_mur.ts K1_WARM_FLOODS), taking turns.
    for (let i = 0; i < K1_WARM_FLOODS; i++) {
      await watchRun(false);
      await subRun(false);
    }
    const one = async (run: (cpu: boolean) => ReturnType<typeof watchRun>) => {
      // First without the profiler, for the CPU figure (the profiler's sampling thread would add
      // its own, most of all through a SubscribeToTask flood's gate), then profiled.
      let cpuEvents = 0, cpuUs = 0;
      for (let i = 0; i < FLOODS; i++) {
        const r = await run(true);
        cpuEvents += r.events;
        cpuUs += r.serverCpuUs ?? NaN;
      }
      let events = 0;
      await gc!.startProfile(INTERVAL_US);
      for (let i = 0; i < FLOODS; i++) events += (await run(false)).events;
      const parts = byPart(await gc!.stopProfile(), EVENT_PATH);
      return {
        events,
        cpu: cpuUs / cpuEvents,
        parts: parts.map((p) => (p.ms * 1000) / events),
      };
    };
    const w = await one(watchRun);
    const sub = await one(subRun);
    const names = byPart({ nodes: [], samples: [], timeDeltas: [] }, EVENT_PATH).map((p) => p.part);
    return {
      parts: names.map((part, i) => ({ part, watch: w.parts[i], sub: sub.parts[i] })),
      cpu: { watch: w.cpu, sub: sub.cpu },
      events: w.events,
    };
  } finally {
    gc?.close();
    kill(s.pid);
  }
}

/** The BENCHMARKS.md section. */
export function pathMarkdown(p: PathProfile | string, n: number): string {
  const head = `## Where a K=1 flood's CPU goes

A \`mur run\` of the bench capsule of its own, from source (main.ts: each sample's part is found by its module's path,
which a bundle's chunks do not keep), started with its inspector (scripts/bench/round_profile.ts):
after the rounds' ${K1_WARM_FLOODS} unmeasured K=1 floods on each endpoint, V8's sampling profiler (one sample every ${INTERVAL_US} µs)
over ${FLOODS} K=1 floods of ${
    n.toLocaleString("en")
  } events on WatchSession, then on SubscribeToTask; each
part's self time (samples of the main thread, cpu_profile.ts \`EVENT_PATH\`) over the events delivered. A
builtin V8 inlines (JSON.stringify, a typed array's set) counts in the function that called it.`;
  if (typeof p === "string") return `${head}\n\n${p}\n`;
  const sum = (k: "watch" | "sub") => p.parts.reduce((s, r) => s + r[k], 0);
  const rows = p.parts.map((r) => `| ${r.part} | ${r.watch.toFixed(3)} | ${r.sub.toFixed(3)} |`);
  return `${head}

| part | WatchSession µs per event | SubscribeToTask µs per event |
| --- | ---: | ---: |
${rows.join("\n")}
| **main thread, sampled** | **${sum("watch").toFixed(2)}** | **${sum("sub").toFixed(2)}** |
| server on-CPU, every thread (schedstat), over ${FLOODS} more floods without the profiler | ${
    p.cpu.watch.toFixed(2)
  } | ${p.cpu.sub.toFixed(2)} |

The two last rows differ by the runtime's other threads (V8's compiler and collector helpers), by
what a profiled run costs more, and by the noise of a shared machine between floods.
`;
}

if (import.meta.main) {
  // This step alone: deno run -A scripts/bench/round_profile.ts
  const { Loadgen } = await import("./loadgen_client.ts");
  const { plan } = await import("./measure.ts");
  const { Results } = await import("./results.ts");
  const full = plan(false);
  const lg = await Loadgen.start(1);
  const dir = await Deno.makeTempDir({ prefix: "mur-path-" });
  try {
    const ctx: Ctx = { lg, res: new Results(), plan: full, log: console.error };
    console.log(pathMarkdown(await profileEventPath(ctx, dir), full.floodN[1]));
  } finally {
    await lg.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
