/** One round against the limit: a fresh `raw_server.ts` on core 0. */
import {
  attempt,
  checkRun,
  COMPLETED,
  type Ctx,
  idleKiB,
  type Plan,
  REPLAY_TRIES,
  stallMiB,
  withCpu,
} from "./measure.ts";
import { median } from "./stats.ts";
import { kill, spawnReady } from "./procs.ts";
import type { RequestSpec, TriggerSpec } from "./loadgen.ts";

/** Events per raw flood at K clients: at least the common N, about 300k deliveries, ≤ stallN. */
export function rawFloodN(plan: Plan, k: number): number {
  return Math.min(plan.stallN, Math.max(plan.floodN[k], Math.round(300_000 / k)));
}

export async function roundRaw(ctx: Ctx): Promise<void> {
  const { lg, res, plan } = ctx;
  const script = new URL("./raw_server.ts", import.meta.url).pathname;
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
    const request: RequestSpec = {
      path: "/",
      headers: {
        "Content-Type": "application/json",
        "A2A-Version": "1.0",
        "Accept": "text/event-stream",
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"tsk_bench"}}',
    };
    const start = (n: number, rate: number): TriggerSpec => ({
      url: `http://${host}:${port}/start`,
      body: JSON.stringify({ n, rate }),
    });
    const base = { host, port, request, preamble: 0, endMarker: COMPLETED, timeoutMs: 30_000 };

    // Warm the code paths (and wait out the buffer's pre-build) before anything is read.
    await lg.run({ ...base, k: 1, trigger: start(1000, 0) });

    await attempt(ctx, [["raw", "idleKiB"]], async () => {
      res.add("raw", "idleKiB", await idleKiB(ctx, s.pid, { ...base, k: plan.idle }));
    });
    // Then a flood at the largest K, as every server gets — after the idle measure, whose
    // connections would otherwise reuse the memory the flood's connections left behind.
    const kMax = Math.max(...plan.ks);
    await lg.run({ ...base, k: kMax, trigger: start(rawFloodN(plan, kMax), 0) });
    for (const k of plan.ks) {
      const m = `tp${k}` as "tp1";
      await attempt(ctx, [["raw", m]], async () => {
        // The limit is so fast that the common N would be over in milliseconds: it streams
        // more events (same bytes each) so its window is as long as the others'.
        const n = rawFloodN(plan, k);
        const r = checkRun(
          await withCpu(ctx, "raw", k, s.pid, () => lg.run({ ...base, k, trigger: start(n, 0) })),
          n + 1,
        );
        res.add("raw", m, r.rate);
        if (k === kMax && Number.isFinite(r.lgBusy)) res.add("raw", "lg100", r.lgBusy!);
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
      // The first replay on a fresh process also pays for compiling its code path: take the
      // median of a few, as a client reconnecting to a running server sees it.
      for (let i = 0; i < REPLAY_TRIES; i++) {
        const r = checkRun(
          await lg.run({
            ...base,
            k: 1,
            request: { ...request, headers: { ...request.headers, "Last-Event-ID": "1000" } },
            stopAfter: plan.replay,
          }),
          plan.replay,
        );
        times.push(r.requestToEndMs);
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
