/**
 * `mur ps` against a real capsule (src/cli/ps_activity.ts): each row starts with the `@N` it
 * answers to, and STATUS says whether the session is idle, working (a task runs) or needs input
 * (a task waits for an answer), read from its door. The door here is authenticated, so the
 * operator token from the running record is what makes it answer.
 */
import assert from "node:assert/strict";
import { rpc, startCapsule } from "../helpers/capsule.ts";
import { until } from "../helpers/until.ts";
import { runMur } from "./helpers.ts";

const SCRIPT = {
  tasks: [
    {
      match: "^ask",
      turns: [
        {
          steps: [{ tool_call: { id: "t1", name: "request-input", input: { prompt: "Which?" } } }],
        },
        { steps: [{ text: "thanks" }] },
      ],
    },
    { match: "^slow", turns: [{ steps: [{ delay_ms: 600_000 }, { text: "never" }] }] },
  ],
};

const msg = (text: string, taskId?: string) => ({
  message: {
    role: "ROLE_USER",
    messageId: crypto.randomUUID(),
    parts: [{ text }],
    ...(taskId ? { taskId } : {}),
  },
});

Deno.test("mur ps: @N on each row; STATUS idle, needs input, working as the session's tasks are", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "busy",
      version: "1",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
      tools: [{ builtin: "request-input" }],
      network: { authentication: { scheme: "bearer", credentials: {} } },
    },
    script: SCRIPT,
  });
  try {
    const token = (cap.ready as unknown as { tokens: { operator: string } }).tokens.operator;
    const sid = (cap.ready as unknown as { session_id: string }).session_id;
    const call = (method: string, params: unknown) => rpc(cap.base, method, params, token);
    const status = async () => {
      const ps = await runMur(["ps"], { MURMUR_HOME: cap.home });
      assert.equal(ps.code, 0, ps.stderr);
      const [head, row] = ps.stdout.split("\n");
      assert.match(head, /^@N {4}SESSION /, JSON.stringify(ps));
      const cells = row.split(/\s{2,}/);
      assert.deepEqual(cells.slice(0, 3), ["@1", sid, "busy@1"]);
      return cells[3];
    };
    assert.equal(await status(), "idle");

    const asked = await call("SendMessage", msg("ask me"));
    assert.ok(asked.result, JSON.stringify(asked));
    const task = asked.result.task;
    assert.equal(task.status.state, "TASK_STATE_INPUT_REQUIRED", JSON.stringify(asked));
    assert.equal(await status(), "needs input");

    const done = await call("SendMessage", msg("this one", task.id));
    assert.equal(done.result.task.status.state, "TASK_STATE_COMPLETED", JSON.stringify(done));
    assert.equal(await status(), "idle");

    const slow = call("SendMessage", msg("slow one")).catch(() => null);
    await until(
      "the slow task to be working",
      async () => {
        const r = await call("ListTasks", { status: "TASK_STATE_WORKING" });
        return r.result.totalSize > 0 || undefined;
      },
      30_000,
      50,
    );
    assert.equal(await status(), "working");
    await cap.close();
    await slow;
  } finally {
    await cap.close();
  }
});
