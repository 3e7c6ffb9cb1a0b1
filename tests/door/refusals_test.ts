/**
 * Every refusal of the door over raw HTTP (docs/protocol.md "Endpoints", "Refusals"; README "The
 * door"): the route 404s, the envelope checks in the reference's order, each code with its exact
 * message and ErrorInfo, and the request id echoed verbatim for string and integer ids.
 */
import assert from "node:assert/strict";
import type { Capsule } from "../helpers/capsule.ts";
import {
  assertRpcError,
  call,
  capsule,
  errorInfo,
  message,
  portOf,
  post,
  rawPost,
  rawRequest,
  rpcBody,
  submit,
  waitTask,
} from "./helpers.ts";
import { OPERATOR_METHODS } from "../helpers/methods.ts";

const JSON_V1 = { "content-type": "application/json", "a2a-version": "1.0" };
const IDS = ["req-7", 7, 0, -3, ""] as const;

async function withCapsule(
  o: Parameters<typeof capsule>[0],
  fn: (cap: Capsule) => Promise<void>,
) {
  const cap = await capsule(o);
  try {
    await fn(cap);
  } finally {
    await cap.close();
  }
}

const queue = { lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 8 } };

Deno.test("routes: bare 404 for non-JSON or empty POSTs, other methods, paths and query strings", async () => {
  await withCapsule(queue, async (cap) => {
    const b = cap.base;
    const body = rpcBody("ListTasks", {});
    const cases: [string, string, BodyInit | null, Record<string, string>][] = [
      ["POST", "/", body, { "content-type": "text/plain", "a2a-version": "1.0" }],
      ["POST", "/", body, { "a2a-version": "1.0" }],
      ["POST", "/", "", JSON_V1],
      ["POST", "/", null, JSON_V1],
      ["GET", "/", null, {}],
      ["PUT", "/", body, JSON_V1],
      ["DELETE", "/", null, {}],
      ["OPTIONS", "/", null, { origin: "http://example.com" }],
      ["POST", "/?x=1", body, JSON_V1],
      ["POST", "/a2a", body, JSON_V1],
      ["POST", "//", body, JSON_V1],
      ["GET", "/.well-known/agent-card.json?x", null, {}],
      ["POST", "/.well-known/agent-card.json", body, JSON_V1],
      ["HEAD", "/.well-known/agent-card.json", null, {}],
      ["GET", "/.well-known/agent.json", null, {}],
      ["GET", "/favicon.ico", null, {}],
    ];
    for (const [method, path, payload, headers] of cases) {
      const res = await fetch(b + path, { method, body: payload, headers });
      const text = await res.text();
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(text, "", `${method} ${path}`);
      assert.equal(res.headers.get("access-control-allow-origin"), null);
      assert.equal(res.headers.get("allow"), null);
    }
    // A media type is case-insensitive, and parameters after it are fine.
    const ok = await post(b, body, {
      "content-type": "Application/JSON; charset=utf-8",
      "a2a-version": "1.0",
    });
    assert.equal(ok.status, 200);
    assert.ok(ok.json.result, ok.text);
    // A raw POST with content-length: 0.
    const raw = await rawPost(portOf(cap), "", ["a2a-version: 1.0"]);
    assert.equal(raw.status, 404);
    assert.equal(raw.body.length, 0);
  });
});

Deno.test("-32700 for bodies that are not JSON, id null and no data", async () => {
  await withCapsule(queue, async (cap) => {
    const bodies: (string | Uint8Array)[] = [
      '{"jsonrpc":',
      "{",
      "not json",
      '{"jsonrpc":"2.0","id":1,"method":"GetTask",}',
      "\u0000",
      new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), // {"\xff\xfe":1}
      new Uint8Array([0xc3, 0x28]),
    ];
    for (const body of bodies) {
      const a = await post(cap.base, body);
      assertRpcError(a, null, -32700, "Invalid JSON payload");
      assert.equal(a.json.error.data, undefined);
    }
  });
});

