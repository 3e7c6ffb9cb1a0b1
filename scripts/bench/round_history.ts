/**
 * The task-history row (docs/protocol.md "Task history"): a real `mur run` of a scripted capsule
 * holding two tasks that asked for input over and over — one with 1,000 messages in its history
 * (the user's message, 499 questions and answers, the reply), one with 10 — and GetTask
 * `historyLength: 10` on each, N times, sequentially, on its door and on a `mur edge` reading the
 * session from Redis (where each message is a field of its own: src/cluster/keys.ts). A history
 * read copies only the messages it returns, so the two medians should be the same; a door that
 * copied (or serialized) the whole history per read would answer the long task ~100× slower.
 *
 *   deno run -A scripts/bench/round_history.ts [--quick]   prints the section on its own
 */
import { median } from "./stats.ts";
import { startCapsule } from "../../tests/helpers/capsule.ts";
import { type EdgeProc, startEdgeProc } from "../../tests/helpers/edge.ts";
import { TestRedis } from "../../tests/helpers/redis.ts";

/** One task that asks `rounds` questions (request-input), then answers. */
function askingTask(match: string, rounds: number) {
  const turns: unknown[] = [];
  for (let i = 0; i < rounds; i++) {
    turns.push({
      steps: [{ tool_call: { id: `q${i}`, name: "request-input", input: { prompt: `Q${i}` } } }],
    });
  }
  turns.push({ steps: [{ text: "answered" }] });
  return { match, turns };
}

// deno-lint-ignore no-explicit-any
async function rpc(base: string, method: string, params: unknown): Promise<Record<string, any>> {
  const res = await fetch(base, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return await res.json();
}

/** Drives a task through its input rounds; returns its id and history length. */
async function runTask(base: string, text: string): Promise<{ id: string; messages: number }> {
  let task = (await rpc(base, "SendMessage", {
    message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] },
  })).result.task;
  for (let i = 0; task.status.state === "TASK_STATE_INPUT_REQUIRED"; i++) {
    task = (await rpc(base, "SendMessage", {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        taskId: task.id,
        parts: [{ text: `A${i}` }],
      },
      configuration: { historyLength: 0 },
    })).result.task;
  }
  const full = (await rpc(base, "GetTask", { id: task.id })).result;
  return { id: task.id, messages: full.history.length };
}

/**
 * µs per GetTask historyLength 10 on each task, median of `n` reads each, the two tasks read in
 * turn (long, short, long, …) so that a machine whose load drifts weighs on both alike.
 */
async function readTimes(base: string, ids: string[], n: number): Promise<number[]> {
  const times = ids.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < ids.length; k++) {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "GetTask",
        params: { id: ids[k], historyLength: 10 },
      });
      const t0 = performance.now();
      const res = await fetch(base, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body,
      });
      const got = await res.json();
      times[k].push((performance.now() - t0) * 1000);
      if (got.result?.history?.length !== 10) {
        throw new Error(`GetTask answered ${JSON.stringify(got)}`);
      }
    }
  }
  return times.map(median);
}

export async function benchHistory(log: (m: string) => void, quick: boolean): Promise<string> {
  const reads = quick ? 300 : 3000;
  const redis = await TestRedis.start();
  const cap = await startCapsule({
    manifest: {
      name: "bench-history",
      version: "0.1.0",
      inference: { max_turns: 1000 },
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
      tools: [{ builtin: "request-input" }],
      cluster: { redis: redis.url },
    },
    script: { tasks: [askingTask("^long", 499), askingTask("^short", 4)] },
  });
  let edge: EdgeProc | null = null;
  try {
    const url = cap.base;
    log("history: a 1,000-message task and a 10-message one");
    const long = await runTask(url, "long");
    const short = await runTask(url, "short");
    edge = await startEdgeProc(redis.url);
    const at = `${edge.url}/sessions/${cap.ready.session_id}`;
    // The edge reads Redis: both tasks there, ended, before it is measured.
    for (const id of [long.id, short.id]) {
      for (let i = 0; i < 200; i++) {
        const t = (await rpc(at, "GetTask", { id, historyLength: 10 })).result;
        if (t?.status.state === "TASK_STATE_COMPLETED" && t.history?.length === 10) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const row = async (base: string) => {
      // Warm both paths before measuring (the first reads compile the code).
      await readTimes(base, [long.id, short.id], 50);
      const [l, s] = await readTimes(base, [long.id, short.id], reads);
      return { long: l, short: s };
    };
    const door = await row(url);
    const viaEdge = await row(at);
    return [
      "## Task history (GetTask historyLength 10)",
      "",
      `Median of ${reads} sequential GetTask calls with \`historyLength: 10\` (one client, loopback), on a task whose history holds ${long.messages} messages and on one holding ${short.messages}; both answer 10 messages. On the capsule's door, and on one \`mur edge\` reading the same session from Redis (scripts/bench/round_history.ts).`,
      "",
      "| served by | 1,000-message task | 10-message task | ratio |",
      "| --------- | -----------------: | --------------: | ----: |",
      `| the capsule's door | ${door.long.toFixed(0)} µs | ${door.short.toFixed(0)} µs | ${
        (door.long / door.short).toFixed(2)
      }× |`,
      `| mur edge (Redis) | ${viaEdge.long.toFixed(0)} µs | ${viaEdge.short.toFixed(0)} µs | ${
        (viaEdge.long / viaEdge.short).toFixed(2)
      }× |`,
      "",
    ].join("\n");
  } finally {
    await edge?.kill();
    await cap.close();
    await redis.close();
  }
}

if (import.meta.main) {
  console.log(await benchHistory((m) => console.error(m), Deno.args.includes("--quick")));
}
