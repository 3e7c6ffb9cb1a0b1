/** One round against the limit: a fresh `raw_server.ts` on core 0. */
import {
  addLg,
  attempt,
  checkRun,
  COMPLETED,
  type Ctx,
  idleKiBEach,
  type Plan,
  REPLAY_TRIES,
  REPLAY_WARM,
  stallMiB,
  withCpu,
} from "./measure.ts";
import { median } from "./stats.ts";
import { kill, spawnReady } from "./procs.ts";
import { INSPECT_FLAG, type Inspector, inspectorOf } from "./inspector.ts";
import type { RequestSpec, TriggerSpec } from "./loadgen.ts";

/** Events per raw flood at K clients: at least the common N, about 300k deliveries, ≤ stallN. */
export function rawFloodN(plan: Plan, k: number): number {
  return Math.min(plan.stallN, Math.max(plan.floodN[k], Math.round(300_000 / k)));
}

const SCRIPT = new URL("./raw_server.ts", import.meta.url).pathname;
const REQUEST: RequestSpec = {
  path: "/",
  headers: {
    "Content-Type": "application/json",
    "A2A-Version": "1.0",
    "Accept": "text/event-stream",
  },
  body: '{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"tsk_bench"}}',
};

export async function roundRaw(ctx: Ctx): Promise<void> {
  await roundRawMain(ctx);
  await rawIdle(ctx);
}

/**
 * The raw floor of idle memory per connection: a raw server of its own, started with its
 * inspector so that each RSS reading follows a full garbage collection, as mur's (round_mur.ts
 * `murIdle`) do.
 */
async function rawIdle(ctx: Ctx): Promise<void> {
  await attempt(ctx, [["raw", "idleKiB"]], async () => {
    const s = await spawnReady({
      name: "raw (idle)",
      cmd: [Deno.execPath(), "run", "-A", INSPECT_FLAG, SCRIPT, "0", "1000"],
      core: 0,
      readyTimeoutMs: 30_000,
    });
    let gc: Inspector | undefined;
    try {
      gc = await inspectorOf(s);
      const host = "127.0.0.1";
      const port = Number(String(s.ready.url).split(":")[1]);
      const base = {
        host,
        port,
        request: REQUEST,
        preamble: 0,
        endMarker: COMPLETED,
        timeoutMs: 30_000,
      };
      // The same warm-up stream as the main process's.
      checkRun(
        await ctx.lg.run({
          ...base,
          k: 1,
          trigger: { url: `http://${host}:${port}/start`, body: '{"n":1000,"rate":0}' },
        }),
      );
      const [kib] = await idleKiBEach(ctx, s.pid, [{ ...base, k: ctx.plan.idle }], gc);
      ctx.res.add("raw", "idleKiB", kib.rss);
      ctx.res.add("raw", "idleHeapKiB", kib.heap);
    } finally {
      gc?.close();
      kill(s.pid);
    }
  });
}

async function roundRawMain(ctx: Ctx): Promise<void> {
  const { lg, res, plan } = ctx;
  const script = SCRIPT;
  let s;
  try {
    s = await spawnReady({
      name: "raw",
      cmd: [Deno.execPath(), "run", "-A", script, "0", String(plan.stallN)],
      core: 0,
      readyTimeoutMs: 30_000,
    });
  } catch (e) {
    res.note("raw", "coldMs", `not available: ${(e as Error).message}`);
    return;
  }
  try {
    res.add("raw", "coldMs", s.startMs);
    const host = "127.0.0.1";
    const port = Number(String(s.ready.url).split(":")[1]);
    const request = REQUEST;
    const start = (n: number, rate: number): TriggerSpec => ({
      url: `http://${host}:${port}/start`,
      body: JSON.stringify({ n, rate }),
    });
    const base = { host, port, request, preamble: 0, endMarker: COMPLETED, timeoutMs: 30_000 };

    // Warm the code paths (and wait out the buffer's pre-build) before anything is read.
    await lg.run({ ...base, k: 1, trigger: start(1000, 0) });

    // Then a flood at the goals' K, as every server gets.
    await lg.run({ ...base, k: plan.goalK, trigger: start(rawFloodN(plan, plan.goalK), 0) });
    for (const k of plan.ks) {
      const m = `tp${k}` as "tp1";
      await attempt(ctx, [["raw", m]], async () => {
        // The limit is so fast that the common N would be over in milliseconds: it streams
        // more events (same bytes each) so its window is as long as the others'.
        const n = rawFloodN(plan, k);
        const r = checkRun(
          await withCpu(
            ctx,
            "raw",
            k,
            s.pid,
            (cpu) => lg.run({ ...base, ...cpu, k, trigger: start(n, 0) }),
          ),
          n + 1,
        );
        res.add("raw", m, r.rate);
        addLg(ctx, "raw", k, r);
      });
    }
    await attempt(ctx, [["raw", "p50"], ["raw", "p99"]], async () => {
      const { k, rate, n } = plan.paced;
      const r = checkRun(
        await lg.run({ ...base, k, latency: true, trigger: start(n, rate) }),
        n + 1,
      );
      res.add("raw", "p50", r.latency!.p50);
      res.add("raw", "p99", r.latency!.p99);
    });
    await attempt(ctx, [["raw", "replayMs"]], async () => {
      const times: number[] = [];
      // The first replays on a fresh process also pay for compiling its code path: a few
      // unmeasured, then the median of more, as a client reconnecting to a running server sees it.
      for (let i = 0; i < REPLAY_WARM + REPLAY_TRIES; i++) {
        const r = checkRun(
          await lg.run({
            ...base,
            k: 1,
            request: { ...request, headers: { ...request.headers, "Last-Event-ID": "1000" } },
            stopAfter: plan.replay,
          }),
          plan.replay,
        );
        if (i >= REPLAY_WARM) times.push(r.requestToEndMs);
      }
      res.add("raw", "replayMs", median(times));
    });
    await attempt(ctx, [["raw", "stallMiB"]], async () => {
      res.add(
        "raw",
        "stallMiB",
        await stallMiB(
          ctx,
          s.pid,
          host,
          port,
          request,
          () => lg.run({ ...base, k: 1, trigger: start(plan.stallN, 0) }),
          () => lg.run({ ...base, k: 1, trigger: start(plan.stallN, 0) }),
        ),
      );
    });
  } finally {
    kill(s.pid);
  }
}