Deno.test("-32600 for envelopes that are not one valid request; the id echoed only when valid", async () => {
  await withCapsule(queue, async (cap) => {
    const msg = "Request payload validation error";
    const invalidNullId: string[] = [
      "[]",
      JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ListTasks" }]),
      '"ListTasks"',
      "42",
      "null",
      "true",
      JSON.stringify({ jsonrpc: "2.0", method: "ListTasks" }),
      JSON.stringify({ jsonrpc: "2.0", id: null, method: "ListTasks" }),
      JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "ListTasks" }),
      JSON.stringify({ jsonrpc: "2.0", id: {}, method: "ListTasks" }),
      JSON.stringify({ jsonrpc: "2.0", id: [1], method: "ListTasks" }),
      JSON.stringify({ jsonrpc: "2.0", id: true, method: "ListTasks" }),
      '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ListTasks"}',
    ];
    for (const body of invalidNullId) {
      const a = await post(cap.base, body);
      assertRpcError(a, null, -32600, msg);
      assert.equal(a.json.error.data, undefined);
    }
    for (const id of IDS) {
      for (
        const env of [
          { jsonrpc: "1.0", id, method: "ListTasks" },
          { id, method: "ListTasks" },
          { jsonrpc: 2, id, method: "ListTasks" },
          { jsonrpc: "2.0", id },
          { jsonrpc: "2.0", id, method: 5 },
          { jsonrpc: "2.0", id, method: null },
        ]
      ) {
        assertRpcError(await post(cap.base, JSON.stringify(env)), id, -32600, msg);
      }
    }
    // -32600 beats a missing A2A-Version (the reference's order).
    const a = await post(cap.base, '{"jsonrpc":"1.0","id":3,"method":"ListTasks"}', {
      "content-type": "application/json",
    });
    assertRpcError(a, 3, -32600, msg);
  });
});

Deno.test("-32009 for a missing, empty, other or repeated A2A-Version; 1.0 and 1.0.<n> accepted", async () => {
  await withCapsule(queue, async (cap) => {
    const body = (id: unknown) => rpcBody("ListTasks", {}, id);
    // No header at all (`missing`) is named as such: the caller forgot the header, not a value.
    const refuse = (
      a: Awaited<ReturnType<typeof post>>,
      id: unknown,
      requested: string,
      missing = false,
    ) => {
      assertRpcError(
        a,
        id,
        -32009,
        missing
          ? "the A2A-Version header is missing; this agent speaks 1.0: send A2A-Version: 1.0"
          : `A2A version '${requested}' is not supported; this agent speaks 1.0`,
      );
      const info = errorInfo(a);
      assert.equal(info.reason, "VERSION_NOT_SUPPORTED");
      assert.equal(info.domain, "a2a-protocol.org");
      assert.deepEqual(info.metadata, { requestedVersion: requested, supportedVersions: "1.0" });
    };
    for (const id of IDS) {
      refuse(await post(cap.base, body(id), { "content-type": "application/json" }), id, "", true);
    }
    for (const v of ["", "0.3", "1", "1.1", "2.0", "99.0", "1.0x", "1.0.", "1.0.3a", "v1.0"]) {
      const a = await post(cap.base, body("v"), {
        "content-type": "application/json",
        "a2a-version": v,
      });
      refuse(a, "v", v);
    }
    // Two lines, even both 1.0 (raw TCP: fetch would merge them).
    const port = portOf(cap);
    for (
      const lines of [["A2A-Version: 1.0", "a2a-version: 1.0"], [
        "a2a-version: 1.0",
        "A2A-VERSION: 1.1",
      ]]
    ) {
      const raw = await rawPost(port, body(9), lines);
      const a = JSON.parse(new TextDecoder().decode(raw.body));
      assert.equal(a.error.code, -32009);
      const values = lines.map((l) => l.split(":")[1].trim()).join(", ");
      assert.equal(
        a.error.message,
        `A2A version '${values}' is not supported; this agent speaks 1.0`,
      );
      assert.equal(a.id, 9);
    }
    // Accepted: 1.0, 1.0.<n>, any header-name case, surrounding space; query strings are ignored.
    for (const v of ["1.0", "1.0.3", "1.0.0", "1.0.12345", " 1.0 "]) {
      const a = await post(cap.base, body(1), {
        "content-type": "application/json",
        "A2A-Version": v,
      });
      assert.ok(a.json.result, `${v}: ${a.text}`);
    }
    // Even a streaming method is refused with one JSON body, before any stream.
    const s = await post(cap.base, rpcBody("SendStreamingMessage", message("x"), "s"), {
      "content-type": "application/json",
    });
    assert.equal(s.headers.get("content-type"), "application/json");
    refuse(s, "s", "", true);
    const w = await post(cap.base, rpcBody("murmur.WatchSession", {}, 4), {
      "content-type": "application/json",
      "a2a-version": "0.3",
    });
    refuse(w, 4, "0.3");
    // Nothing was started by any of it.
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 0);
  });
});

