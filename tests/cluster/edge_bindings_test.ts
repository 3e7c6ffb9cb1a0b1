/**
 * Every binding an edge's card names, answered (docs/edge.md "What an edge serves"): the card
 * lists JSON-RPC and HTTP+JSON at the edge's URL for the session; the real `@a2a-js/sdk` client,
 * given only its REST transport and preferring it, sends, streams, gets, lists and cancels
 * through the edge; each HTTP+JSON route answers on the edge as it does on the capsule's own door
 * (the same status and body), the REST watch with the same event bytes.
 */
import assert from "node:assert/strict";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { TaskState } from "@a2a-js/sdk";
import { startCapsule } from "../helpers/capsule.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { clusterManifest, FLOOD_SCRIPT } from "./fixtures.ts";
import { q, sdkMessage as msg } from "../helpers/sdk.ts";

function recordingFetch(seen: string[]): typeof fetch {
  return (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const u = new URL(url);
    seen.push(`${init?.method ?? "GET"} ${u.pathname}${u.search}`);
    return fetch(url, init);
  };
}

/** A GET's or POST's status, content type and body (JSON parsed when it is JSON). */
async function answer(url: string, init: RequestInit = {}) {
  const res = await fetch(url, {
    ...init,
    headers: { "a2a-version": "1.0", ...(init.body ? { "content-type": "application/json" } : {}) },
  });
  const ctype = res.headers.get("content-type") ?? "";
  const text = await res.text();
  return {
    status: res.status,
    ctype: ctype.split(";")[0],
    allow: res.headers.get("allow"),
    body: ctype.includes("json") && text ? JSON.parse(text) : text,
  };
}

/** The numbered events of a REST watch from `from` up to `last`, as their lines. */
async function restWatch(base: string, from: number, last: number): Promise<string[]> {
  const res = await fetch(`${base}/murmur/session:watch`, {
    headers: { "a2a-version": "1.0", "last-event-id": String(from) },
  });
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const timer = setTimeout(() => reader.cancel(), 20_000);
  while (!text.includes(`id: ${last}\n`)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  clearTimeout(timer);
  await reader.cancel();
  return text.split("\n\n").filter((e) => /^id: \d+/m.test(e)).map((e) =>
    e.split("\n").filter((l) => l.startsWith("id:") || l.startsWith("data:")).join("\n")
  );
}

Deno.test("edge bindings: the card names JSON-RPC and HTTP+JSON at the edge; the SDK's REST and JSON-RPC clients work through it", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    await until("the session on the edge", async () => {
      const r = await fetch(`${at}/.well-known/agent-card.json`);
      await r.body?.cancel();
      return r.status === 200 || undefined;
    });
    const card = await (await fetch(`${at}/.well-known/agent-card.json`)).json();
    assert.deepEqual(
      card.supportedInterfaces.map((i: { url: string; protocolBinding: string }) => [
        i.protocolBinding,
        i.url,
      ]),
      [["JSONRPC", at], ["HTTP+JSON", at]],
    );
    // The REST client, preferring REST, as the SDKs do.
    const seen: string[] = [];
    const fetchImpl = recordingFetch(seen);
    const rest = await new ClientFactory({
      transports: [new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      preferredTransports: ["HTTP+JSON"],
    }).createFromUrl(`${at}/`);
    const sent = q(await rest.sendMessage(q({ message: msg("hello") })));
    const id = sent.id as string;
    await until(
      "the task completed on the edge",
      async () =>
        q(await rest.getTask(q({ id }))).status.state === TaskState.TASK_STATE_COMPLETED ||
        undefined,
    );
    const listed = q(await rest.listTasks(q({})));
    assert.ok(listed.tasks.some((t: { id: string }) => t.id === id));
    const streamed = [];
    for await (const e of rest.sendMessageStream(q({ message: msg("flood") }))) streamed.push(e);
    // The door's own stream through the edge: the task first, its final status last.
    assert.equal(q(streamed[0]).payload.$case, "task");
    const final = q(streamed.at(-1)).payload;
    assert.equal(final.$case, "statusUpdate");
    assert.equal(final.value.status.state, TaskState.TASK_STATE_COMPLETED);
    const slow = q(
      await rest.sendMessage(
        q({ message: msg("slow"), configuration: { returnImmediately: true } }),
      ),
    )
      .id as string;
    await until(
      "slow working on the edge",
      // Not found until the publisher has written it (within a second).
      async () =>
        q(await rest.getTask(q({ id: slow })).catch(() => null))?.status.state ===
          TaskState.TASK_STATE_WORKING || undefined,
    );
    const canceled = q(await rest.cancelTask(q({ id: slow })));
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);
    const sid = cap.ready.session_id;
    for (const path of ["/message:send", "/message:stream", `/tasks/${slow}:cancel`]) {
      assert.ok(seen.includes(`POST /sessions/${sid}${path}`), `${path} in ${seen.join(", ")}`);
    }
    assert.ok(seen.includes(`GET /sessions/${sid}/tasks/${id}`), seen.join(", "));
    assert.ok(seen.every((s) => s.includes(`/sessions/${sid}/`)), seen.join(", "));
    // The JSON-RPC client, from the same card.
    const rpc = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({})],
      preferredTransports: ["JSONRPC"],
    }).createFromUrl(`${at}/`);
    assert.equal(q(await rpc.getTask(q({ id }))).id, id);
  } finally {
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});

