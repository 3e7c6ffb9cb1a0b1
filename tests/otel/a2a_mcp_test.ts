/**
 * A2A and MCP spans to a real OTLP receiver (docs/opentelemetry.md "A2A spans", docs/mcp.md): a
 * scripted capsule exporting to ./receiver.ts calls an MCP server's tool and delegates a task to
 * a child capsule. Its door's methods are `a2a.server` spans (kind SERVER, named for the method,
 * with the task's id, state, message id and context); the delegation's requests to the child's
 * door are `a2a.client` spans (kind CLIENT) under the delegating task; the MCP call's
 * `capsule.tool_call` span (`execute_tool`) names the server and the MCP method, its progress
 * events on the turn.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { startCapsule } from "../helpers/capsule.ts";
import { until } from "../helpers/until.ts";
import { follow } from "../crew/helpers.ts";
import { hostileArgv } from "../tools/mcp/servers.ts";
import { startReceiver } from "./receiver.ts";

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

Deno.test("door methods, a delegation's requests and an MCP call reach the collector as spans", async () => {
  const receiver = startReceiver();
  const argv = hostileArgv("ok", "/dev/null");
  const cap = await startCapsule({
    manifest: {
      name: "parent",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      // The fake server runs on this Deno, whose binary lives under the operator's HOME, which
      // containment does not mount (docs/containment.md): these tests are about MCP, not it.
      containment: "advisory",
      capabilities: { spawn: { allow: ["child"] } },
      observability: { otel_endpoint: `${receiver.url}/` },
      mcp_servers: { h: { command: argv[0], args: argv.slice(1) } },
    },
    script: {
      tasks: [{
        match: "delegate",
        turns: [
          {
            steps: [
              { tool_call: { id: "c_echo", name: "mcp__h__echo", input: { text: "hi" } } },
              {
                tool_call: {
                  name: "delegate-task",
                  input: { capsule: "child", task: "summarise the notes" },
                },
              },
            ],
          },
          { steps: [{ text: "waiting for the child" }] },
          { steps: [{ text: "Parent: done." }] },
        ],
      }],
    },
    files: {
      "child/murmur.yaml": stringify({
        name: "child",
        version: "0.1.0",
        inference: { transport: "http", driver: "scripted", script: "script.yaml" },
        exports: { peer_tasks: { accept: true } }, // takes its starter's task (docs/door.md)
      }),
      "child/script.yaml": stringify({
        tasks: [{ turns: [{ steps: [{ text: "CHILD summary" }] }] }],
      }),
    },
  });
  try {
    const f = follow(cap, "delegate this");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const got = await cap.rpc("GetTask", { id: f.seen.taskId }) as {
      result: { status: { state: string } };
    };
    assert.equal(got.result.status.state, "TASK_STATE_COMPLETED");
    // The session ends (SIGTERM): its spans are flushed before session_end.
    cap.kill("SIGTERM");
    await cap.finished();
    const spans = await until(
      "the session span",
      () => receiver.spans.some((s) => s.name === "capsule.session") ? receiver.spans : undefined,
    );
    const task = spans.find((s) => s.name === "capsule.task")!;

    // a2a.server: the door's SendStreamingMessage and GetTask.
    const send = spans.find((s) =>
      s.name === "SendStreamingMessage" && s.kind === SPAN_KIND_SERVER
    )!;
    assert.ok(send, spans.map((s) => s.name).join(", "));
    assert.equal(send.kind, SPAN_KIND_SERVER);
    assert.equal(send.attributes["a2a.method.name"], "SendStreamingMessage");
    assert.match(String(send.attributes["a2a.message.id"]), /^m-/);
    const get = spans.find((s) => s.name === "GetTask" && s.kind === SPAN_KIND_SERVER)!;
    assert.equal(get.attributes["a2a.method.name"], "GetTask");
    assert.equal(get.attributes["a2a.task.id"], f.seen.taskId);
    assert.equal(get.attributes["a2a.task.state"], "TASK_STATE_COMPLETED");
    assert.equal(get.attributes["gen_ai.conversation.id"], f.seen.contextId);

    // a2a.client: the delegation's SendMessage to the child, under the delegating task.
    const out = spans.find((s) => s.name === "SendMessage")!;
    assert.ok(out, spans.map((s) => s.name).join(", "));
    assert.equal(out.kind, SPAN_KIND_CLIENT);
    assert.equal(out.parentSpanId, task.spanId);
    assert.equal(out.attributes["a2a.method.name"], "SendMessage");
    assert.match(String(out.attributes["a2a.message.id"]), /^msg_dlg_/);
    assert.equal(typeof out.attributes["a2a.task.id"], "string");
    assert.equal(out.attributes["server.address"], "127.0.0.1");
    const follows = spans.filter((s) =>
      (s.name === "SubscribeToTask" || s.name === "GetTask") && s.kind === SPAN_KIND_CLIENT &&
      s.attributes["a2a.task.id"] === out.attributes["a2a.task.id"]
    );
    assert.ok(follows.length >= 1, "the child's task was followed");

    // execute_tool for the MCP call, naming the server.
    const tool = spans.find((s) =>
      s.name === "capsule.tool_call" && s.attributes["gen_ai.tool.name"] === "mcp__h__echo"
    )!;
    assert.equal(tool.attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(tool.attributes["mcp.method.name"], "tools/call");
    assert.equal(tool.attributes["mur.mcp.server"], "h");
  } finally {
    await cap.close();
    await receiver.close();
  }
});