Deno.test("-32601 for unknown methods and every A2A 0.3 name, which is told its 1.0 method", async () => {
  await withCapsule(queue, async (cap) => {
    const names = [
      "message/send",
      "message/stream",
      "tasks/get",
      "tasks/cancel",
      "tasks/resubscribe",
      "tasks/pushNotificationConfig/set",
      "agent/getAuthenticatedExtendedCard",
      "stream/watch",
      "session/stop",
      "sendMessage",
      "SendMessage ",
      "",
      "createTaskPushNotificationConfig",
      "toString",
      "__proto__",
    ];
    const v10: Record<string, string> = {
      "message/send": "SendMessage",
      "message/stream": "SendStreamingMessage",
      "tasks/get": "GetTask",
      "tasks/cancel": "CancelTask",
      "tasks/resubscribe": "SubscribeToTask",
      "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
      "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
    };
    for (const id of IDS) {
      for (const method of names) {
        const a = await call(cap.base, method, {}, { id });
        // A 0.3 name is told its 1.0 method; anything else is plain "Method not found".
        assertRpcError(
          a,
          id,
          -32601,
          Object.hasOwn(v10, method)
            ? `Method not found: '${method}' is A2A 0.3's name; this door speaks A2A 1.0, where it is '${
              v10[method]
            }'`
            : "Method not found",
        );
        assert.equal(a.json.error.data, undefined);
      }
    }
  });
});

Deno.test("-32003 for the four push-notification methods, as the card's pushNotifications: false says (TCK JSONRPC-SSE-002)", async () => {
  await withCapsule(queue, async (cap) => {
    const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
    assert.equal(card.capabilities.pushNotifications, false);
    const methods = {
      CreateTaskPushNotificationConfig: { taskId: "tsk_x", url: "https://example.com/hook" },
      GetTaskPushNotificationConfig: { taskId: "tsk_x", id: "cfg" },
      ListTaskPushNotificationConfigs: { taskId: "tsk_x" },
      DeleteTaskPushNotificationConfig: { taskId: "tsk_x", id: "cfg" },
    };
    const before = await call(cap.base, "ListTasks", {});
    for (const id of IDS) {
      for (const [method, params] of Object.entries(methods)) {
        const a = await call(cap.base, method, params, { id });
        assertRpcError(
          a,
          id,
          -32003,
          "Push notifications are not supported: this agent's card says pushNotifications: false; follow the task with SubscribeToTask or murmur.WatchSession",
        );
        assert.equal(errorInfo(a).reason, "PUSH_NOTIFICATION_NOT_SUPPORTED");
      }
    }
    assert.deepEqual((await call(cap.base, "ListTasks", {})).json, before.json, "nothing changed");
  });
});

