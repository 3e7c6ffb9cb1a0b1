/**
 * Push notifications (docs/push.md; src/push/, src/door/push_methods.ts) on a real
 * capsule with real receivers on loopback: the manifest switch and the card, the four config
 * methods through the `@a2a-js/sdk` client and raw (the conformance kit's snake_case `task_id`),
 * an inline config whose receiver verifies every signature and sees every update once and in
 * order, SSRF refusals, and a redirect that is not followed.
 */
import assert from "node:assert/strict";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { until } from "../helpers/until.ts";
import { startReceiver } from "../helpers/webhook_receiver.ts";
import {
  assertRpcError,
  call,
  capsule,
  DOOR_URI,
  errorInfo,
  message,
  submit,
  traceOf,
  waitTask,
} from "./helpers.ts";
import type { Capsule } from "../helpers/capsule.ts";
import { q } from "../helpers/sdk.ts";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";

const PUSH_ON = { push_notifications: { enabled: true, allow_private: true } };
const QUEUE = { task_acceptance: "queue", after_task: "sleep" };

const SCRIPT = {
  tasks: [
    { match: "^wait", turns: [{ steps: [{ text: "waited", delay_ms: 600_000 }] }] },
    { turns: [{ steps: [{ thinking: "hm" }, { text: "answer ✓" }] }] },
  ],
};

function pushCapsule(network: Record<string, unknown> = PUSH_ON, env?: Record<string, string>) {
  return capsule({ lifecycle: QUEUE, network, script: SCRIPT, env });
}

// deno-lint-ignore no-explicit-any
const secretOf = (cap: Capsule) => (cap.ready as any).push_secret as string;

function loopbackFetch(): typeof fetch {
  return (input, init) => {
    const url = String(input instanceof Request ? input.url : input).replace(
      "//localhost:",
      "//127.0.0.1:",
    );
    return fetch(input instanceof Request ? new Request(url, input) : url, init);
  };
}

function sdkClient(base: string): Promise<Client> {
  const fetchImpl = loopbackFetch();
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  ).createFromUrl(base);
}

Deno.test("push on: the card says pushNotifications: true and lists the four methods; the readiness line has the secret", async () => {
  const cap = await pushCapsule();
  try {
    const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
    assert.equal(card.capabilities.pushNotifications, true);
    const door = card.capabilities.extensions.find((e: { uri: string }) => e.uri === DOOR_URI);
    for (
      const m of [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
      ]
    ) assert.ok(door.params.methods.includes(m), m);
    assert.match(secretOf(cap), /^whsec_[A-Za-z0-9+/]{43}=$/);
  } finally {
    await cap.close();
  }
});

Deno.test("push off (the default): an inline config is refused -32003 and starts no task", async () => {
  const cap = await capsule({ lifecycle: QUEUE, script: SCRIPT });
  try {
    assert.equal("push_secret" in cap.ready, false);
    const a = await call(
      cap.base,
      "SendMessage",
      message("hi", {}, {
        returnImmediately: true,
        taskPushNotificationConfig: { url: "https://example.com/hook" },
      }),
    );
    assertRpcError(
      a,
      1,
      -32003,
      "Push notifications are not supported: this agent's card says pushNotifications: false; follow the task with SubscribeToTask or murmur.WatchSession",
    );
    const tasks = await call(cap.base, "ListTasks", {});
    assert.equal(tasks.json.result.totalSize, 0);
  } finally {
    await cap.close();
  }
});

