/**
 * The Redis rows of `deno task bench` (docs/benchmarks.md; BENCHMARKS.md "Beyond one machine: the Redis client"), each a ratio to a baseline taken
 * in the same run:
 *
 * - publish cost: a scripted capsule's CPU per event for a flood with `cluster:` (publishing to a
 *   local `redis-server`, counted until Redis holds the last event) against the same capsule
 *   without it;
 * - edge CPU per delivered event: 100 watchers of one session on one `mur edge`, against the
 *   capsule's own door serving the same 100 (the edge rows' measure, round_edges.ts);
 * - start: `mur run` spawn → readiness line with `cluster:` against without;
 * - fan-out: 1,000 watchers on 100 sessions through one edge — the edge's Redis connections
 *   (CLIENT LIST, every client but the bench's own) and its CPU per delivered event. The 100
 *   sessions are written by the bench itself as a capsule's publisher writes them (entries,
 *   meta, liveness, wakes, copied from a real capsule's stream), so 100 capsule processes do not
 *   share the two cores with the edge being measured.
 *
 *   deno run -A scripts/bench/round_redis.ts [--quick]   prints the section on its own
 */
import { IdWatcher } from "../../tests/helpers/id_watcher.ts";
import { sessionOn, startEdgeProc } from "../../tests/helpers/edge.ts";
import { startCapsule } from "../../tests/helpers/capsule.ts";
import { TestRedis } from "../../tests/helpers/redis.ts";
import { openRedis, type RedisClient, type Reply } from "../../src/cluster/client.ts";
import { parseRedisUrl, type RedisTarget } from "../../src/manifest/redis_url.ts";
import { sessionKeys } from "../../src/cluster/keys.ts";
import { cpuUs, kill, murCmd, spawnReady } from "./procs.ts";
import { measure, paced } from "./round_edges.ts";

export interface RedisRows {
  /** µs of capsule CPU per event, median of the tries. */
  publish: { with: number; without: number; events: number };
  edge: { edge: number; door: number; k: number };
  /** ms, median. */
  start: { with: number; without: number; tries: number };
  fanout: {
    sessions: number;
    watchers: number;
    connections: number;
    cpuPerEvent: number;
    delivered: number;
    lost: number;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function rpc(base: string, method: string, params: unknown) {
  const res = await fetch(base + "/", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()).result;
}

async function until<T>(
  what: string,
  f: () => Promise<T | undefined> | T | undefined,
  ms = 120_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`bench redis: timed out waiting for ${what}`);
    await sleep(20);
  }
}

function client(url: string): RedisClient {
  return openRedis(parseRedisUrl(url) as RedisTarget, { name: "mur-bench" });
}

const FLOOD = (n: number) => ({
  tasks: [{ turns: [{ steps: [{ text: "x", repeat: n }] }] }],
});

/** One capsule's CPU per event over a flood of `n`, with or without publishing. */
async function publishCost(redis: TestRedis, bench: RedisClient, n: number, cluster: boolean) {
  const cap = await startCapsule({
    manifest: {
      name: "bench-publish",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", queue_depth: 4, after_task: "sleep" },
      ...(cluster ? { cluster: { redis: redis.url } } : {}),
    },
    script: FLOOD(n),
  });
  try {
    const from = (await rpc(cap.base, "murmur.PollSession", { cursor: 0 })).cursor as number;
    const cpu0 = cpuUs(cap.ready.pid);
    const task = (await rpc(cap.base, "SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "go" }] },
      configuration: { returnImmediately: true },
    })).task.id as string;
    await until(
      "the flood to complete",
      async () =>
        (await rpc(cap.base, "GetTask", { id: task })).status.state === "TASK_STATE_COMPLETED" ||
        undefined,
    );
    const last = (await rpc(cap.base, "murmur.PollSession", { cursor: 0 })).cursor as number;
    if (cluster) {
      const key = sessionKeys(cap.ready.session_id).events;
      await until("Redis to hold the last event", async () => {
        const top = await bench.call(["XREVRANGE", key, "+", "-", "COUNT", 1]) as Reply[][];
        return top[0]?.[0] === `${last}-0` || undefined;
      });
    }
    return (cpuUs(cap.ready.pid) - cpu0) / (last - from);
  } finally {
    await cap.close();
  }
}