Deno.test("-32602 for params that are not an object, on every method", async () => {
  await withCapsule(queue, async (cap) => {
    const methods = [...OPERATOR_METHODS];
    for (const method of methods) {
      for (const params of [[], "x", 1, null, true, [{ id: "x" }]]) {
        for (const id of ["p", 5]) {
          const a = await post(cap.base, JSON.stringify({ jsonrpc: "2.0", id, method, params }));
          assertRpcError(a, id, -32602, "Invalid parameters: params must be an object");
        }
      }
    }
    // Absent params are an empty object: GetTask then lacks its id.
    assertRpcError(await call(cap.base, "GetTask", undefined), 1, -32602, "GetTask requires an id");
  });
});

Deno.test("SendMessage message checks 1–6 in order, each message exact; nothing is started", async () => {
  await withCapsule(queue, async (cap) => {
    const p = (m: unknown) => ({ message: m });
    const good = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] };
    const cases: [unknown, string][] = [
      [{}, "params.message must be an A2A Message object"],
      [p(null), "params.message must be an A2A Message object"],
      [p([good]), "params.message must be an A2A Message object"],
      [p("hi"), "params.message must be an A2A Message object"],
      [good, "params.message must be an A2A Message object"],
      [p({ ...good, messageId: undefined }), "message.messageId must be a non-empty string"],
      [p({ ...good, messageId: "" }), "message.messageId must be a non-empty string"],
      [p({ ...good, messageId: 7 }), "message.messageId must be a non-empty string"],
      [
        p({ ...good, role: "user" }),
        "message.role must be ROLE_USER: a message to this agent is from the user",
      ],
      [
        p({ ...good, role: "ROLE_AGENT" }),
        "message.role must be ROLE_USER: a message to this agent is from the user",
      ],
      [
        p({ ...good, role: 1 }),
        "message.role must be ROLE_USER: a message to this agent is from the user",
      ],
      [
        p({ ...good, role: undefined }),
        "message.role must be ROLE_USER: a message to this agent is from the user",
      ],
      [p({ ...good, parts: [] }), "message.parts must be a non-empty array"],
      [p({ ...good, parts: { text: "x" } }), "message.parts must be a non-empty array"],
      [p({ ...good, parts: undefined }), "message.parts must be a non-empty array"],
      [p({ ...good, parts: [{ text: "a" }, "b"] }), "message.parts[1] is not an object"],
      [p({ ...good, parts: [null] }), "message.parts[0] is not an object"],
      [p({ ...good, parts: [[{ text: "a" }]] }), "message.parts[0] is not an object"],
      [
        p({ ...good, parts: [{ mediaType: "text/plain" }] }),
        "message.parts[0] sets none of text, raw, url and data",
      ],
      [
        p({ ...good, parts: [{ text: "a", data: {} }] }),
        "message.parts[0] sets text and data; a part sets exactly one of text, raw, url and data",
      ],
      [
        p({ ...good, parts: [{ text: "a" }, { raw: "eA==", url: "http://x" }] }),
        "message.parts[1] sets raw and url; a part sets exactly one of text, raw, url and data",
      ],
      [
        p({ ...good, parts: [{ text: null, data: null }] }),
        "message.parts[0] sets text and data; a part sets exactly one of text, raw, url and data",
      ],
      [p({ ...good, parts: [{ text: null }] }), "message.parts[0].text is not a string"],
      [p({ ...good, parts: [{ text: 5 }] }), "message.parts[0].text is not a string"],
      [p({ ...good, parts: [{ raw: 5 }] }), "message.parts[0].raw is not a string"],
      [p({ ...good, parts: [{ url: {} }] }), "message.parts[0].url is not a string"],
      [
        p({ ...good, parts: [{ data: 1, mediaType: 1 }] }),
        "message.parts[0].mediaType is not a string",
      ],
      [
        p({ ...good, parts: [{ text: "a", filename: ["f"] }] }),
        "message.parts[0].filename is not a string",
      ],
      // Check 4 comes before check 6: a raw part with a bad field is -32602, not -32005.
      [
        p({ ...good, parts: [{ raw: "eA==", filename: 3 }] }),
        "message.parts[0].filename is not a string",
      ],
      [p({ ...good, taskId: 5 }), "message.taskId must be a string"],
      [p({ ...good, contextId: {} }), "message.contextId must be a string"],
      [p({ ...good, referenceTaskIds: "tsk_1" }), "message.referenceTaskIds must be an array"],
      [
        p({ ...good, referenceTaskIds: [""] }),
        "message.referenceTaskIds must hold non-empty strings",
      ],
      [
        p({ ...good, referenceTaskIds: [1] }),
        "message.referenceTaskIds must hold non-empty strings",
      ],
      [
        p({ ...good, referenceTaskIds: Array.from({ length: 17 }, (_, i) => `tsk_${i}`) }),
        "message.referenceTaskIds names 17 tasks; at most 16 may be referenced",
      ],
      [
        p({ ...good, metadata: { [DOOR]: { forgetSession: true } } }),
        "forgetSession asks this capsule to forget the harness session this context names, and only a capsule on inference.transport: process has one",
      ],
    ];
    for (const method of ["SendMessage", "SendStreamingMessage"]) {
      for (const [params, text] of cases) {
        for (const id of ["s", 11]) {
          const a = await call(cap.base, method, params, { id });
          assertRpcError(a, id, -32602, `Invalid params: ${text}`);
        }
      }
    }
    // 16 distinct after de-duplication pass the check (and name unknown tasks: fine).
    const dup = [...Array.from({ length: 16 }, (_, i) => `tsk_${i}`), "tsk_0", "tsk_1"];
    const ok = await call(cap.base, "SendMessage", {
      message: { ...good, messageId: "m-dup", referenceTaskIds: dup },
      configuration: { returnImmediately: true },
    });
    assert.equal(ok.json.result.task.status.state, "TASK_STATE_SUBMITTED", ok.text);
    const { json } = await call(cap.base, "ListTasks", {});
    assert.equal(json.result.totalSize, 1, "only the one good message started a task");
  });
});

