/**
 * An MCP tool under the manifest's `approvals:` policy (docs/approvals.md, docs/mcp.md "Calls"):
 * the call of `mcp__h__echo` waits in TASK_STATE_INPUT_REQUIRED and the server is not called until
 * `mur approve` answers; then it runs and the task completes. Naming a declared server's tool in
 * `approvals.tools` is no W-MAN-010 warning.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../../helpers/capsule.ts";
import { runMur } from "../../cli/helpers.ts";
import { submit, waitTask } from "../../door/helpers.ts";
import { hostileArgv } from "./servers.ts";

const pending = (t: { status: { state: string } }) =>
  t.status.state === "TASK_STATE_INPUT_REQUIRED";
const ended = (t: { status: { state: string } }) =>
  ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(t.status.state);

Deno.test("an MCP tool call waits for approval, and runs once approved", async () => {
  const record = await Deno.makeTempFile({ prefix: "mur-mcp-approval-" });
  const argv = hostileArgv("ok", record);
  const cap = await startCapsule({
    manifest: {
      name: "gated-mcp",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      // The fake server runs on this Deno, whose binary lives under the operator's HOME, which
      // containment does not mount (docs/containment.md): these tests are about MCP, not it.
      containment: "advisory",
      mcp_servers: { h: { command: argv[0], args: argv.slice(1) } },
      approvals: { tools: { mcp__h__echo: { approve: "ask" } } },
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "c1", name: "mcp__h__echo", input: { text: "ok?" } } }] },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  const calls = async () =>
    (await Deno.readTextFile(record)).split("\n").filter((l) => l.includes('"tools/call"')).length;
  try {
    const op = cap.ready.tokens?.operator;
    const task = await submit(cap.base, "echo it", op ? { token: op } : {});
    await waitTask(cap.base, task.id, pending, 30_000, op);
    assert.equal(await calls(), 0, "the server is not called before the approval");
    const ok = await runMur(["approve", task.id.slice(-6)], { MURMUR_HOME: cap.home });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^approved ${task.id}: mcp__h__echo`));
    const done = await waitTask(cap.base, task.id, ended, 30_000, op);
    assert.equal(done.status.state, "TASK_STATE_COMPLETED");
    assert.equal(await calls(), 1);
    cap.kill("SIGTERM");
    const end = await cap.finished();
    assert.ok(!end.stderr.includes("W-MAN-010"), end.stderr);
  } finally {
    await cap.close();
    await Deno.remove(record);
  }
});
