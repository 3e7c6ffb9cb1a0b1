/**
 * The method spec (src/a2a/spec.ts) on its own, as a table: per method, params it takes (read in
 * either ProtoJSON spelling, `null` as absent) and the exact refusal of each fault, the first in
 * field order. The same refusals on the wire are tests/door/bad_input_test.ts and
 * tests/door/push_bad_input_test.ts; this table pins what each schema reads.
 */
import assert from "node:assert/strict";
import { parseParams, type SpecMethod, specMethods } from "../../src/a2a/spec.ts";

const msg = (m: Record<string, unknown> = {}) => ({
  messageId: "m1",
  role: "ROLE_USER",
  parts: [{ text: "hi" }],
  ...m,
});

// [method, params, the refusal (null: taken)]
const ROWS: [SpecMethod, unknown, string | null][] = [
  ["SendMessage", { message: msg() }, null],
  ["SendMessage", { message: 5 }, "Invalid params: params.message must be an A2A Message object"],
  ["SendMessage", {}, "Invalid params: params.message must be an A2A Message object"],
  [
    "SendMessage",
    { message: msg({ messageId: "" }) },
    "Invalid params: message.messageId must be a non-empty string",
  ],
  [
    "SendMessage",
    { message: { message_id: "m", role: "ROLE_USER", parts: [{ text: "x" }] } },
    null,
  ],
  ["SendMessage", { message: msg({ messageId: null, message_id: "m" }) }, null],
  [
    "SendMessage",
    { message: msg({ role: "ROLE_AGENT" }) },
    "Invalid params: message.role must be ROLE_USER: a message to this agent is from the user",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [] }) },
    "Invalid params: message.parts must be a non-empty array",
  ],
  [
    "SendMessage",
    { message: msg({ parts: "x" }) },
    "Invalid params: message.parts must be a non-empty array",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [{ text: "a" }, 7] }) },
    "Invalid params: message.parts[1] is not an object",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [{ text: "a" }, {}] }) },
    "Invalid params: message.parts[1] sets none of text, raw, url and data",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [{ text: "a", data: 1 }] }) },
    "Invalid params: message.parts[0] sets text and data; a part sets exactly one of text, raw, url and data",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [{ text: null }] }) },
    "Invalid params: message.parts[0].text is not a string",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [{ data: {}, media_type: 3 }] }) },
    "Invalid params: message.parts[0].mediaType is not a string",
  ],
  [
    "SendMessage",
    { message: msg({ parts: [{ data: {}, filename: 3 }] }) },
    "Invalid params: message.parts[0].filename is not a string",
  ],
  [
    "SendMessage",
    { message: msg({ taskId: 3 }) },
    "Invalid params: message.taskId must be a string",
  ],
  [
    "SendMessage",
    { message: msg({ context_id: 3 }) },
    "Invalid params: message.contextId must be a string",
  ],
  [
    "SendMessage",
    { message: msg({ referenceTaskIds: "t" }) },
    "Invalid params: message.referenceTaskIds must be an array",
  ],
  [
    "SendMessage",
    { message: msg({ reference_task_ids: ["t", ""] }) },
    "Invalid params: message.referenceTaskIds must hold non-empty strings",
  ],
  ["SendMessage", {
    message: msg({ referenceTaskIds: Array.from({ length: 17 }, (_, i) => `t${i}`) }),
  }, "Invalid params: message.referenceTaskIds names 17 tasks; at most 16 may be referenced"],
  [
    "SendMessage",
    { message: msg({ referenceTaskIds: Array.from({ length: 17 }, () => "t") }) },
    null,
  ],
  [
    "SendMessage",
    { message: msg(), configuration: 3 },
    "Invalid params: configuration must be a SendMessageConfiguration object",
  ],
  ["SendMessage", { message: msg(), configuration: null }, null],
  [
    "SendMessage",
    { message: msg(), configuration: { return_immediately: "yes" } },
    "Invalid params: configuration.returnImmediately must be a boolean",
  ],
  [
    "SendMessage",
    { message: msg(), configuration: { historyLength: -1 } },
    "Invalid params: configuration.historyLength must be a non-negative integer",
  ],
  // The first fault in field order answers: the message before its configuration.
  [
    "SendMessage",
    { message: msg({ role: "x" }), configuration: 3 },
    "Invalid params: message.role must be ROLE_USER: a message to this agent is from the user",
  ],
  ["SendStreamingMessage", { message: msg(), configuration: 3 }, null],
  [
    "SendStreamingMessage",
    { message: msg(), configuration: { history_length: "x" } },
    "Invalid params: configuration.historyLength must be a non-negative integer",
  ],
  ["SubscribeToTask", { id: "t" }, null],
  ["SubscribeToTask", { id: "" }, "Invalid params: SubscribeToTask requires an id"],
  ["SubscribeToTask", 5, "Invalid params: SubscribeToTask requires an id"],
  ["GetTask", { id: "t", history_length: "2" }, null],
  ["GetTask", { id: "" }, "GetTask requires an id"],
  [
    "GetTask",
    { id: "t", historyLength: 1.5 },
    "Invalid params: historyLength must be a non-negative integer",
  ],
  ["CancelTask", { id: "" }, null],
  ["CancelTask", { id: 4 }, "Invalid params: CancelTask requires an id"],
  ["ListTasks", {}, null],
  ["ListTasks", { contextId: 1 }, "Invalid params: contextId must be a string"],
  [
    "ListTasks",
    { status: "DONE" },
    'Invalid params: status "DONE" is not a TaskState; give a TASK_STATE_* name',
  ],
  ["ListTasks", { page_size: "0" }, "Invalid params: pageSize must be an integer from 1 to 100"],
  ["ListTasks", { pageSize: 1e308 }, "Invalid params: pageSize must be an integer from 1 to 100"],
  [
    "ListTasks",
    { statusTimestampAfter: "yesterday" },
    "Invalid params: statusTimestampAfter must be an RFC 3339 timestamp such as 2026-10-13T09:00:00.123Z",
  ],
  ["ListTasks", { includeArtifacts: "true" }, "Invalid params: includeArtifacts must be a boolean"],
  ["ListTasks", { pageToken: 5 }, "Invalid params: pageToken must be a string"],
  ["murmur.PollSession", { cursor: "12", waitSecs: 0, maxEvents: 1 }, null],
  [
    "murmur.PollSession",
    { waitSecs: 31 },
    "Invalid params: waitSecs must be an integer from 0 to 30",
  ],
  [
    "murmur.PollSession",
    { max_events: 0 },
    "Invalid params: maxEvents must be an integer from 1 to 512",
  ],
  ["murmur.WatchSession", {}, null],
  ["murmur.StopSession", {}, null],
  ["GetExtendedAgentCard", {}, null],
  ["CreateTaskPushNotificationConfig", { task_id: "t", url: "http://x/" }, null],
  [
    "CreateTaskPushNotificationConfig",
    { url: "http://x/" },
    "Invalid params: CreateTaskPushNotificationConfig requires a taskId",
  ],
  [
    "GetTaskPushNotificationConfig",
    { taskId: "t" },
    "Invalid params: GetTaskPushNotificationConfig requires an id: the config's id",
  ],
  [
    "ListTaskPushNotificationConfigs",
    { taskId: "t", pageSize: -1 },
    "Invalid params: pageSize must be a non-negative integer",
  ],
  [
    "ListTaskPushNotificationConfigs",
    { taskId: "t", pageToken: 5 },
    "Invalid params: pageToken must be a string",
  ],
  [
    "DeleteTaskPushNotificationConfig",
    { taskId: "t", id: "" },
    "Invalid params: DeleteTaskPushNotificationConfig requires an id: the config's id",
  ],
];