const DOOR = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1";

Deno.test("-32005 for the first raw or url part, with partIndex and mediaType", async () => {
  await withCapsule(queue, async (cap) => {
    const cases: [unknown[], number, string, Record<string, string>][] = [
      [[{ raw: "aGk=" }], 0, "raw", { partIndex: "0" }],
      [[{ text: "a" }, { url: "https://x/y.png", mediaType: "image/png" }], 1, "url", {
        partIndex: "1",
        mediaType: "image/png",
      }],
      [
        [{ data: { a: 1 } }, { raw: "aGk=", mediaType: "text/plain", filename: "f.txt" }, {
          url: "u",
        }],
        1,
        "raw",
        { partIndex: "1", mediaType: "text/plain" },
      ],
    ];
    for (const [parts, i, kind, md] of cases) {
      for (const id of ["f", 3]) {
        const a = await call(cap.base, "SendMessage", {
          message: { messageId: "m", role: "ROLE_USER", parts },
        }, { id });
        assertRpcError(
          a,
          id,
          -32005,
          `message.parts[${i}] is a ${kind} part; this agent reads text and data parts only`,
        );
        const info = errorInfo(a);
        assert.equal(info.reason, "CONTENT_TYPE_NOT_SUPPORTED");
        assert.equal(info.domain, "a2a-protocol.org");
        assert.deepEqual(info.metadata, md);
      }
    }
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 0);
  });
});

