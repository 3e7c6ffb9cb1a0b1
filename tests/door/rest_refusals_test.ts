/**
 * The HTTP+JSON binding's refusals on the wire (docs/protocol.md "HTTP+JSON"): each is a
 * google.rpc.Status body `{error: {code, status, message, details}}` whose code is the HTTP status
 * (A2A v1.0 §5.4, §11.6), A2A errors carry their ErrorInfo, the checks run in the JSON-RPC door's
 * order, and a refused request changes nothing. Auth: the same token gate and scopes as JSON-RPC,
 * in the REST form.
 */
import assert from "node:assert/strict";
import { type Answer, capsule, post } from "./helpers.ts";

const V = { "a2a-version": "1.0" };
const JSON_V = { "content-type": "application/json", ...V };

function get(base: string, path: string, headers: Record<string, string> = V): Promise<Answer> {
  return post(base, null, headers, path, "GET");
}

/** Asserts a Status refusal; returns its ErrorInfo (or undefined when it has none). */
function refused(a: Answer, status: number, name: string, message?: RegExp) {
  assert.equal(a.status, status, a.text);
  assert.equal(a.headers.get("content-type"), "application/json");
  assert.deepEqual(Object.keys(a.json), ["error"], a.text);
  const e = a.json.error;
  assert.deepEqual(Object.keys(e), ["code", "status", "message", "details"], a.text);
  assert.equal(e.code, status);
  assert.equal(e.status, name, a.text);
  if (message) assert.match(e.message, message);
  const info = e.details.find((d: { "@type": string }) =>
    d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo"
  );
  return info as { reason: string; domain: string; metadata?: Record<string, string> } | undefined;
}