Deno.test("method spec: each row's params are taken or refused with exactly its message", () => {
  for (const [method, params, refusal] of ROWS) {
    const r = parseParams(method, params);
    const got = r.ok ? null : r.message;
    assert.equal(got, refusal, `${method} ${JSON.stringify(params).slice(0, 120)}`);
  }
});

Deno.test("method spec: every method has a schema and a row here", () => {
  const covered = new Set(ROWS.map(([m]) => m));
  assert.deepEqual(specMethods().filter((m) => !covered.has(m)), []);
});

Deno.test("method spec: what a handler is given is the method's params, read", () => {
  const send = parseParams("SendMessage", {
    message: msg({ task_id: "", reference_task_ids: ["a", "a", "b"], metadata: { k: 1 } }),
    configuration: { return_immediately: true, history_length: "3" },
  });
  assert.ok(send.ok);
  assert.equal(send.params.message.taskId, "");
  assert.deepEqual(send.params.message.referenceTaskIds, ["a", "b"]);
  assert.deepEqual(send.params.message.metadata, { k: 1 });
  assert.equal(send.params.configuration?.returnImmediately, true);
  assert.equal(send.params.configuration?.historyLength, 3);
  const list = parseParams("ListTasks", {
    status: 3,
    statusTimestampAfter: "2026-10-13T09:00:00Z",
    page_size: "7",
    context_id: null,
  });
  assert.ok(list.ok);
  assert.equal(list.params.status, "TASK_STATE_COMPLETED");
  assert.equal(list.params.statusTimestampAfter, Date.parse("2026-10-13T09:00:00Z"));
  assert.equal(list.params.pageSize, 7);
  assert.equal(list.params.contextId, undefined);
  const unspecified = parseParams("ListTasks", { status: "TASK_STATE_UNSPECIFIED" });
  assert.ok(unspecified.ok);
  assert.equal(unspecified.params.status, undefined);
});