Deno.test("GetTask, CancelTask: -32602 without an id, -32001 unknown, -32002 ended; SendMessage routing -32001/-32004", async () => {
  await withCapsule(
    {
      ...queue,
      script: {
        tasks: [{ match: "^slow", turns: [{ steps: [{ text: "s", delay_ms: 5000 }] }] }, {
          turns: [{ steps: [{ text: "ok" }] }],
        }],
      },
    },
    async (cap) => {
      for (const id of IDS) {
        for (const params of [{}, { id: 5 }, { id: null }, { id: "" }, { id: ["tsk_x"] }]) {
          assertRpcError(
            await call(cap.base, "GetTask", params, { id }),
            id,
            -32602,
            "GetTask requires an id",
          );
        }
        for (const params of [{}, { id: 5 }, { id: null }, { id: {} }]) {
          assertRpcError(
            await call(cap.base, "CancelTask", params, { id }),
            id,
            -32602,
            "Invalid params: CancelTask requires an id",
          );
        }
        for (
          const [method, tid] of [["GetTask", "tsk_nope"], ["CancelTask", "tsk_nope"], [
            "CancelTask",
            "",
          ]]
        ) {
          const a = await call(cap.base, method, { id: tid }, { id });
          assertRpcError(a, id, -32001, "Task not found");
          const info = errorInfo(a);
          assert.equal(info.reason, "TASK_NOT_FOUND");
          assert.deepEqual(info.metadata, { taskId: tid });
        }
        const s = await call(cap.base, "SendMessage", message("x", { taskId: "tsk_unknown" }), {
          id,
        });
        assertRpcError(s, id, -32001, "Task not found");
        assert.deepEqual(errorInfo(s).metadata, { taskId: "tsk_unknown" });
      }

      // A finished task: -32002 on cancel (task untouched), -32004 on a message naming it.
      const done = await submit(cap.base, "quick");
      await waitTask(cap.base, done.id, (t) => t.status.state === "TASK_STATE_COMPLETED");
      for (const id of IDS) {
        const c = await call(cap.base, "CancelTask", { id: done.id }, { id });
        assertRpcError(
          c,
          id,
          -32002,
          "Task cannot be canceled: it is already TASK_STATE_COMPLETED",
        );
        assert.equal(errorInfo(c).reason, "TASK_NOT_CANCELABLE");
        assert.deepEqual(errorInfo(c).metadata, { taskId: done.id, state: "TASK_STATE_COMPLETED" });
        const m = await call(cap.base, "SendMessage", message("more", { taskId: done.id }), { id });
        assertRpcError(
          m,
          id,
          -32004,
          `task ${done.id} has ended in TASK_STATE_COMPLETED; send a new message without taskId, in the same contextId, to start a new task`,
        );
        assert.equal(errorInfo(m).reason, "UNSUPPORTED_OPERATION");
        assert.deepEqual(errorInfo(m).metadata, { taskId: done.id, state: "TASK_STATE_COMPLETED" });
      }
      const after = await call(cap.base, "GetTask", { id: done.id });
      assert.equal(after.json.result.status.state, "TASK_STATE_COMPLETED");
      assert.equal(after.json.result.artifacts[0].parts[0].text, "ok");

      // A working task and a queued one: -32004 naming their state.
      const slow = await submit(cap.base, "slow one");
      await waitTask(cap.base, slow.id, (t) => t.status.state === "TASK_STATE_WORKING");
      const queued = await submit(cap.base, "queued");
      for (
        const [t, state] of [[slow, "TASK_STATE_WORKING"], [
          queued,
          "TASK_STATE_SUBMITTED",
        ]] as const
      ) {
        const m = await call(cap.base, "SendMessage", message("reply", { taskId: t.id }), {
          id: "r",
        });
        assertRpcError(
          m,
          "r",
          -32004,
          `task ${t.id} is ${state}; this agent takes a message on a task only while it waits in TASK_STATE_INPUT_REQUIRED`,
        );
        assert.deepEqual(errorInfo(m).metadata, { taskId: t.id, state });
      }
      // taskId "" is no task: a new task.
      const fresh = await call(
        cap.base,
        "SendMessage",
        message("fresh", { taskId: "" }, { returnImmediately: true }),
      );
      assert.equal(fresh.json.result.task.status.state, "TASK_STATE_SUBMITTED", fresh.text);
    },
  );
});