Deno.test("push config methods through the @a2a-js/sdk client: create keeps the client's id, get, list, delete twice", async () => {
  const cap = await pushCapsule();
  try {
    const task = await submit(cap.base, "wait here");
    const client = await sdkClient(cap.base);
    const created = await client.createTaskPushNotificationConfig(q({
      taskId: task.id,
      id: "cfg-1",
      url: "http://127.0.0.1:9/hook",
      token: "tok",
      authentication: { scheme: "Bearer", credentials: "abc" },
    }));
    assert.equal(created.id, "cfg-1");
    assert.equal(created.taskId, task.id);
    assert.equal(created.url, "http://127.0.0.1:9/hook");
    assert.equal(created.token, "tok");
    assert.equal(created.authentication?.scheme, "Bearer");
    const got = await client.getTaskPushNotificationConfig(q({ taskId: task.id, id: "cfg-1" }));
    assert.deepEqual(got, created);
    await client.createTaskPushNotificationConfig(q({
      taskId: task.id,
      url: "http://127.0.0.1:9/other",
    }));
    const listed = await client.listTaskPushNotificationConfig(q({ taskId: task.id }));
    assert.equal(listed.configs.length, 2);
    assert.deepEqual(listed.configs[0], created);
    assert.match(listed.configs[1].id, /^[0-9a-f-]{36}$/);
    await client.deleteTaskPushNotificationConfig(q({ taskId: task.id, id: "cfg-1" }));
    await client.deleteTaskPushNotificationConfig(q({ taskId: task.id, id: "cfg-1" }));
    const after = await client.listTaskPushNotificationConfig(q({ taskId: task.id }));
    assert.deepEqual(after.configs.map((c) => c.url), ["http://127.0.0.1:9/other"]);
    await assert.rejects(
      client.getTaskPushNotificationConfig(q({ taskId: task.id, id: "cfg-1" })),
      (e: Error) => e.constructor.name.includes("TaskNotFound"),
    );
    await assert.rejects(
      client.createTaskPushNotificationConfig(q({ taskId: "tsk_nope", url: "http://a.b/" })),
      (e: Error) => e.constructor.name.includes("TaskNotFound"),
    );
    const trace = await traceOf(cap);
    assert.deepEqual(
      trace.filter((l) => l.event_type === "push_config").map((l) => [l.config_id, l.action]),
      [["cfg-1", "created"], [listed.configs[1].id, "created"], ["cfg-1", "deleted"]],
    );
  } finally {
    await cap.close();
  }
});

Deno.test("push config methods raw: snake_case task_id, Delete answers {} and is idempotent, missing config -32001", async () => {
  const cap = await pushCapsule();
  try {
    const task = await submit(cap.base, "wait here");
    const c = await call(cap.base, "CreateTaskPushNotificationConfig", {
      task_id: task.id,
      id: "tck-push-01ab",
      url: "http://localhost:9/webhook",
      authentication: { scheme: "Bearer", credentials: "xyz" },
    });
    assert.deepEqual(c.json.result, {
      id: "tck-push-01ab",
      taskId: task.id,
      url: "http://localhost:9/webhook",
      authentication: { scheme: "Bearer", credentials: "xyz" },
    });
    const g = await call(cap.base, "GetTaskPushNotificationConfig", {
      task_id: task.id,
      id: "tck-push-01ab",
    });
    assert.deepEqual(g.json.result, c.json.result);
    const l = await call(cap.base, "ListTaskPushNotificationConfigs", { task_id: task.id });
    assert.deepEqual(l.json.result, { configs: [c.json.result] });
    for (let i = 0; i < 2; i++) {
      const d = await call(cap.base, "DeleteTaskPushNotificationConfig", {
        task_id: task.id,
        id: "tck-push-01ab",
      });
      assert.deepEqual(d.json.result, {}, d.text);
    }
    const gone = await call(cap.base, "GetTaskPushNotificationConfig", {
      taskId: task.id,
      id: "tck-push-01ab",
    });
    assertRpcError(
      gone,
      1,
      -32001,
      `Push notification config not found: task ${task.id} has no config tck-push-01ab of yours`,
    );
    assert.equal(errorInfo(gone).reason, "TASK_NOT_FOUND");
    const unknown = await call(cap.base, "DeleteTaskPushNotificationConfig", {
      taskId: "tsk_nope",
      id: "x",
    });
    assertRpcError(unknown, 1, -32001, "Task not found");
  } finally {
    await cap.close();
  }
});

