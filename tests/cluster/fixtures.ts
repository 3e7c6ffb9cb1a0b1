/** The capsule the cluster tests publish: a queue of tasks, a flood, a slow task. */
import { startCapsule } from "../helpers/capsule.ts";
import { startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { publishingCapsule } from "../door/publish_fixture.ts";

export const FLOOD_SCRIPT = {
  tasks: [
    { match: "slow", turns: [{ steps: [{ text: "slow " }, { delay_ms: 60_000 }] }] },
    { match: "deluge", turns: [{ steps: [{ text: "x", repeat: 40_000 }] }] },
    { match: "flood", turns: [{ steps: [{ text: "x", repeat: 3000 }] }] },
    { turns: [{ steps: [{ text: "hello" }] }] },
  ],
};

export function clusterManifest(redisUrl: string, extra: Record<string, unknown> = {}) {
  return {
    name: "published",
    version: "0.1.0",
    lifecycle: { task_acceptance: "queue", queue_depth: 8, after_task: "sleep" },
    cluster: { redis: redisUrl },
    ...extra,
  };
}

/**
 * The publishing capsule (tests/door/publish_fixture.ts) on a real Redis with a `reader`
 * credential of `readerScopes` (and a `lister`), signed with a cluster key, and one `mur edge`
 * serving it: what the edge's published-files tests start. `close()` stops all three.
 */
export async function filesBehindEdge(readerScopes: string[]) {
  const redis = await TestRedis.start();
  const key = "k".repeat(40);
  const p = publishingCapsule();
  const cap = await startCapsule({
    manifest: clusterManifest(redis.url, {
      ...p.extra,
      inference: p.inference,
      network: {
        authentication: {
          credentials: { reader: { scopes: readerScopes }, lister: { scopes: ["ListTasks"] } },
        },
      },
    }),
    script: p.script,
    env: { MURMUR_CLUSTER_KEY: key },
  }).catch(async (e) => {
    await redis.close();
    throw e;
  });
  const edge = await startEdgeProc(redis.url, { MURMUR_CLUSTER_KEY: key }).catch(async (e) => {
    await cap.close();
    await redis.close();
    throw e;
  });
  return {
    redis,
    cap,
    edge,
    async close() {
      await edge.kill();
      await cap.close();
      await redis.close();
    },
  };
}