Deno.test("HTTP+JSON refusals: route, media type, body, version, method, params — Status bodies", async () => {
  const cap = await capsule({ lifecycle: { task_acceptance: "queue", after_task: "sleep" } });
  try {
    const b = cap.base;
    const send = (body: string, headers: Record<string, string> = JSON_V) =>
      post(b, body, headers, "/message:send");
    const ok = JSON.stringify({
      message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] },
    });

    refused(await get(b, "/tasks/x/y/z"), 404, "NOT_FOUND", /no HTTP\+JSON route GET/);
    const wrongVerb = await get(b, "/message:send");
    refused(wrongVerb, 405, "UNIMPLEMENTED", /answers POST, not GET/);
    assert.equal(wrongVerb.headers.get("allow"), "POST");
    assert.equal((await post(b, null, V, "/tasks/t1", "DELETE")).headers.get("allow"), "GET");

    // 415 for a body that is not JSON, checked before the body is parsed.
    let info = refused(
      await send("{'message': 1}", { "content-type": "text/plain", ...V }),
      415,
      "INVALID_ARGUMENT",
    );
    assert.equal(info?.reason, "CONTENT_TYPE_NOT_SUPPORTED");
    // (bytes: fetch labels a string body text/plain by itself)
    const okBytes = new TextEncoder().encode(ok);
    info = refused(
      await post(b, okBytes, V, "/message:send"),
      415,
      "INVALID_ARGUMENT",
      /no Content-Type/,
    );
    assert.equal(info?.reason, "CONTENT_TYPE_NOT_SUPPORTED");
    // application/a2a+json (the binding's own) and a charset are fine; a wrong version is not.
    info = refused(
      await send(ok, {
        "content-type": "application/a2a+json; charset=utf-8",
        "a2a-version": "99.0",
      }),
      400,
      "FAILED_PRECONDITION",
    );
    assert.equal(info?.reason, "VERSION_NOT_SUPPORTED");
    assert.deepEqual(info?.metadata, { requestedVersion: "99.0", supportedVersions: "1.0" });
    refused(
      await get(b, "/tasks", {}),
      400,
      "FAILED_PRECONDITION",
      /A2A-Version header is missing/,
    );
    // Without the header, the query parameter (A2A v1.0 §3.6.1): what an EventSource can send.
    refused(await get(b, "/tasks?A2A-Version=2.0", {}), 400, "FAILED_PRECONDITION", /'2.0'/);
    const q = await get(b, "/tasks?A2A-Version=1.0", {});
    assert.equal(q.status, 200, q.text);
    const watch = await fetch(b + "/murmur/session:watch?A2A-Version=1.0");
    assert.equal(watch.headers.get("content-type"), "text/event-stream");
    await watch.body!.cancel();
    // The header wins over the query.
    refused(
      await get(b, "/tasks?A2A-Version=1.0", { "a2a-version": "9.9" }),
      400,
      "FAILED_PRECONDITION",
    );

    // The body cap, from Content-Length before anything is read.
    const big = await post(b, "x".repeat(8 * 1024 * 1024 + 1), JSON_V, "/message:send");
    refused(big, 413, "RESOURCE_EXHAUSTED", /at most 8388608 bytes/);

    for (const bad of ["{", "[".repeat(600) + "]".repeat(600), "\u00ff"]) {
      assert.equal(
        refused(await send(bad), 400, "INVALID_ARGUMENT", /^Invalid JSON payload$/),
        undefined,
      );
    }
    const bytes = new Uint8Array([0x7b, 0xff, 0x7d]);
    refused(await post(b, bytes, JSON_V, "/message:send"), 400, "INVALID_ARGUMENT", /Invalid JSON/);
    info = refused(await send("[1]"), 400, "INVALID_ARGUMENT", /body must be a JSON object/);
    assert.equal(info?.reason, "INVALID_PARAMS");
    info = refused(await send("{}"), 400, "INVALID_ARGUMENT", /params.message must be/);
    assert.equal(info?.reason, "INVALID_PARAMS");

    // Methods this door does not serve: as on JSON-RPC, in the REST form.
    info = refused(await get(b, "/extendedAgentCard"), 400, "FAILED_PRECONDITION");
    assert.equal(info?.reason, "UNSUPPORTED_OPERATION");
    for (
      const [method, path] of [
        ["POST", "/tasks/t1/pushNotificationConfigs"],
        ["GET", "/tasks/t1/pushNotificationConfigs"],
        ["GET", "/tasks/t1/pushNotificationConfigs/c1"],
        ["DELETE", "/tasks/t1/pushNotificationConfigs/c1"],
      ]
    ) {
      const a = await post(b, method === "POST" ? "{}" : null, JSON_V, path, method);
      info = refused(a, 400, "FAILED_PRECONDITION", /pushNotifications: false/);
      assert.equal(info?.reason, "PUSH_NOTIFICATION_NOT_SUPPORTED", `${method} ${path}`);
    }

    // Path and query params, read by the JSON-RPC methods' own checks.
    info = refused(await get(b, "/tasks/tsk_nope"), 404, "NOT_FOUND", /^Task not found$/);
    assert.deepEqual(info, {
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
      metadata: { taskId: "tsk_nope" },
    });
    refused(await post(b, null, V, "/tasks/tsk_nope:cancel"), 404, "NOT_FOUND");
    refused(await post(b, null, V, "/tasks/tsk_nope:subscribe"), 404, "NOT_FOUND");
    refused(await get(b, "/tasks/%E0%A4%A"), 400, "INVALID_ARGUMENT", /percent-encoding/);
    for (
      const [query, why] of [
        ["pageSize=0", /pageSize must be an integer from 1 to 100/],
        ["pageSize=1&pageSize=2", /pageSize is given more than once/],
        ["includeArtifacts=yes", /includeArtifacts must be a boolean/],
        ["status=TASK_STATE_BOGUS", /is not a TaskState/],
        ["historyLength=-1", /historyLength must be a non-negative integer/],
        ["statusTimestampAfter=yesterday", /RFC 3339/],
        ["pageToken=nope", /not a nextPageToken this door issued/],
      ] as const
    ) {
      info = refused(await get(b, `/tasks?${query}`), 400, "INVALID_ARGUMENT", why);
      assert.equal(info?.reason, "INVALID_PARAMS", query);
    }
    refused(
      await get(b, "/murmur/session:poll?waitSecs=31"),
      400,
      "INVALID_ARGUMENT",
      /waitSecs must be an integer from 0 to 30/,
    );

    // A route that takes no body refuses one declared, without reading it.
    info = refused(
      await post(b, "{}", JSON_V, "/tasks", "DELETE"),
      405,
      "UNIMPLEMENTED",
    );
    info = refused(
      await post(b, "{}", JSON_V, "/tasks/t1/pushNotificationConfigs/c1", "DELETE"),
      400,
      "INVALID_ARGUMENT",
      /DELETE \/tasks\/t1\/pushNotificationConfigs\/c1 takes no request body/,
    );
    assert.equal(info?.reason, "INVALID_PARAMS");

    // Nothing above was taken.
    const all = await get(b, "/tasks");
    assert.equal(all.status, 200, all.text);
    // Plain JSON unless the request's Accept names application/a2a+json.
    assert.equal(all.headers.get("content-type"), "application/json");
    const a2a = await get(b, "/tasks", { ...V, accept: "application/a2a+json, application/json" });
    assert.equal(a2a.headers.get("content-type"), "application/a2a+json");
    assert.deepEqual(a2a.json, all.json);
    assert.deepEqual(all.json, { tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });

    // And a good request after all of them: the bare SendMessageResponse.
    const sent = await send(ok);
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.headers.get("content-type"), "application/json");
    assert.equal(sent.json.task.status.state, "TASK_STATE_COMPLETED");
    const got = await get(b, `/tasks/${sent.json.task.id}?historyLength=0`);
    assert.equal(got.json.id, sent.json.task.id);
    const again = await post(b, null, V, `/tasks/${sent.json.task.id}:cancel`);
    info = refused(again, 400, "FAILED_PRECONDITION", /already TASK_STATE_COMPLETED/);
    assert.equal(info?.reason, "TASK_NOT_CANCELABLE");
  } finally {
    await cap.close();
  }
});