Deno.test("an inline config on SendMessage: every update of the task POSTed once, in order, signed, with the config's credentials", async () => {
  let secret = "";
  const rx = startReceiver(() => secret);
  const cap = await pushCapsule();
  secret = secretOf(cap);
  try {
    const a = await call(
      cap.base,
      "SendMessage",
      message("go", {}, {
        taskPushNotificationConfig: {
          url: rx.url(),
          token: "t-1",
          authentication: { scheme: "Bearer", credentials: "rx-cred" },
        },
      }),
    );
    const task = a.json.result.task;
    assert.equal(task.status.state, "TASK_STATE_COMPLETED", a.text);
    const got = await until("the final status delivered", () => {
      const u = rx.unique();
      return u.at(-1)?.body.statusUpdate?.status.state === "TASK_STATE_COMPLETED" ? u : undefined;
    });
    for (const d of rx.posts) {
      assert.equal(d.verified, true, `signature of ${d.id}`);
      assert.equal(d.contentType, "application/a2a+json");
      assert.equal(d.authorization, "Bearer rx-cred");
      assert.equal(d.notificationToken, "t-1");
      assert.ok(Math.abs(d.timestamp - Date.now() / 1000) < 300);
    }
    const ids = got.map((d) => Number(d.id));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y), "in the log's order");
    // The A2A events of the task and nothing else: plain statusUpdates and the response.
    const kinds = got.map((d) =>
      d.body.statusUpdate ? d.body.statusUpdate.status.state : "artifact"
    );
    // A task's first event is its WORKING status (a stream opens with the task itself).
    assert.deepEqual(kinds, [
      "TASK_STATE_WORKING",
      "artifact",
      "TASK_STATE_COMPLETED",
    ]);
    for (const d of got) {
      const ev = d.body.statusUpdate ?? d.body.artifactUpdate;
      assert.equal(ev.taskId, task.id);
      assert.equal(ev.metadata?.[STREAM_URI], undefined);
    }
    assert.equal(got[1].body.artifactUpdate.artifact.parts[0].text, "answer ✓");
    // The same ids a WatchSession gives those events.
    const poll = await call(cap.base, "murmur.PollSession", {});
    const byId = new Map(
      // deno-lint-ignore no-explicit-any
      poll.json.result.events.map((e: any) => [String(e.id), e.data]),
    );
    for (const d of got) assert.deepEqual(byId.get(d.id), d.body);
  } finally {
    await cap.close();
    await rx.close();
  }
});

Deno.test("SSRF: loopback, private, link-local and odd URLs refused -32602 naming why, nothing stored", async () => {
  const cap = await pushCapsule({ push_notifications: { enabled: true } });
  try {
    const task = await submit(cap.base, "wait here");
    const hint = "; a manifest may allow it with network.push_notifications.allow_private: true";
    const cases: [string, string][] = [
      ["http://127.0.0.1:8080/hook", `names 127.0.0.1, a loopback address (127.0.0.0/8)${hint}`],
      ["http://localhost/hook", `names localhost, a loopback host${hint}`],
      ["http://[::1]/hook", `names ::1, a loopback address (::1)${hint}`],
      ["http://2130706433/", `names 127.0.0.1, a loopback address (127.0.0.0/8)${hint}`],
      ["http://[::ffff:10.0.0.1]/", `names ::ffff:a00:1, a private address (10.0.0.0/8)${hint}`],
      [
        "http://169.254.169.254/latest/meta-data",
        `names 169.254.169.254, a link-local address (169.254.0.0/16)${hint}`,
      ],
      ["https://192.168.1.10/", `names 192.168.1.10, a private address (192.168.0.0/16)${hint}`],
      ["http://[fe80::1]/", `names fe80::1, a link-local address (fe80::/10)${hint}`],
      ["http://0.0.0.0/", `names 0.0.0.0, an unspecified address (0.0.0.0/8)${hint}`],
      ["ftp://example.com/x", "uses ftp:; only http and https are delivered to"],
      ["file:///etc/passwd", "uses file:; only http and https are delivered to"],
      [
        "http://user:pw@example.com/",
        "carries a user name or password; give the receiver's credentials in authentication instead",
      ],
      ["not a url", "is not an absolute URL"],
    ];
    for (const [url, why] of cases) {
      const a = await call(cap.base, "CreateTaskPushNotificationConfig", {
        taskId: task.id,
        url,
      });
      assertRpcError(a, 1, -32602, `Invalid params: url ${why}`);
      const s = await call(
        cap.base,
        "SendMessage",
        message("x", {}, { returnImmediately: true, taskPushNotificationConfig: { url } }),
      );
      assertRpcError(
        s,
        1,
        -32602,
        `Invalid params: configuration.taskPushNotificationConfig.url ${why}`,
      );
    }
    const l = await call(cap.base, "ListTaskPushNotificationConfigs", { taskId: task.id });
    assert.deepEqual(l.json.result, { configs: [] });
    const tasks = await call(cap.base, "ListTasks", {});
    assert.equal(tasks.json.result.totalSize, 1, "no refused send started a task");
    const trace = await traceOf(cap);
    assert.equal(trace.filter((l) => l.event_type === "push_config").length, 0);
  } finally {
    await cap.close();
  }
});