/** spawn → readiness line of `mur run`, with and without `cluster:`, alternated. */
async function startTimes(redis: TestRedis, tries: number) {
  const dir = await Deno.makeTempDir({ prefix: "mur-bench-redis-" });
  const write = async (name: string, cluster: boolean) => {
    await Deno.mkdir(`${dir}/${name}`, { recursive: true });
    await Deno.writeTextFile(`${dir}/${name}/script.json`, JSON.stringify(FLOOD(1)));
    await Deno.writeTextFile(
      `${dir}/${name}/murmur.yaml`,
      JSON.stringify({
        name,
        version: "0.1.0",
        inference: { driver: "scripted", script: "script.json" },
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        ...(cluster ? { cluster: { redis: redis.url } } : {}),
      }),
    );
    return `${dir}/${name}/murmur.yaml`;
  };
  const paths = { with: await write("with", true), without: await write("without", false) };
  const t = { with: [] as number[], without: [] as number[] };
  const env = { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" };
  try {
    for (let i = 0; i < tries; i++) {
      const order: ("with" | "without")[] = i % 2 ? ["with", "without"] : ["without", "with"];
      for (const k of order) {
        const p = await spawnReady({
          name: `mur run (${k} cluster)`,
          cmd: murCmd(paths[k], `${dir}/${k}-wd-${i}`),
          env,
          readyTimeoutMs: 30_000,
        });
        t[k].push(p.startMs);
        kill(p.pid);
        await p.child.status;
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return { with: median(t.with), without: median(t.without), tries };
}

/** A real capsule's published stream and meta: the bench's sessions are written from these. */
async function template(redis: TestRedis, bench: RedisClient) {
  const cap = await startCapsule({
    manifest: {
      name: "bench-fanout",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", queue_depth: 4, after_task: "sleep" },
      cluster: { redis: redis.url },
    },
    script: FLOOD(200),
  });
  try {
    await rpc(cap.base, "SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "go" }] },
    });
    const keys = sessionKeys(cap.ready.session_id);
    const entries = await until("the template's events", async () => {
      const rows = await bench.call(["XRANGE", keys.events, "-", "+"]) as [string, string[]][];
      return rows.length >= 200 ? rows.filter(([id]) => id.endsWith("-0")) : undefined;
    });
    const meta = await bench.call(["HGETALL", keys.meta]) as string[];
    return { fields: entries.map(([, f]) => f), meta };
  } finally {
    await cap.close();
  }
}

async function fanout(redis: TestRedis, bench: RedisClient, quick: boolean) {
  const sessions = quick ? 20 : 100;
  const perSession = 10;
  const rounds = quick ? 10 : 20;
  const batch = 10;
  const { fields, meta } = await template(redis, bench);
  const ids = Array.from(
    { length: sessions },
    () => `ses_${crypto.randomUUID().replaceAll("-", "")}`,
  );
  for (const id of ids) {
    const k = sessionKeys(id);
    await bench.pipeline([
      ["HSET", k.meta, ...meta],
      ["SET", k.alive, "1", "PX", 600_000],
      ["DEL", k.events],
    ]);
  }
  const edge = await startEdgeProc(redis.url);
  const ws: IdWatcher[] = [];
  try {
    for (const id of ids) {
      for (let i = 0; i < perSession; i++) {
        ws.push(await IdWatcher.open(`${edge.url}/sessions/${id}/`, { lastEventId: 0 }));
      }
    }
    await until("the watchers' acks", () => ws.every((w) => w.unnumbered.length >= 1) || undefined);
    const cpu0 = cpuUs(edge.pid);
    let next = 1;
    let connections = 0;
    for (let r = 0; r < rounds; r++) {
      for (const id of ids) {
        const k = sessionKeys(id);
        const cmds: (string | number)[][] = [];
        for (let b = 0; b < batch; b++) {
          cmds.push(["XADD", k.events, `${next + b}-0`, ...fields[(next + b) % fields.length]]);
        }
        cmds.push(["PUBLISH", k.wake, `${next + batch - 1}-0`]);
        await bench.pipeline(cmds);
      }
      next += batch;
      if (r === Math.floor(rounds / 2)) {
        const list = String(await bench.call(["CLIENT", "LIST"])).split("\n").filter(Boolean);
        connections = list.filter((l) => !/ name=mur-bench /.test(l)).length;
      }
      await sleep(100);
    }
    const last = next - 1;
    await until(
      "every watcher to reach the last event",
      () => ws.every((w) => w.lastId >= last) || undefined,
    );
    const cpu = cpuUs(edge.pid) - cpu0;
    const delivered = ws.reduce((a, w) => a + w.ids.length, 0);
    const lost = ws.reduce(
      (a, w) =>
        a + w.unnumbered.reduce((b, u) => b + Number(/"missed":(\d+)/.exec(u)?.[1] ?? 0), 0),
      0,
    );
    return {
      sessions,
      watchers: ws.length,
      connections,
      cpuPerEvent: cpu / Math.max(1, delivered),
      delivered,
      lost,
    };
  } finally {
    for (const w of ws) w.close();
    await edge.kill();
  }
}

async function edgeCpu(redis: TestRedis, quick: boolean) {
  const n = quick ? 1000 : 3000;
  const k = 100;
  const cap = await startCapsule({
    manifest: {
      name: "bench-edge-cpu",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", queue_depth: 4, after_task: "sleep" },
      cluster: { redis: redis.url },
    },
    script: { tasks: [{ turns: [{ steps: paced(n / 50) }] }] },
  });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = `${await sessionOn(edge, cap.ready.session_id)}/`;
    const door = await measure("capsule door", cap.base, [cap.base + "/"], k, [cap.ready.pid]);
    const e = await measure("1 edge", cap.base, [at], k, [edge.pid]);
    return { edge: e.cpuPerEvent, door: door.cpuPerEvent, k };
  } finally {
    await edge.kill();
    await cap.close();
  }
}

export async function benchRedis(
  log: (m: string) => void,
  quick: boolean,
): Promise<{ rows: RedisRows; markdown: string }> {
  const redis = await TestRedis.start();
  const bench = client(redis.url);
  try {
    await bench.ready(5000);
    const tries = quick ? 1 : 3;
    const n = quick ? 2000 : 10_000;
    const w: number[] = [];
    const wo: number[] = [];
    for (let i = 0; i < tries; i++) {
      wo.push(await publishCost(redis, bench, n, false));
      w.push(await publishCost(redis, bench, n, true));
    }
    const publish = { with: median(w), without: median(wo), events: n };
    log(
      `  redis: publish ${publish.with.toFixed(2)} against ${publish.without.toFixed(2)} µs/event`,
    );
    const edge = await edgeCpu(redis, quick);
    log(`  redis: edge ${edge.edge.toFixed(2)} µs/event, door ${edge.door.toFixed(2)}`);
    const start = await startTimes(redis, quick ? 3 : 9);
    log(
      `  redis: start ${start.with.toFixed(0)} ms with cluster:, ${
        start.without.toFixed(0)
      } without`,
    );
    const fan = await fanout(redis, bench, quick);
    log(
      `  redis: ${fan.watchers} watchers on ${fan.sessions} sessions: ${fan.connections} connections, ${
        fan.cpuPerEvent.toFixed(2)
      } µs/event, ${fan.lost} lost`,
    );
    const rows = { publish, edge, start, fanout: fan };
    return { rows, markdown: redisMarkdown(rows) };
  } finally {
    bench.close();
    await redis.close();
  }
}

export function redisMarkdown(r: RedisRows): string {
  const f = (v: number, d = 2) => v.toFixed(d);
  return `## Beyond one machine: the Redis client (issue 32)

scripts/bench/round_redis.ts, one \`redis-server\` on loopback, each row against a baseline taken in
the same run. Publish cost: a scripted capsule's on-CPU time per event over a flood of ${
    r.publish.events.toLocaleString("en")
  } events, with \`cluster:\` (until Redis holds the last event) and without. Edge CPU: ${r.edge.k}
watchers of one session following a paced flood, on one \`mur edge\` and on the capsule's door.
Start: \`mur run\` spawn → readiness line, median of ${r.start.tries} alternated tries. Fan-out:
${
    r.fanout.watchers.toLocaleString("en")
  } watchers on ${r.fanout.sessions} sessions through one edge; the
sessions are written by the bench as a capsule's publisher writes them.

| row | measured | baseline | ratio |
| --- | ---: | ---: | ---: |
| publish: capsule CPU µs per event, with \`cluster:\` / without | ${f(r.publish.with)} | ${
    f(r.publish.without)
  } | ${f(r.publish.with / r.publish.without)}× |
| edge CPU µs per delivered event (K = ${r.edge.k}) / capsule door's | ${f(r.edge.edge)} | ${
    f(r.edge.door)
  } | ${f(r.edge.edge / r.edge.door)}× |
| \`mur run\` start ms, with \`cluster:\` / without | ${f(r.start.with, 0)} | ${
    f(r.start.without, 0)
  } | ${f(r.start.with / r.start.without)}× |
| fan-out: the edge's Redis connections for ${r.fanout.sessions} sessions | ${r.fanout.connections} | ${r.fanout.sessions} (one per session) | ${
    f(r.fanout.connections / r.fanout.sessions)
  }× |
| fan-out: edge CPU µs per delivered event (${
    r.fanout.delivered.toLocaleString("en")
  } delivered, ${r.fanout.lost} lost) | ${f(r.fanout.cpuPerEvent)} | | |
`;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const t0 = performance.now();
  const { markdown } = await benchRedis(
    (m) => console.error(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${m}`),
    quick,
  );
  console.log(markdown);
}