Deno.test("HTTP+JSON auth: the same gate and scopes as JSON-RPC, refusals as Status bodies", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    network: {
      authentication: {
        scheme: "bearer",
        credentials: { reader: { scopes: ["GetTask", "ListTasks"] } },
      },
    },
  });
  try {
    const b = cap.base;
    const tok = (name: string) => ({ ...V, authorization: `Bearer ${cap.ready.tokens![name]}` });

    // No token: 401 before the route is even looked at (an unknown path too), as on JSON-RPC.
    for (const path of ["/tasks", "/nowhere/tasks", "/tasks/x/y/z"]) {
      const a = await get(b, path);
      if (path === "/nowhere/tasks") {
        assert.equal(a.status, 401);
        continue;
      }
      const info = refused(a, 401, "UNAUTHENTICATED", /Authorization: Bearer <token>/);
      assert.equal(info?.reason, "UNAUTHENTICATED");
      assert.equal(a.headers.get("www-authenticate"), `Bearer realm="door"`);
    }
    const forged = await get(b, "/tasks", { ...V, authorization: "Bearer mdt1.x.y" });
    assert.equal(refused(forged, 401, "UNAUTHENTICATED")?.reason, "INVALID_TOKEN");
    assert.match(forged.headers.get("www-authenticate")!, /error="invalid_token"/);

    // The reader lists and gets, but may not send, watch, poll or stop.
    const listed = await get(b, "/tasks", tok("reader"));
    assert.equal(listed.status, 200, listed.text);
    const body = JSON.stringify({
      message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] },
    });
    for (
      const [method, path, scope] of [
        ["POST", "/message:send", "SendMessage"],
        ["POST", "/message:stream", "SendStreamingMessage"],
        ["GET", "/murmur/session:watch", "murmur.WatchSession"],
        ["GET", "/murmur/session:poll", "murmur.WatchSession"],
        ["POST", "/murmur/session:stop", "murmur.StopSession"],
        ["POST", "/tasks/t1:cancel", "CancelTask"],
      ]
    ) {
      const a = await post(
        b,
        method === "POST" ? body : null,
        { "content-type": "application/json", ...tok("reader") },
        path,
        method,
      );
      const info = refused(a, 403, "PERMISSION_DENIED", /credential 'reader' does not reach/);
      assert.equal(info?.reason, "INSUFFICIENT_SCOPE");
      assert.match(a.headers.get("www-authenticate")!, new RegExp(`scope="${scope}"`));
    }
    // The version is checked before the scope, as on JSON-RPC.
    const noVersion = await post(
      b,
      body,
      { "content-type": "application/json", authorization: tok("reader").authorization },
      "/message:send",
    );
    refused(noVersion, 400, "FAILED_PRECONDITION");

    // The operator sends; every caller reaches the extended card, here at its REST route.
    const sent = await post(
      b,
      body,
      { "content-type": "application/json", ...tok("operator") },
      "/message:send",
    );
    assert.equal(sent.json.task.status.state, "TASK_STATE_COMPLETED", sent.text);
    const card = await get(b, "/extendedAgentCard", tok("reader"));
    assert.equal(card.status, 200, card.text);
    assert.equal(card.json.capabilities.extendedAgentCard, true);
    assert.equal(
      (await get(b, `/tasks/${sent.json.task.id}`, tok("reader"))).json.status.state,
      "TASK_STATE_COMPLETED",
    );
  } finally {
    await cap.close();
  }
});
