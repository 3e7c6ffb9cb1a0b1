/**
 * A task's cancel reaches its MCP call through `mur run`: the scripted model calls a hostile
 * server's tool that never answers; `CancelTask` at the door ends the task canceled, the server is
 * sent `notifications/cancelled` for that call's request, and the next task of the session calls
 * the same server and gets its answer.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../../helpers/capsule.ts";
import { follow } from "../../crew/helpers.ts";
import { until } from "../../helpers/until.ts";
import { hostileArgv } from "./servers.ts";

Deno.test("CancelTask cancels the task's MCP call with notifications/cancelled; the session goes on", async () => {
  const record = await Deno.makeTempFile({ prefix: "mur-mcp-record-" });
  const argv = hostileArgv("ok", record);
  const cap = await startCapsule({
    manifest: {
      name: "mcp-cancel",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      // The fake server runs on this Deno, whose binary lives under the operator's HOME, which
      // containment does not mount (docs/containment.md): these tests are about MCP, not it.
      containment: "advisory",
      mcp_servers: { h: { command: argv[0], args: argv.slice(1), timeout_secs: 600 } },
    },
    script: {
      tasks: [
        {
          match: "^slow",
          turns: [
            { steps: [{ tool_call: { id: "c_slow", name: "mcp__h__slow", input: {} } }] },
            { steps: [{ text: "never" }] },
          ],
        },
        {
          match: "^echo",
          turns: [
            {
              steps: [{ tool_call: { id: "c_echo", name: "mcp__h__echo", input: { text: "é" } } }],
            },
            { steps: [{ text: "echoed" }] },
          ],
        },
      ],
    },
  });
  try {
    const slow = follow(cap, "slow one");
    const messages = () =>
      Deno.readTextFile(record).then((t) =>
        t.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l))
      );
    const call = await until(
      "the call to reach the server",
      async () =>
        (await messages()).find((m) => m.method === "tools/call" && m.params.name === "slow"),
    );
    await until("the task id", () => slow.seen.taskId || undefined);
    const canceled = await cap.rpc("CancelTask", { id: slow.seen.taskId }) as {
      result: { status: { state: string } };
    };
    assert.equal(canceled.result.status.state, "TASK_STATE_CANCELED");
    await slow.done;
    assert.equal(slow.seen.final, "TASK_STATE_CANCELED");
    const cancel = await until(
      "notifications/cancelled",
      async () => (await messages()).find((m) => m.method === "notifications/cancelled"),
    );
    assert.equal(cancel.params.requestId, call.id);

    const next = follow(cap, "echo please");
    await next.done;
    assert.equal(next.seen.final, "TASK_STATE_COMPLETED");
    const trace = (await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const calls = trace.filter((l) => l.event_type === "tool_call");
    assert.deepEqual(calls.map((c) => [c.tool_name, c.status, c.server]), [
      ["mcp__h__slow", "error", "h"],
      ["mcp__h__echo", "ok", "h"],
    ]);
  } finally {
    await cap.close();
    await Deno.remove(record);
  }
});
