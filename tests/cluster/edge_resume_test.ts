/**
 * A resumed session's old tasks through `mur edge` (docs/protocol.md "Task history", "Across
 * --resume"): a capsule publishing to a real redis-server runs a task with an input round and is
 * stopped; `mur run --resume` on the same workdir publishes the old task under its own session id,
 * and the edge answers GetTask historyLength 2 with the user's answer and the agent's reply, read by
 * the real `@a2a-js/sdk` client on JSON-RPC and REST, as the resumed capsule's door does.
 */
import assert from "node:assert/strict";
import { Role, TaskState } from "@a2a-js/sdk";
import { type Capsule, rpc, startCapsule, writeCapsule } from "../helpers/capsule.ts";
import { q, sdkClient } from "../helpers/sdk.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { clusterManifest } from "./fixtures.ts";

// deno-lint-ignore no-explicit-any
const texts = (history: any[]) => history.map((m) => m.parts[0].content.value);

/** A message as the JSON-RPC binding carries it. */
function msg(text: string, taskId?: string) {
  return {
    messageId: crypto.randomUUID(),
    role: "ROLE_USER",
    parts: [{ text }],
    ...(taskId ? { taskId } : {}),
  };
}

const sdk = (at: string, binding: "JSONRPC" | "HTTP+JSON") => sdkClient(`${at}/`, binding);

Deno.test("edge: a resumed session's old task answers GetTask historyLength 2 on JSON-RPC and REST", async () => {
  const redis = await TestRedis.start();
  const script = {
    tasks: [{
      turns: [
        {
          steps: [{
            tool_call: { id: "t1", name: "request-input", input: { prompt: "Which city?" } },
          }],
        },
        { steps: [{ text: "sunny in the city" }] },
      ],
    }],
  };
  const manifest = clusterManifest(redis.url, { tools: [{ builtin: "request-input" }] });
  const dir = await writeCapsule({ manifest, script });
  const workdir = `${dir}/wd`;
  const caps: Capsule[] = [];
  const edge = await startEdgeProc(redis.url);
  try {
    const first = await startCapsule({ manifest, dir, args: ["--workdir", workdir] });
    caps.push(first);
    const waiting = (await rpc(first.base, "SendMessage", { message: msg("weather please") }))
      .result.task;
    const done = (await rpc(first.base, "SendMessage", { message: msg("Lisbon", waiting.id) }))
      .result.task;
    assert.equal(done.status.state, "TASK_STATE_COMPLETED");
    first.kill("SIGTERM");
    await first.finished();

    const second = await startCapsule({ manifest, dir, args: ["--workdir", workdir, "--resume"] });
    caps.push(second);
    const at = await sessionOn(edge, second.ready.session_id);
    await until("the old task on the edge", async () => {
      const t = await rpc(at, "GetTask", { id: done.id });
      return t.result?.history?.length === 4 ? true : undefined;
    });
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      const c = await sdk(at, binding);
      const two = q(await c.getTask(q({ id: done.id, historyLength: 2 })));
      assert.equal(two.status.state, TaskState.TASK_STATE_COMPLETED, binding);
      assert.deepEqual(texts(two.history), ["Lisbon", "sunny in the city"], binding);
      assert.equal(two.history[1].role, Role.ROLE_AGENT);
    }
    for (const historyLength of [undefined, 0, 2]) {
      const params = { id: done.id, ...(historyLength === undefined ? {} : { historyLength }) };
      assert.deepEqual(
        (await rpc(at, "GetTask", params)).result,
        (await rpc(second.base, "GetTask", params)).result,
      );
    }
  } finally {
    await edge.kill();
    for (const c of caps) {
      c.kill("SIGKILL");
      await c.finished();
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await redis.close();
  }
});
