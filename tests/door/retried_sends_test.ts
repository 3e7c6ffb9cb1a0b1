/**
 * `network.retried_sends` on the wire (docs/door.md, docs/manifest.md "network"): with the
 * default (`replay`) a send whose messageId the caller already sent answers the first task; with
 * `new_task` every send starts its own task. Both sends, both bindings (JSON-RPC and HTTP+JSON).
 */
import assert from "node:assert/strict";
import { collect, streamRequest } from "../helpers/sse.ts";
import { call, capsule, message, post } from "./helpers.ts";

type Task = { id: string; status: { state: string } };
type Params = ReturnType<typeof message>;

const JSON_V = { "content-type": "application/json", "a2a-version": "1.0" };

/** One send of `params` by binding and method; the task it answered (the first event of a stream). */
const SENDS: Record<string, (base: string, params: Params) => Promise<Task>> = {
  "JSON-RPC SendMessage": async (base, params) => {
    const a = await call(base, "SendMessage", params);
    assert.ok(a.json.result?.task, a.text);
    return a.json.result.task;
  },
  "JSON-RPC SendStreamingMessage": async (base, params) => {
    const events = await collect(await streamRequest(base, "SendStreamingMessage", params));
    const first = events[0].data.result as { task?: Task };
    assert.ok(first?.task, JSON.stringify(events[0]));
    return first.task;
  },
  "HTTP+JSON message:send": async (base, params) => {
    const a = await post(base, JSON.stringify(params), JSON_V, "/message:send");
    assert.equal(a.status, 200, a.text);
    assert.ok(a.json.task, a.text);
    return a.json.task;
  },
  "HTTP+JSON message:stream": async (base, params) => {
    const res = await fetch(base + "/message:stream", {
      method: "POST",
      headers: JSON_V,
      body: JSON.stringify(params),
    });
    assert.equal(res.status, 200);
    const events = await collect(res);
    const first = events[0].data as { task?: Task };
    assert.ok(first?.task, JSON.stringify(events[0]));
    return first.task;
  },
};

const total = async (base: string) =>
  (await call(base, "ListTasks", {})).json.result.totalSize as number;

for (const mode of ["replay", "new_task", undefined] as const) {
  Deno.test(`retried_sends: ${mode ?? "absent (replay)"} — the same messageId sent twice on every send`, async () => {
    const cap = await capsule({
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      ...(mode ? { network: { retried_sends: mode } } : {}),
      script: { tasks: [{ turns: [{ steps: [{ text: "done" }] }] }] },
    });
    try {
      for (const [name, send] of Object.entries(SENDS)) {
        const params = message("hello", { messageId: `m-${crypto.randomUUID()}` });
        const before = await total(cap.base);
        const first = await send(cap.base, params);
        const again = await send(cap.base, params);
        if (mode === "new_task") {
          assert.notEqual(again.id, first.id, `${name}: a second task`);
          assert.equal(await total(cap.base), before + 2, name);
        } else {
          assert.equal(again.id, first.id, `${name}: the first task`);
          assert.equal(await total(cap.base), before + 1, name);
        }
      }
    } finally {
      await cap.close();
    }
  });
}

Deno.test("retried_sends: a value other than replay or new_task is refused before the door opens", async () => {
  const cap = capsule({ network: { retried_sends: "sometimes" } });
  await assert.rejects(cap, /retried_sends/);
});
