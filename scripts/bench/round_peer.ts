/**
 * One round against the peer: a fresh @a2a-js/sdk 1.3.0 JSON-RPC server under Node on core 0.
 * Every measurement opens its own task (SendMessage, returnImmediately), attaches the
 * SubscribeToTask clients while the agent waits on its gate, then releases the gate.
 */
import { addLg, attempt, checkRun, COMPLETED, type Ctx, idleKiBEach, stallMiB } from "./measure.ts";
import { INSPECT_FLAG, type Inspector, inspectorOf } from "./inspector.ts";
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

/**
 * The largest K the SDK with messages is flooded at: at K=1,000 its 300 events took 14 s a
 * round (29,000 deliveries/s), and what it adds over metadata — the history copied on every
 * event — is a cost per event, not per watcher, shown at the smaller K.
 */
export const PEER_MSG_MAX_K = 100;

export async function roundPeer(ctx: Ctx): Promise<void> {
  if (await roundPeerMain(ctx)) await peerIdle(ctx);
}

/** One SDK task's JSON-RPC stream, started at /bench/start (peer/server.mjs). */
function peerClient(url: string) {
  const host = "127.0.0.1";
  const port = Number(url.split(":")[1]);
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
  return { host, port, newTask, subscribe, start, base };
}

/**
 * The SDK's idle memory per connection, in a server of its own started with its inspector so
 * that each RSS reading follows a full garbage collection, as mur's and the raw floor's.
 */
async function peerIdle(ctx: Ctx): Promise<void> {
  await attempt(ctx, [["peer-msg", "idleKiB"], ["peer-meta", "idleKiB"]], async () => {
    const s = await spawnReady({
      name: "peer (idle)",
      cmd: ["node", INSPECT_FLAG, "server.mjs", "0"],
      cwd: PEER_DIR,
      core: 0,
      readyTimeoutMs: 30_000,
    });
    let gc: Inspector | undefined;
    try {
      gc = await inspectorOf(s);
      const { lg } = ctx;
      const { newTask, subscribe, start, base } = peerClient(String(s.ready.url));
      const warm = await newTask();
      checkRun(
        await lg.run({
          ...base,
          k: 1,
          request: subscribe(warm),
          trigger: start(warm, 500, 0, "meta"),
        }),
      );
      const id = await newTask();
      const [kib] = await idleKiBEach(ctx, s.pid, [{
        ...base,
        k: ctx.plan.idle,
        request: subscribe(id),
      }], gc);
      for (const c of ["peer-msg", "peer-meta"] as Column[]) {
        ctx.res.add(c, "idleKiB", kib.rss);
        ctx.res.add(c, "idleHeapKiB", kib.heap);
      }
    } finally {
      gc?.close();
      kill(s.pid);
    }
  });
}

/** Whether the server started (when it did not, the idle measure is not tried either). */
async function roundPeerMain(ctx: Ctx): Promise<boolean> {
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
    return false;
  }
  try {
    res.add("peer-msg", "coldMs", s.startMs);
    res.add("peer-meta", "coldMs", s.startMs);
    const { host, port, newTask, subscribe, start, base } = peerClient(String(s.ready.url));

    {
      const id = await newTask();
      await lg.run({ ...base, k: 1, request: subscribe(id), trigger: start(id, 500, 0, "meta") });
    }

    // Then a flood at the goals' K, as every server gets.
    {
      const big = await newTask();
      await lg.run({
        ...base,
        k: plan.goalK,
        request: subscribe(big),
        trigger: start(big, plan.floodN[plan.goalK], 0, "meta"),
      });
    }

    for (const mode of ["meta", "msg"] as const) {
      const col: Column = mode === "msg" ? "peer-msg" : "peer-meta";
      for (const k of plan.ks) {
        const m = `tp${k}` as "tp1";
        if (mode === "msg" && k > PEER_MSG_MAX_K) {
          res.note(
            col,
            m,
            `not measured at K > ${PEER_MSG_MAX_K}: the SDK with messages delivers about 29,000 events/s at K=1,000 (14 s a round); its extra cost, the history copied on every event, is per event and shows at the smaller K`,
          );
          continue;
        }
        await attempt(ctx, [[col, m]], async () => {
          const n = mode === "msg" ? plan.peerMsgN : k >= 1000 ? plan.peerWideN : plan.floodN[k];
          const id = await newTask();
          const r = checkRun(
            await lg.run({ ...base, k, request: subscribe(id), trigger: start(id, n, 0, mode) }),
            n + 1,
          );
          res.add(col, m, r.rate);
          addLg(ctx, col, k, r);
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

    for (const c of ["peer-msg", "peer-meta"] as Column[]) {
      res.note(
        c,
        "idleRestKiB",
        "the SDK's HTTP+JSON binding is not measured (its JSON-RPC idle cost is)",
      );
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
  return true;
}
