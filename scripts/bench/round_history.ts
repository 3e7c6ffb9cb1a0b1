/**
 * The task-history row (docs/protocol.md "Task history"): a real `mur run` of a scripted capsule
 * holding two tasks that asked for input over and over — one with 1,000 messages in its history
 * (the user's message, 499 questions and answers, the reply), one with 10 — and GetTask
 * `historyLength: 10` on each, N times over one keep-alive connection, sequentially. A history
 * read copies only the messages it returns, so the two medians should be the same; a door that
 * copied (or serialized) the whole history per read would answer the long task ~100× slower.
 *
 *   deno run -A scripts/bench/round_history.ts [--quick]   prints the section on its own
 */
import { stringify } from "yaml";
import { kill, murCmd, spawnReady } from "./procs.ts";
import { median } from "./stats.ts";

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

/** µs per GetTask historyLength 10, median of `n` sequential reads. */
async function readTimes(base: string, id: string, n: number): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "GetTask",
    params: { id, historyLength: 10 },
  });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(base, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body,
    });
    const got = await res.json();
    times.push((performance.now() - t0) * 1000);
    if (got.result?.history?.length !== 10) {
      throw new Error(`GetTask answered ${JSON.stringify(got)}`);
    }
  }
  return median(times);
}

export async function benchHistory(log: (m: string) => void, quick: boolean): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-bench-history-" });
  const reads = quick ? 300 : 3000;
  try {
    const script = { tasks: [askingTask("^long", 499), askingTask("^short", 4)] };
    await Deno.writeTextFile(`${dir}/script.yaml`, stringify(script));
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      stringify({
        name: "bench-history",
        version: "0.1.0",
        inference: { script: "script.yaml", max_turns: 1000 },
        lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
        tools: [{ builtin: "request-input" }],
      }),
    );
    const cap = await spawnReady({
      name: "mur",
      cmd: murCmd(`${dir}/murmur.yaml`, `${dir}/work`),
      env: { NO_COLOR: "1", MURMUR_HOME: `${dir}/home` },
      readyTimeoutMs: 30_000,
    });
    try {
      const base = String(cap.ready.url).replace("localhost", "127.0.0.1");
      const url = base.startsWith("http") ? base : `http://${base}`;
      log("history: a 1,000-message task and a 10-message one");
      const long = await runTask(url, "long");
      const short = await runTask(url, "short");
      // Warm both paths before measuring (the first reads compile the code).
      await readTimes(url, long.id, 50);
      await readTimes(url, short.id, 50);
      const us = {
        long: await readTimes(url, long.id, reads),
        short: await readTimes(url, short.id, reads),
      };
      return [
        "## Task history (GetTask historyLength 10)",
        "",
        `Median of ${reads} sequential GetTask calls with \`historyLength: 10\` (one connection, loopback), on a task whose history holds ${long.messages} messages and on one holding ${short.messages}; both answer 10 messages (scripts/bench/round_history.ts).`,
        "",
        "| task history | GetTask historyLength 10, median |",
        "| ------------ | -------------------------------- |",
        `| ${long.messages} messages | ${us.long.toFixed(0)} µs |`,
        `| ${short.messages} messages | ${us.short.toFixed(0)} µs |`,
        `| ratio | ${(us.long / us.short).toFixed(2)}× |`,
        "",
      ].join("\n");
    } finally {
      kill(cap.pid);
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  console.log(await benchHistory((m) => console.error(m), Deno.args.includes("--quick")));
}
