/**
 * The edge rows of `deno task bench` (issue 20; docs/edge.md): K watchers of one
 * session on the capsule's own door, then on one `mur edge`, then spread over three, in one run on
 * one machine, each following the same flood of events from a real capsule publishing to a real
 * `redis-server`. Reported: events delivered per second in total (the fan-out) and per serving
 * process, as ratios to the capsule's door at the same K. The watchers are raw TCP clients in the
 * bench process (tests/helpers/id_watcher.ts: chunked decoding and an id scan over bytes).
 *
 *   deno run -A scripts/bench/round_edges.ts [--quick]   prints the section on its own
 */
import { IdWatcher } from "../../tests/helpers/id_watcher.ts";
import { type EdgeProc, sessionOn, startEdgeProc } from "../../tests/helpers/edge.ts";
import { startCapsule } from "../../tests/helpers/capsule.ts";
import { TestRedis } from "../../tests/helpers/redis.ts";
import { cpuUs } from "./procs.ts";

export interface EdgeRow {
  label: string;
  servers: number;
  k: number;
  /** Events delivered per second, all watchers together. */
  total: number;
  /** …per serving process. */
  perServer: number;
  /** Events the watchers were told they lost (lagged), all together. */
  lost: number;
  /** CPU time of the serving processes (the capsule for its door, else the edges), µs per event delivered. */
  cpuPerEvent: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, f: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`bench edges: timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function rpc(base: string, method: string, params: unknown) {
  const res = await fetch(base + "/", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()).result;
}

/** One measurement: K watchers over `bases`, one flood of `n` events, its delivery rate. */
export async function measure(
  label: string,
  capBase: string,
  bases: string[],
  k: number,
  servers: number[],
): Promise<EdgeRow> {
  const start = (await rpc(capBase, "murmur.PollSession", { cursor: 0 })).cursor as number;
  const ws: IdWatcher[] = [];
  let first = 0;
  let last = 0;
  let target = Infinity;
  let done = 0;
  let cpu0 = 0;
  let cpu1 = 0;
  try {
    for (let i = 0; i < k; i++) {
      const w = await IdWatcher.open(bases[i % bases.length], { lastEventId: start });
      w.onId((id) => {
        const now = performance.now();
        if (first === 0) first = now;
        last = now;
        if (id >= target) done++;
      });
      ws.push(w);
    }
    await waitFor("the watchers' acks", () => ws.every((w) => w.unnumbered.length >= 1), 30_000);
    cpu0 = servers.reduce((a, pid) => a + cpuUs(pid), 0);
    const task = (await rpc(capBase, "SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: `flood` }] },
      configuration: { returnImmediately: true },
    })).task.id as string;
    for (;;) {
      const t = await rpc(capBase, "GetTask", { id: task });
      if (t.status.state === "TASK_STATE_COMPLETED") break;
      await sleep(50);
    }
    target = (await rpc(capBase, "murmur.PollSession", { cursor: 0 })).cursor as number;
    done = ws.filter((w) => w.lastId >= target).length;
    await waitFor("every watcher to reach the flood's end", () => done >= k, 120_000);
    cpu1 = servers.reduce((a, pid) => a + cpuUs(pid), 0);
  } finally {
    for (const w of ws) w.close();
  }
  const delivered = ws.reduce((a, w) => a + w.ids.length, 0);
  const lost = ws.reduce(
    (a, w) => a + w.unnumbered.reduce((b, u) => b + Number(/"missed":(\d+)/.exec(u)?.[1] ?? 0), 0),
    0,
  );
  const secs = Math.max(1e-3, (last - first) / 1000);
  const total = delivered / secs;
  return {
    label,
    servers: bases.length,
    k,
    total,
    perServer: total / bases.length,
    lost,
    cpuPerEvent: (cpu1 - cpu0) / Math.max(1, delivered),
  };
}

export function paced(groups: number) {
  const steps: Record<string, unknown>[] = [];
  for (let g = 0; g < groups; g++) steps.push({ text: "x", repeat: 50 }, { delay_ms: 100 });
  return steps;
}

export async function benchEdges(
  log: (m: string) => void,
  quick: boolean,
): Promise<{ rows: EdgeRow[]; markdown: string }> {
  const n = quick ? 1000 : 5000;
  const ks = quick ? [100] : [100, 300];
  const redis = await TestRedis.start();
  const cap = await startCapsule({
    manifest: {
      name: "bench-edges",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", queue_depth: 4, after_task: "sleep" },
      cluster: { redis: redis.url },
    },
    // A steady stream (50 events every 100 ms), the same for every row, below what this machine
    // delivers to 300 readers: a flood beyond that measures who is made to wait — the capsule's
    // own door slows the session that shares its process, an edge keeps pace with Redis and its
    // slowest readers are told `lagged` (docs/edge.md).
    script: { tasks: [{ turns: [{ steps: paced(n / 50) }] }] },
  });
  const edges: EdgeProc[] = [];
  const rows: EdgeRow[] = [];
  try {
    for (let i = 0; i < 3; i++) edges.push(await startEdgeProc(redis.url));
    await sessionOn(edges[0], cap.ready.session_id);
    const at = (e: EdgeProc) => `${e.url}/sessions/${cap.ready.session_id}/`;
    for (const k of ks) {
      for (
        const [label, bases, pids] of [
          ["capsule door", [cap.base + "/"], [cap.ready.pid]],
          ["1 edge", [at(edges[0])], [edges[0].pid]],
          ["3 edges", edges.map(at), edges.map((e) => e.pid)],
        ] as const
      ) {
        const r = await measure(label, cap.base, [...bases], k, [...pids]);
        log(
          `  edges K=${k} ${label}: ${Math.round(r.total)} events/s total, ${
            Math.round(r.perServer)
          } per server, ${r.lost} lost, ${r.cpuPerEvent.toFixed(2)} µs CPU per event`,
        );
        rows.push(r);
      }
    }
  } finally {
    for (const e of edges) await e.kill();
    await cap.close();
    await redis.close();
  }
  return { rows, markdown: edgesMarkdown(rows, n) };
}

export function edgesMarkdown(rows: EdgeRow[], n: number): string {
  const lines = [
    "| K | served by | events/s delivered, total | / capsule door | events/s per server | / capsule door | serving CPU µs per event | / capsule door | lost (lagged) |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const r of rows) {
    const door = rows.find((d) => d.k === r.k && d.servers === 1 && d.label === "capsule door")!;
    const fmt = (v: number) => Math.round(v).toLocaleString("en");
    lines.push(
      `| ${r.k} | ${r.label} | ${fmt(r.total)} | ${(r.total / door.total).toFixed(2)}× | ${
        fmt(r.perServer)
      } | ${(r.perServer / door.perServer).toFixed(2)}× | ${r.cpuPerEvent.toFixed(2)} | ${
        (r.cpuPerEvent / door.cpuPerEvent).toFixed(2)
      }× | ${r.lost.toLocaleString("en")} |`,
    );
  }
  return `## Beyond one machine: edges (issue 20)

K \`murmur.WatchSession\` watchers of one session follow a flood of ${
    n.toLocaleString("en")
  } events (50 every 100 ms) from a scripted capsule publishing to a local
\`redis-server\`: on the capsule's own door, on one \`mur edge\`, then spread evenly over three
(scripts/bench/round_edges.ts). Rate = events received by all watchers over the time from the first
to the last receipt. Serving CPU = on-CPU time of the processes serving the watchers (the capsule,
which also runs the session and publishes, for its door; the edges otherwise) over the events
delivered. Every process shares this
machine's cores: three edges here compete for the same CPUs the capsule, Redis and the watchers use,
so the 3-edge rows show what the edge path costs, not what three machines would add.

${lines.join("\n")}
`;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const t0 = performance.now();
  const { markdown } = await benchEdges(
    (m) => console.error(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${m}`),
    quick,
  );
  console.log(markdown);
}
