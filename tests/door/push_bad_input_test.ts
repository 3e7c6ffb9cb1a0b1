/**
 * Bad input to every push method and to an inline config (docs/push.md): each is
 * refused with its code and a message naming the field and why, and changes nothing — no config
 * stored, no task started, no trace line.
 */
import { assertRpcError, call, capsule, message, submit, traceOf } from "./helpers.ts";
import assert from "node:assert/strict";

const PUSH_ON = { push_notifications: { enabled: true, allow_private: true } };

Deno.test("push methods: bad params refused -32602 / -32001 with the field and why; nothing stored", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    network: PUSH_ON,
    script: { tasks: [{ turns: [{ steps: [{ text: "w", delay_ms: 600_000 }] }] }] },
  });
  try {
    const task = await submit(cap.base, "hold");
    const t = task.id;
    const bad = (m: string) => `Invalid params: ${m}`;
    const cases: [string, unknown, number, string][] = [
      [
        "CreateTaskPushNotificationConfig",
        { url: "http://a.b/" },
        -32602,
        bad("CreateTaskPushNotificationConfig requires a taskId"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: 7, url: "http://a.b/" },
        -32602,
        bad("CreateTaskPushNotificationConfig requires a taskId"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: "tsk_nope", url: "http://a.b/" },
        -32001,
        "Task not found",
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t },
        -32602,
        bad("url is required: the receiver's http(s) URL"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: 5 },
        -32602,
        bad("url is required: the receiver's http(s) URL"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", id: "a b" },
        -32602,
        bad("id must be a string of 1 to 128 visible ASCII characters"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", id: 3 },
        -32602,
        bad("id must be a string of 1 to 128 visible ASCII characters"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", token: 1 },
        -32602,
        bad("token must be a string"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", token: "a\r\nb" },
        -32602,
        bad("token holds a character an HTTP header cannot carry (a line break or non-ASCII)"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", token: "x".repeat(4097) },
        -32602,
        bad("token is 4097 characters long; at most 4096 are taken"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", authentication: "Bearer x" },
        -32602,
        bad("authentication must be an AuthenticationInfo object {scheme, credentials}"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", authentication: { credentials: "x" } },
        -32602,
        bad("authentication.scheme must be an HTTP authentication scheme such as Bearer"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: t, url: "http://127.0.0.1/", authentication: { scheme: "Bea rer" } },
        -32602,
        bad("authentication.scheme must be an HTTP authentication scheme such as Bearer"),
      ],
      [
        "CreateTaskPushNotificationConfig",
        {
          taskId: t,
          url: "http://127.0.0.1/",
          authentication: { scheme: "Bearer", credentials: "é" },
        },
        -32602,
        bad(
          "authentication.credentials holds a character an HTTP header cannot carry (a line break or non-ASCII)",
        ),
      ],
      [
        "GetTaskPushNotificationConfig",
        { id: "c" },
        -32602,
        bad("GetTaskPushNotificationConfig requires a taskId"),
      ],
      [
        "GetTaskPushNotificationConfig",
        { taskId: t },
        -32602,
        bad("GetTaskPushNotificationConfig requires an id: the config's id"),
      ],
      ["GetTaskPushNotificationConfig", { taskId: "tsk_nope", id: "c" }, -32001, "Task not found"],
      [
        "ListTaskPushNotificationConfigs",
        {},
        -32602,
        bad("ListTaskPushNotificationConfigs requires a taskId"),
      ],
      [
        "ListTaskPushNotificationConfigs",
        { taskId: t, pageSize: -1 },
        -32602,
        bad("pageSize must be a non-negative integer"),
      ],
      [
        "ListTaskPushNotificationConfigs",
        { taskId: t, pageToken: 5 },
        -32602,
        bad("pageToken must be a string"),
      ],
      [
        "ListTaskPushNotificationConfigs",
        { taskId: t, pageToken: "abc" },
        -32602,
        bad("pageToken is not a nextPageToken this door issued; start again without it"),
      ],
      ["ListTaskPushNotificationConfigs", { taskId: "tsk_nope" }, -32001, "Task not found"],
      [
        "DeleteTaskPushNotificationConfig",
        { taskId: t, id: "" },
        -32602,
        bad("DeleteTaskPushNotificationConfig requires an id: the config's id"),
      ],
      [
        "DeleteTaskPushNotificationConfig",
        { id: "c" },
        -32602,
        bad("DeleteTaskPushNotificationConfig requires a taskId"),
      ],
      [
        "DeleteTaskPushNotificationConfig",
        { taskId: "tsk_nope", id: "c" },
        -32001,
        "Task not found",
      ],
    ];
    for (const [method, params, code, msg] of cases) {
      const a = await call(cap.base, method, params);
      assertRpcError(a, 1, code, msg);
    }
    const where = "configuration.taskPushNotificationConfig";
    const inline: [unknown, string][] = [
      ["http://127.0.0.1/", bad(`${where} must be a TaskPushNotificationConfig object`)],
      [{ url: "http://127.0.0.1/", taskId: 4 }, bad(`${where}.taskId must be a string`)],
      [
        { url: "http://127.0.0.1/", taskId: t },
        bad(`${where}.taskId ${t} is not the task this message goes to; leave it empty`),
      ],
      [{}, bad(`${where}.url is required: the receiver's http(s) URL`)],
      [
        { url: "http://127.0.0.1/", token: "\n" },
        bad(
          `${where}.token holds a character an HTTP header cannot carry (a line break or non-ASCII)`,
        ),
      ],
    ];
    for (const [cfg, msg] of inline) {
      for (const method of ["SendMessage", "SendStreamingMessage"]) {
        const a = await call(
          cap.base,
          method,
          message("x", {}, { returnImmediately: true, taskPushNotificationConfig: cfg }),
        );
        assertRpcError(a, 1, -32602, msg);
      }
    }
    const l = await call(cap.base, "ListTaskPushNotificationConfigs", { taskId: t });
    assert.deepEqual(l.json.result, { configs: [] });
    const tasks = await call(cap.base, "ListTasks", {});
    assert.equal(tasks.json.result.totalSize, 1, "no refused send started a task");
    const trace = await traceOf(cap);
    assert.equal(trace.filter((x) => String(x.event_type).startsWith("push_")).length, 0);
  } finally {
    await cap.close();
  }
});
