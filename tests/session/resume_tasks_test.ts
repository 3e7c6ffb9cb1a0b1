/**
 * A resumed session answers the tasks of the session it resumes (docs/protocol.md "Task history",
 * "Across --resume"): a task that asked for input once and published a url file runs in a real
 * `mur run`, the capsule is stopped, `mur run --resume` starts on the same workdir, and the real
 * `@a2a-js/sdk` client reads GetTask historyLength 2 (the user's answer and the agent's reply) on
 * JSON-RPC and REST, ListTasks lists it, and its file downloads from the new door. A task left
 * waiting for input when the resumed session is SIGKILLed is answered as failed by a resume of the
 * resume, which still answers the first task (carried from journal to journal).
 */
import assert from "node:assert/strict";
import { Role, TaskState } from "@a2a-js/sdk";
import { type Capsule, startCapsule, writeCapsule } from "../helpers/capsule.ts";
import { loopback, q, sdkClient as client, sdkMessage } from "../helpers/sdk.ts";

function msg(text: string, taskId?: string) {
  return { ...sdkMessage(text), ...(taskId ? { taskId } : {}) };
}

// deno-lint-ignore no-explicit-any
const texts = (history: any[]) =>
  history.map((m) =>
    `${m.role === Role.ROLE_USER ? "user" : "agent"}: ${m.parts[0].content.value}`
  );

/** 100 KiB of multi-byte text: past inline_max_bytes (1 KiB here), so a `url` part. */
const BIG_TEXT = "é✓".repeat(20 * 1024);

const manifest = {
  name: "resumed-tasks",
  version: "0.1.0",
  lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
  outputs: { inline_max_bytes: 1024 },
  inference: { max_turns: 10 },
  tools: [
    { builtin: "request-input" },
    { builtin: "publish" },
  ],
};
const script = {
  tasks: [
    {
      match: "^hold",
      turns: [{
        steps: [{
          tool_call: { id: "h1", name: "request-input", input: { prompt: "Still there?" } },
        }],
      }],
    },
    {
      turns: [
        { steps: [{ tool_call: { id: "p1", name: "publish", input: { path: "big.txt" } } }] },
        {
          steps: [{
            tool_call: { id: "t1", name: "request-input", input: { prompt: "Which city?" } },
          }],
        },
        { steps: [{ text: "Weather for the city: sunny" }] },
      ],
    },
  ],
};

async function start(dir: string, workdir: string, resume: boolean): Promise<Capsule> {
  return await startCapsule({
    manifest,
    dir,
    args: ["--workdir", workdir, ...(resume ? ["--resume"] : [])],
  });
}

/** Ends a capsule by its pid without removing its folder (the next session runs there). */
async function end(cap: Capsule, signal: Deno.Signal): Promise<void> {
  cap.kill(signal);
  await cap.finished();
}

async function fileOf(task: unknown): Promise<string> {
  // deno-lint-ignore no-explicit-any
  const art = q(task).artifacts.find((a: any) => a.name === "big.txt");
  const url = art.parts[0].content.value as string;
  const res = await loopback(url);
  assert.equal(res.status, 200, url);
  return await res.text();
}

Deno.test("--resume answers the old session's tasks: GetTask historyLength 2 on JSON-RPC and REST, ListTasks, its url file; a task killed mid-wait is failed; a resume of the resume still answers", async () => {
  const dir = await writeCapsule({ manifest, script });
  const workdir = `${dir}/wd`;
  await Deno.mkdir(workdir);
  await Deno.writeTextFile(`${workdir}/big.txt`, BIG_TEXT);
  const caps: Capsule[] = [];
  try {
    // Session 1: one task with an input round and a published file, then a clean stop.
    const first = await start(dir, workdir, false);
    caps.push(first);
    const c1 = await client(first.base, "JSONRPC");
    const waiting = q(await c1.sendMessage(q({ message: msg("weather please") })));
    assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = q(await c1.sendMessage(q({ message: msg("Lisbon", waiting.id) })));
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    const id = done.id as string;
    assert.equal(await fileOf(done), BIG_TEXT);
    await end(first, "SIGTERM");

    // Session 2, resumed: the old task is answered as it ended, on both bindings.
    const second = await start(dir, workdir, true);
    caps.push(second);
    assert.notEqual(second.ready.session_id, first.ready.session_id);
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      const c = await client(second.base, binding);
      const two = q(await c.getTask(q({ id, historyLength: 2 })));
      assert.equal(two.status.state, TaskState.TASK_STATE_COMPLETED, binding);
      assert.deepEqual(texts(two.history), [
        "user: Lisbon",
        "agent: Weather for the city: sunny",
      ], binding);
      const all = q(await c.getTask(q({ id })));
      assert.deepEqual(texts(all.history), [
        "user: weather please",
        "agent: Which city?",
        "user: Lisbon",
        "agent: Weather for the city: sunny",
      ], binding);
      const none = q(await c.getTask(q({ id, historyLength: 0 })));
      assert.deepEqual(none.history, [], binding);
      // The url names the resumed session's door, which serves the old session's copy.
      const url = q(all).artifacts.find((a: { name: string }) => a.name === "big.txt")
        .parts[0].content.value as string;
      assert.ok(url.includes(second.ready.url.split(":")[1]), url);
      assert.equal(await fileOf(all), BIG_TEXT);
      const page = q(
        await c.listTasks(q({ status: TaskState.TASK_STATE_UNSPECIFIED, historyLength: 1 })),
      );
      assert.deepEqual(page.tasks.map((t: { id: string }) => t.id), [id], binding);
      assert.deepEqual(texts(page.tasks[0].history), ["agent: Weather for the city: sunny"]);
    }
    // A task of the resumed session that is still waiting when the runtime is killed.
    const c2 = await client(second.base, "JSONRPC");
    const held = q(await c2.sendMessage(q({ message: msg("hold on") })));
    assert.equal(held.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    await end(second, "SIGKILL");

    // Session 3, a resume of the resume: both tasks, the killed one failed with the reason.
    const third = await start(dir, workdir, true);
    caps.push(third);
    const c3 = await client(third.base, "HTTP+JSON");
    const old = q(await c3.getTask(q({ id, historyLength: 2 })));
    assert.deepEqual(texts(old.history), ["user: Lisbon", "agent: Weather for the city: sunny"]);
    assert.equal(await fileOf(old), BIG_TEXT);
    const lost = q(await c3.getTask(q({ id: held.id })));
    assert.equal(lost.status.state, TaskState.TASK_STATE_FAILED);
    assert.match(
      lost.status.message.parts[0].content.value,
      new RegExp(`session ${second.ready.session_id} that ran it ended before the task did`),
    );
    assert.deepEqual(texts(lost.history), ["user: hold on", "agent: Still there?"]);
    const page = q(await c3.listTasks(q({ status: TaskState.TASK_STATE_UNSPECIFIED })));
    assert.deepEqual(page.tasks.map((t: { id: string }) => t.id).sort(), [id, held.id].sort());
  } finally {
    for (const c of caps) await end(c, "SIGKILL");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