Deno.test("a receiver's redirect is not followed: the event is given up, the trace says why", async () => {
  let secret = "";
  const target = startReceiver(() => secret);
  const rx = startReceiver(() => secret, "redirect");
  rx.redirectTo = target.url("/elsewhere");
  const cap = await pushCapsule();
  secret = secretOf(cap);
  try {
    const task = await submit(cap.base, "wait here");
    await call(cap.base, "CreateTaskPushNotificationConfig", {
      taskId: task.id,
      id: "r",
      url: rx.url(),
    });
    await call(cap.base, "CancelTask", { id: task.id });
    await waitTask(cap.base, task.id, (t) => t.status.state === "TASK_STATE_CANCELED");
    const line = await until(
      "push_gave_up in the trace",
      async () => (await traceOf(cap)).find((l) => l.event_type === "push_gave_up"),
    );
    assert.equal(line.config_id, "r");
    assert.equal(line.attempts, 1);
    assert.equal(line.error, `HTTP 307: redirects are not followed (to ${rx.redirectTo})`);
    assert.equal(rx.posts.length, 1);
    assert.equal(target.posts.length, 0, "nothing reached the redirect's target");
  } finally {
    await cap.close();
    await rx.close();
    await target.close();
  }
});

Deno.test("a Create with an id the caller already has replaces that config: the old lane ends (push_end replaced), events go to the new URL", async () => {
  let secret = "";
  const a = startReceiver(() => secret);
  const b = startReceiver(() => secret);
  const cap = await pushCapsule();
  secret = secretOf(cap);
  try {
    const task = await submit(cap.base, "wait here");
    for (const rx of [a, b]) {
      const c = await call(cap.base, "CreateTaskPushNotificationConfig", {
        taskId: task.id,
        id: "same",
        url: rx.url(),
      });
      assert.equal(c.json.result.url, rx.url(), c.text);
    }
    const l = await call(cap.base, "ListTaskPushNotificationConfigs", { taskId: task.id });
    assert.deepEqual(l.json.result.configs.map((c: { url: string }) => c.url), [b.url()]);
    await call(cap.base, "CancelTask", { id: task.id });
    await until(
      "the canceled status at the new URL",
      () => b.unique().find((d) => d.body.statusUpdate?.status.state === "TASK_STATE_CANCELED"),
    );
    assert.equal(a.posts.length, 0);
    const trace = await traceOf(cap);
    assert.deepEqual(
      trace.filter((l) => l.event_type === "push_config").map((l) => l.action),
      ["created", "replaced"],
    );
    const end = trace.find((l) => l.event_type === "push_end")!;
    assert.equal(end.how, "replaced");
    assert.equal(end.url, new URL(a.url()).origin);
    assert.equal(end.undelivered, 0);
  } finally {
    await cap.close();
    await a.close();
    await b.close();
  }
});
