/** The capsule the cluster tests publish: a queue of tasks, a flood, a slow task. */

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