Deno.test("edge bindings: each HTTP+JSON route answers on the edge as on the capsule's door", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    const send = await answer(`${cap.base}/message:send`, {
      method: "POST",
      body: JSON.stringify({
        message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "flood" }] },
      }),
    });
    const id = send.body.task?.id ?? send.body.id;
    assert.ok(typeof id === "string", JSON.stringify(send.body));
    const last = await until("the flood in Redis, read by the edge", async () => {
      const door = (await answer(`${cap.base}/murmur/session:poll?cursor=0`)).body.cursor;
      const there = await answer(`${at}/tasks/${id}`);
      return there.status === 200 && there.body.status.state === "TASK_STATE_COMPLETED"
        ? door as number
        : undefined;
    });
    const routes: [string, RequestInit?][] = [
      [`/tasks/${id}`],
      [`/tasks/${id}?historyLength=1`],
      ["/tasks"],
      ["/tasks?pageSize=1&includeArtifacts=true"],
      ["/tasks?pageSize=x"],
      ["/tasks/tsk_nope"],
      [`/murmur/session:poll?cursor=${last - 5}`],
      [`/murmur/session:poll?cursor=${last - 5}`, { method: "POST", body: "{}" }],
      ["/extendedAgentCard"],
      [`/tasks/${id}/pushNotificationConfigs`],
      [`/tasks/${id}:subscribe`],
      ["/tasks", { method: "POST", body: "{}" }],
      ["/message:send", { method: "GET" }],
      ["/message:nope"],
      ["/tasks/tsk_nope:cancel", { method: "POST", body: "{}" }],
    ];
    for (const [path, init] of routes) {
      const door = await answer(cap.base + path, init);
      const there = await answer(at + path, init);
      assert.deepEqual(there, door, `${init?.method ?? "GET"} ${path}`);
    }
    // The REST watch: the same events, byte for byte.
    assert.deepEqual(
      await restWatch(at, last - 50, last),
      await restWatch(cap.base, last - 50, last),
    );
  } finally {
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});

Deno.test("edge bindings: bad params are refused on the edge exactly as on the capsule's door", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    // Methods the edge answers itself (from Redis) and ones it forwards, each with bad params.
    const bad: [string, unknown][] = [
      ["GetTask", {}],
      ["GetTask", { id: "" }],
      ["GetTask", { id: 7 }],
      ["GetTask", { id: "t", historyLength: -1 }],
      ["GetTask", { id: "t", historyLength: "x" }],
      ["GetTask", "not an object"],
      ["SubscribeToTask", {}],
      ["SubscribeToTask", { id: "" }],
      ["ListTasks", { pageSize: -1 }],
      ["ListTasks", { pageSize: 1.5 }],
      ["ListTasks", { status: "TASK_STATE_NOPE" }],
      ["ListTasks", { pageToken: 3 }],
      ["murmur.PollSession", { cursor: -1 }],
      ["murmur.PollSession", { cursor: "x" }],
      ["murmur.PollSession", { cursor: 0, waitSecs: 99 }],
      ["CancelTask", {}],
      ["SendMessage", {}],
      ["SendMessage", { message: { role: "ROLE_USER", parts: [] } }],
      ["GetTaskPushNotificationConfig", { taskId: "" }],
    ];
    for (const [method, params] of bad) {
      const rpc = (base: string) =>
        answer(`${base}/`, {
          method: "POST",
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        });
      const door = await rpc(cap.base);
      const there = await rpc(at);
      assert.ok(door.body.error, `${method} ${JSON.stringify(params)}: ${JSON.stringify(door)}`);
      assert.deepEqual(there, door, `${method} ${JSON.stringify(params)}`);
    }
    // The HTTP+JSON binding: the same Status body and HTTP status.
    for (const path of ["/tasks?pageSize=-1", "/tasks?status=NOPE", "/tasks/t?historyLength=-1"]) {
      assert.deepEqual(await answer(`${at}${path}`), await answer(`${cap.base}${path}`), path);
    }
  } finally {
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});