Deno.test("-32004 GetExtendedAgentCard on a public door; ErrorInfo metadata {}", async () => {
  await withCapsule(queue, async (cap) => {
    for (const id of IDS) {
      for (const params of [undefined, {}]) {
        const a = await call(cap.base, "GetExtendedAgentCard", params, { id });
        assertRpcError(a, id, -32004, "this agent serves no extended agent card");
        assert.equal(errorInfo(a).reason, "UNSUPPORTED_OPERATION");
        assert.deepEqual(errorInfo(a).metadata, {});
      }
    }
  });
});

Deno.test("a reply to a task waiting for input: contextId mismatch -32602, then the reply answers WORKING", async () => {
  await withCapsule({
    ...queue,
    extra: { tools: [{ builtin: "request-input" }] },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{
              tool_call: { id: "t1", name: "request-input", input: { prompt: "Which city?" } },
            }],
          },
          { steps: [{ text: "Thanks", delay_ms: 300 }] },
        ],
      }],
    },
  }, async (cap) => {
    const t = await submit(cap.base, "ask me");
    const waiting = await waitTask(
      cap.base,
      t.id,
      (x) => x.status.state === "TASK_STATE_INPUT_REQUIRED",
    );
    // deno-lint-ignore no-explicit-any
    assert.equal((waiting as any).artifacts[0].artifactId, "prompt");
    for (const id of IDS) {
      const a = await call(
        cap.base,
        "SendMessage",
        message("Paris", { taskId: t.id, contextId: "ctx_other" }),
        { id },
      );
      assertRpcError(
        a,
        id,
        -32602,
        `Invalid params: message.contextId ctx_other does not match task ${t.id}, whose contextId is ${t.contextId}`,
      );
    }
    const still = await call(cap.base, "GetTask", { id: t.id });
    assert.equal(still.json.result.status.state, "TASK_STATE_INPUT_REQUIRED");
    const r = await call(
      cap.base,
      "SendMessage",
      message("Paris", { taskId: t.id, contextId: t.contextId }, { returnImmediately: true }),
    );
    assert.equal(r.json.result.task.status.state, "TASK_STATE_WORKING", r.text);
    const end = await waitTask(cap.base, t.id, (x) => x.status.state === "TASK_STATE_COMPLETED");
    // deno-lint-ignore no-explicit-any
    assert.equal((end as any).artifacts[0].parts[0].text, "Thanks");
  });
});

Deno.test("attachments route: 405 with allow: GET, 404 for unknown tasks, bad hashes and extra segments", async () => {
  await withCapsule(queue, async (cap) => {
    const t = await submit(cap.base, "quick");
    const sha = "a".repeat(64);
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${cap.base}/attachments/${t.id}/${sha}`, { method });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get("allow"), "GET");
      assert.equal(await res.text(), "");
    }
    for (
      const path of [
        `/attachments/${t.id}/${sha}`,
        `/attachments/tsk_unknown/${sha}`,
        `/attachments/${t.id}/xyz`,
        `/attachments/${t.id}/${sha}/more`,
        `/attachments/${t.id}`,
        `/attachments/`,
        `/attachments/${t.id}/${sha}?x=1`,
      ]
    ) {
      const res = await fetch(cap.base + path);
      assert.equal(res.status, 404, path);
      assert.equal(await res.text(), "");
    }
  });
});

Deno.test("raw HTTP: a JSON-RPC answer is 200 application/json with content-length", async () => {
  await withCapsule(queue, async (cap) => {
    const raw = await rawPost(portOf(cap), rpcBody("GetTask", { id: "tsk_x" }, "raw"), [
      "a2a-version: 1.0",
    ]);
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.headers.get("content-type"), ["application/json"]);
    assert.equal(Number(raw.headers.get("content-length")?.[0]), raw.body.length);
    assert.equal(JSON.parse(new TextDecoder().decode(raw.body)).id, "raw");
    // A request line the server cannot parse does not take the door down.
    const junk = await rawRequest(portOf(cap), "NOT HTTP\r\n\r\n");
    assert.ok(junk.status === 400 || junk.closed);
    const again = await call(cap.base, "ListTasks", {});
    assert.equal(again.json.result.totalSize, 0);
  });
});
