/**
 * One round against the peer: a fresh @a2a-js/sdk 1.3.0 JSON-RPC server under Node on core 0.
 * Every measurement opens its own task (SendMessage, returnImmediately), attaches the
 * SubscribeToTask clients while the agent waits on its gate, then releases the gate.
 */
import { attempt, checkRun, COMPLETED, type Ctx, idleKiB, stallMiB } from "./measure.ts";
import { kill, spawnReady } from "./procs.ts";
import type { RequestSpec, TriggerSpec } from "./loadgen.ts";
import type { Column } from "./results.ts";

export const PEER_DIR = new URL("./peer/", import.meta.url).pathname;

/** `npm install` in peer/ on first use (node_modules is not committed). */
export async function ensurePeerInstalled(log: (m: string) => void): Promise<void> {
  try {
    await Deno.stat(`${PEER_DIR}node_modules/@a2a-js/sdk/package.json`);
    await Deno.stat(`${PEER_DIR}node_modules/express/package.json`);
    return;
  } catch { /* not installed yet */ }
  log("installing the peer (npm install in scripts/bench/peer) …");
  const out = await new Deno.Command("npm", {
    args: ["install", "--no-audit", "--no-fund"],
    cwd: PEER_DIR,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `npm install failed: ${new TextDecoder().decode(out.stderr).trim().split("\n").pop()}`,
    );
  }
}

const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

export async function roundPeer(ctx: Ctx): Promise<void> {
  const { lg, res, plan } = ctx;
  let s;
  try {
    s = await spawnReady({
      name: "peer",
      cmd: ["node", "server.mjs", "0"],
      cwd: PEER_DIR,
      core: 0,
      readyTimeoutMs: 30_000,
    });
  } catch (e) {
    for (const c of ["peer-msg", "peer-meta"] as Column[]) {
      res.note(c, "coldMs", `not available: ${(e as Error).message}`);
    }
    return;
  }
  try {
    res.add("peer-msg", "coldMs", s.startMs);
    res.add("peer-meta", "coldMs", s.startMs);
    const host = "127.0.0.1";
    const port = Number(String(s.ready.url).split(":")[1]);
    let seq = 0;
    const newTask = async (): Promise<string> => {
      const body = {
        jsonrpc: "2.0",
        id: ++seq,
        method: "SendMessage",
        params: {
          message: { messageId: `bench-${seq}`, role: "ROLE_USER", parts: [{ text: "tick" }] },
          configuration: { returnImmediately: true },
        },
      };
      const r = await fetch(`http://${host}:${port}/`, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify(body),
      });
      const j = await r.json();
      const id = j?.result?.task?.id;
      if (typeof id !== "string") {
        throw new Error(`SendMessage answered ${JSON.stringify(j).slice(0, 200)}`);
      }
      return id;
    };
    const subscribe = (id: string): RequestSpec => ({
      path: "/",
      headers: { ...HEADERS, "Accept": "text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id } }),
    });
    const start = (task: string, n: number, rate: number, mode: "msg" | "meta"): TriggerSpec => ({
      url: `http://${host}:${port}/bench/start`,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ task, n, rate, mode }),
    });
    const base = { host, port, preamble: 1, endMarker: COMPLETED, timeoutMs: 60_000 };

    {
      const id = await newTask();
      await lg.run({ ...base, k: 1, request: subscribe(id), trigger: start(id, 500, 0, "meta") });
    }

    await attempt(ctx, [["peer-msg", "idleKiB"], ["peer-meta", "idleKiB"]], async () => {
      const id = await newTask();
      const kib = await idleKiB(ctx, s.pid, { ...base, k: plan.idle, request: subscribe(id) });
      res.add("peer-msg", "idleKiB", kib);
      res.add("peer-meta", "idleKiB", kib);
      // Let the idle task end so it does not hold its bus.
      await fetch(start(id, 0, 0, "meta").url, {
        method: "POST",
        headers: HEADERS,
        body: start(id, 0, 0, "meta").body,
      })
        .then((r) => r.body?.cancel());
    });

    // Then a flood at the largest K, as every server gets — after the idle measure, whose
    // connections would otherwise reuse the memory the flood's connections left behind.
    {
      const kMax = Math.max(...plan.ks);
      const big = await newTask();
      await lg.run({
        ...base,
        k: kMax,
        request: subscribe(big),
        trigger: start(big, plan.floodN[kMax], 0, "meta"),
      });
    }

    for (const mode of ["meta", "msg"] as const) {
      const col: Column = mode === "msg" ? "peer-msg" : "peer-meta";
      for (const k of plan.ks) {
        const m = `tp${k}` as "tp1";
        await attempt(ctx, [[col, m]], async () => {
          const n = mode === "msg" ? plan.peerMsgN : plan.floodN[k];
          const id = await newTask();
          const r = checkRun(
            await lg.run({ ...base, k, request: subscribe(id), trigger: start(id, n, 0, mode) }),
            n + 1,
          );
          res.add(col, m, r.rate);
          if (k === Math.max(...plan.ks) && Number.isFinite(r.lgBusy)) {
            res.add(col, "lg100", r.lgBusy!);
          }
        });
      }
      await attempt(ctx, [[col, "p50"], [col, "p99"]], async () => {
        const { k, rate, n } = plan.paced;
        const id = await newTask();
        const r = checkRun(
          await lg.run({
            ...base,
            k,
            latency: true,
            request: subscribe(id),
            trigger: start(id, n, rate, mode),
          }),
          n + 1,
        );
        res.add(col, "p50", r.latency!.p50);
        res.add(col, "p99", r.latency!.p99);
      });
    }

    res.note("peer-msg", "replayMs", "n/a: the SDK keeps no event ids and ignores Last-Event-ID");
    res.note("peer-meta", "replayMs", "n/a: the SDK keeps no event ids and ignores Last-Event-ID");
    res.note(
      "peer-msg",
      "stallMiB",
      `n/a: with messages each event copies the whole growing history, ${plan.stallN} events would take minutes`,
    );
    await attempt(ctx, [["peer-meta", "stallMiB"]], async () => {
      const id = await newTask();
      res.add(
        "peer-meta",
        "stallMiB",
        await stallMiB(
          ctx,
          s.pid,
          host,
          port,
          subscribe(id),
          () =>
            lg.run({
              ...base,
              k: 1,
              request: subscribe(id),
              trigger: start(id, plan.stallN, 0, "meta"),
            }),
          async () => {
            const warm = await newTask();
            return lg.run({
              ...base,
              k: 1,
              request: subscribe(warm),
              trigger: start(warm, plan.stallN, 0, "meta"),
            });
          },
        ),
      );
    });
  } finally {
    kill(s.pid);
  }
}
