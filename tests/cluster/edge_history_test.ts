/**
 * A task's history through `mur edge` (docs/protocol.md "Task history"): the capsule publishes
 * each history message once (src/cluster/keys.ts `history`), and the edge answers GetTask and
 * ListTasks with exactly the messages `historyLength` asks for, as the capsule's own door does.
 * Read with the real `@a2a-js/sdk` client over JSON-RPC, a real redis-server and edge process.
 */
import assert from "node:assert/strict";
import { Role, TaskState } from "@a2a-js/sdk";
import { rpc, startCapsule } from "../helpers/capsule.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { clusterManifest, filesBehindEdge } from "./fixtures.ts";
import { BIG } from "../door/publish_fixture.ts";
import { sdkClient, sdkMessage as msg } from "../helpers/sdk.ts";

// deno-lint-ignore no-explicit-any
const q = (x: unknown) => x as any;
// deno-lint-ignore no-explicit-any
const texts = (history: any[]) => history.map((m) => m.parts[0].content.value);

for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
  Deno.test(`edge over ${binding}: GetTask historyLength 2 after one input round is the answer and the reply; ListTasks and 0 as the capsule's door`, async () => {
    const redis = await TestRedis.start();
    const cap = await startCapsule({
      manifest: clusterManifest(redis.url, { tools: [{ builtin: "request-input" }] }),
      script: {
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
      },
    });
    const edge = await startEdgeProc(redis.url);
    try {
      const at = await sessionOn(edge, cap.ready.session_id);
      const c = await sdkClient(`${at}/`, binding);
      // Sent through the edge (forwarded to the capsule), answered through the edge.
      const waiting = q(await c.sendMessage(q({ message: msg("weather please") })));
      assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      const done = q(await c.sendMessage(q({ message: msg("Lisbon", waiting.id) })));
      assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
      // The edge reads Redis: wait until the publisher has written the completed task.
      await until("the completed task on the edge", async () => {
        const t = await rpc(at, "GetTask", { id: done.id });
        return t.result?.status.state === "TASK_STATE_COMPLETED" && t.result.history?.length === 4
          ? true
          : undefined;
      });
      const two = q(await c.getTask(q({ id: done.id, historyLength: 2 })));
      assert.deepEqual(texts(two.history), ["Lisbon", "sunny in the city"]);
      assert.equal(two.history[0].role, Role.ROLE_USER);
      assert.equal(two.history[1].role, Role.ROLE_AGENT);
      // Byte for byte what the capsule's own door answers, for unset, 0, 1, 2 and 9.
      for (const historyLength of [undefined, 0, 1, 2, 9]) {
        const params = { id: done.id, ...(historyLength === undefined ? {} : { historyLength }) };
        assert.deepEqual(
          (await rpc(at, "GetTask", params)).result,
          (await rpc(cap.base, "GetTask", params)).result,
          `historyLength ${historyLength}`,
        );
        assert.deepEqual(
          (await rpc(at, "ListTasks", { historyLength })).result,
          (await rpc(cap.base, "ListTasks", { historyLength })).result,
        );
      }
      const zero = (await rpc(at, "GetTask", { id: done.id, historyLength: 0 })).result;
      assert.equal("history" in zero, false);
      const bad = await rpc(at, "GetTask", { id: done.id, historyLength: -3 });
      assert.equal(bad.error?.code, -32602);
    } finally {
      await edge.kill();
      await cap.close();
      await redis.close();
    }
  });
}

