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
  attempt,
  checkRun,
  COMPLETED,
  type Ctx,
  idleKiB,
  REPLAY_TRIES,
  stallMiB,
  withCpu,
} from "./measure.ts";
import { median } from "./stats.ts";
import { kill, SpawnError, spawnReady } from "./procs.ts";
import type { RequestSpec, RunResult, TriggerSpec } from "./loadgen.ts";
import type { Column, Measure } from "./results.ts";
import { type MurTaskKind, taskText, writeCapsule } from "./mur_capsule.ts";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };
const TEXT_FRAME = '"frame":"text"';
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** Gate before a SubscribeToTask task's first frame: long enough to attach k clients. */
export const gateMs = (k: number) => 400 + 6 * k;

/** Every task kind a round sends, so one script serves all rounds. */
export function murKinds(ctx: Ctx): MurTaskKind[] {
  const { plan } = ctx;
  const kinds: MurTaskKind[] = [{ mode: "watch", n: 1000, rate: 0, gateMs: 0 }];
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
  "p50",
  "p99",
  "idleKiB",
  "stallMiB",
  "replayMs",
  "coldMs",
];

function firstLine(s: string): string {
  return s.split("\n").map((l) => l.trim()).find((l) => l.length > 0) ?? "";
}

export async function roundMur(ctx: Ctx, dir: string, round: number): Promise<void> {
  const { lg, res, plan } = ctx;
  const manifest = await writeCapsule(dir, murKinds(ctx));
  const home = `${dir}/home`;
  await Deno.mkdir(home, { recursive: true });
  let s;
  try {
    s = await spawnReady({
      name: "mur run",
      cmd: [
        Deno.execPath(),
        "run",
        "-A",
        MAIN,
        "run",
        "--manifest",
        manifest,
        "--json",
        "--workdir",
        `${dir}/wd-${round}`,
      ],
      // A 1 s heartbeat: a lagged task stream learns its task ended at the next heartbeat.
      env: { MURMUR_HOME: home, NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "1000" },
      core: 0,
      readyTimeoutMs: 30_000,
    });
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
    const host = "127.0.0.1";
    const port = Number(String(s.ready.url).split(":").pop());
    let seq = 0;
    let lastId = 0;
    const sendBody = (text: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: ++seq,
        method: "SendMessage",
        params: {
          message: { messageId: `bench-${round}-${seq}`, role: "ROLE_USER", parts: [{ text }] },
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

    await attempt(ctx, [["mur-watch", "idleKiB"]], async () => {
      res.add(
        "mur-watch",
        "idleKiB",
        await idleKiB(ctx, s.pid, { ...base, k: plan.idle, request: watch() }),
      );
    });
    res.note("mur-sub", "idleKiB", "measured on WatchSession (left column)");

    // Then a flood at the largest K, as every server gets (a fresh process's first K=100 flood
    // runs its code cold: measured at a third of its fourth) — after the idle measure, whose
    // connections would otherwise reuse the memory the flood's connections left behind.
    {
      const kMax = Math.max(...plan.ks);
      const n = plan.floodN[kMax];
      const r = await lg.run({
        ...base,
        k: kMax,
        request: watch(),
        trigger: sendTrigger({ mode: "watch", n, rate: 0, gateMs: 0 }),
      });
      seen(r.maxId);
    }

    for (const k of plan.ks) {
      const m = `tp${k}` as "tp1";
      const n = plan.floodN[k];
      await attempt(ctx, [["mur-watch", m]], async () => {
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
            () => lg.run({ ...base, k, request: watch(), trigger: sendTrigger(kind) }),
          ),
          n,
        );
        seen(r.maxId);
        res.add("mur-watch", m, r.rate);
        if (k === Math.max(...plan.ks) && Number.isFinite(r.lgBusy)) {
          res.add("mur-watch", "lg100", r.lgBusy!);
        }
      });
      await attempt(ctx, [["mur-sub", m]], async () => {
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
            () => lg.run({ ...base, k, request: subscribe(id) }),
          ),
          n,
        );
        seen(r.maxId);
        res.add("mur-sub", m, r.rate);
        if (k === Math.max(...plan.ks) && Number.isFinite(r.lgBusy)) {
          res.add("mur-sub", "lg100", r.lgBusy!);
        }
      });
    }

    await attempt(ctx, [["mur-watch", "replayMs"]], async () => {
      // The newest 512 numbered events are in the replay buffer: ask for exactly those.
      const from = lastId - plan.replay;
      if (from < 0) throw new Error(`only ${lastId} events written, fewer than ${plan.replay}`);
      const times: number[] = [];
      // The first replay on a fresh process also pays for compiling its code path: take the
      // median of a few, as a client reconnecting to a running server sees it.
      for (let i = 0; i < REPLAY_TRIES; i++) {
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
        times.push(r.requestToEndMs);
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
}