Deno.test("edge: published files keep their parts, a 5 MiB url names the edge and downloads through it with the caller's token only", async () => {
  const { cap, edge, close } = await filesBehindEdge(["GetTask", "SendMessage"]);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    const token = cap.ready.tokens!.reader;
    const sent = await rpc(at, "SendMessage", {
      message: { messageId: "m-files", role: "ROLE_USER", parts: [{ text: "files" }] },
    }, token);
    const id = sent.result.task.id;
    assert.equal(sent.result.task.status.state, "TASK_STATE_COMPLETED", JSON.stringify(sent));
    const task = await until("the published task on the edge", async () => {
      const t = (await rpc(at, "GetTask", { id }, token)).result;
      return t?.status.state === "TASK_STATE_COMPLETED" ? t : undefined;
    });
    const own = (await rpc(cap.base, "GetTask", { id }, token)).result;
    // deno-lint-ignore no-explicit-any
    const parts = (t: any) => t.artifacts.flatMap((a: any) => a.parts);
    // Inline parts are the capsule's, byte for byte; the url names the edge instead of the door.
    const bigOwn = parts(own).find((x: { filename?: string }) => x.filename === "big.bin");
    const bigEdge = parts(task).find((x: { filename?: string }) => x.filename === "big.bin");
    assert.ok(
      String(bigOwn.url).startsWith(cap.base.replace("127.0.0.1", "localhost")),
      bigOwn.url,
    );
    assert.ok(String(bigEdge.url).startsWith(`${at}/files/`), bigEdge.url);
    assert.deepEqual(
      parts(task).filter((x: { raw?: string }) => x.raw),
      parts(own).filter((x: { raw?: string }) => x.raw),
    );
    for (const [who, status] of [[undefined, 401], [cap.ready.tokens!.lister, 403]] as const) {
      const refused = await fetch(bigEdge.url, {
        headers: who ? { authorization: `Bearer ${who}` } : {},
      });
      assert.equal(refused.status, status);
      await refused.body?.cancel();
    }
    const res = await fetch(bigEdge.url, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-length"), String(BIG));
    const body = new Uint8Array(await res.arrayBuffer());
    assert.equal(body.length, BIG);
    assert.ok(body.every((b) => b === 0x7a));
  } finally {
    await close();
  }
});

Deno.test("edge: past history_limit the capsule deletes the dropped messages from Redis; the edge answers as the door, historyDropped included", async () => {
  const redis = await TestRedis.start();
  const ask = (n: number) => ({
    steps: [{ tool_call: { id: `t${n}`, name: "request-input", input: { prompt: `Q${n}` } } }],
  });
  const cap = await startCapsule({
    manifest: clusterManifest(redis.url, {
      tools: [{ builtin: "request-input" }],
      lifecycle: { task_acceptance: "queue", after_task: "sleep", history_limit: 3 },
    }),
    script: { tasks: [{ turns: [ask(1), ask(2), ask(3), { steps: [{ text: "all answered" }] }] }] },
  });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = `${edge.url}/sessions/${cap.ready.session_id}`;
    let task = (await rpc(cap.base, "SendMessage", {
      message: { messageId: "m-0", role: "ROLE_USER", parts: [{ text: "start" }] },
    })).result.task;
    for (let i = 1; task.status.state === "TASK_STATE_INPUT_REQUIRED"; i++) {
      task = (await rpc(cap.base, "SendMessage", {
        message: {
          messageId: `m-${i}`,
          role: "ROLE_USER",
          taskId: task.id,
          parts: [{ text: `A${i}` }],
        },
      })).result.task;
    }
    assert.equal(task.status.state, "TASK_STATE_COMPLETED");
    const own = (await rpc(cap.base, "GetTask", { id: task.id })).result;
    assert.equal(own.metadata.murmur.historyDropped, 5);
    const theirs = await until("the edge to answer as the door", async () => {
      const t = (await rpc(at, "GetTask", { id: task.id })).result;
      return t?.status.state === "TASK_STATE_COMPLETED" ? t : undefined;
    });
    assert.deepEqual(theirs, own);
    // Only the kept messages are in Redis: the dropped ones were deleted as they fell off.
    const fields = await redis.cmd("HKEYS", `mur:{${cap.ready.session_id}}:history`) as string[];
    assert.deepEqual(
      fields.filter((f) => f.startsWith(`${task.id}:`)).sort(),
      [5, 6, 7].map((n) => `${task.id}:${n}`),
    );
  } finally {
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});
