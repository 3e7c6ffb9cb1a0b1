/**
 * The real `@a2a-js/sdk` 1.3.0 client over the HTTP+JSON binding (docs/door.md: HTTP+JSON):
 * it reads the card, picks the HTTP+JSON interface (the only transport it is given), and sends,
 * streams, subscribes, gets, lists and cancels at the REST routes (the requests it made are
 * recorded and checked); the door's refusals reach it as the SDK's typed REST errors, including
 * the push-config calls, which this door answers PushNotificationNotSupported.
 */
import assert from "node:assert/strict";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import { capsule } from "./helpers.ts";
import { q, sdkMessage as msg, taskOf } from "../helpers/sdk.ts";

/** Requests the client made, as `METHOD path?query`; the card names localhost, we dial 127.0.0.1. */
function recordingFetch(seen: string[]): typeof fetch {
  return (input, init) => {
    const raw = String(input instanceof Request ? input.url : input);
    const url = raw.replace("//localhost:", "//127.0.0.1:");
    const u = new URL(url);
    seen.push(`${init?.method ?? "GET"} ${u.pathname}${u.search}`);
    return fetch(url, init);
  };
}

function restClient(base: string, seen: string[]): Promise<Client> {
  const fetchImpl = recordingFetch(seen);
  // Only the REST factory (createFrom would merge in the default JSON-RPC one), and it preferred.
  const factory = new ClientFactory({
    transports: [new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    preferredTransports: ["HTTP+JSON"],
  });
  return factory.createFromUrl(base);
}

/** A REST error of the SDK: its class name and HTTP status. */
function restError(name: string, status: number) {
  return (e: Error & { statusCode?: number; transport?: string }) => {
    assert.equal(e.name, name, `${e.name}: ${e.message}`);
    assert.equal(e.statusCode, status, e.message);
    assert.equal(e.transport, "rest");
    return true;
  };
}

Deno.test("SDK client over HTTP+JSON: send, stream, subscribe, get, list, cancel, typed errors", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
    script: {
      tasks: [
        {
          match: "^slow",
          turns: [{ steps: [{ text: "slow ", delay_ms: 400 }, { text: "answer", delay_ms: 400 }] }],
        },
        { match: "^hold", turns: [{ steps: [{ text: "held", delay_ms: 30_000 }] }] },
        { turns: [{ steps: [{ text: "done" }] }] },
      ],
    },
  });
  try {
    const seen: string[] = [];
    const c = await restClient(cap.base, seen);
    const card = await c.getAgentCard();
    assert.deepEqual(
      card.supportedInterfaces.map((i) => i.protocolBinding),
      ["JSONRPC", "HTTP+JSON"],
    );

    const done = taskOf(await c.sendMessage(q({ message: msg("hello") })));
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(done.artifacts[0].parts[0].content.value, "done");

    // A stream: the task first, then its updates, ending at the terminal status.
    const cases: string[] = [];
    let last: number | undefined;
    let answer = "";
    let streamed = "";
    for await (const ev of c.sendMessageStream(q({ message: msg("slow stream") }))) {
      // deno-lint-ignore no-explicit-any
      const p = (ev as any).payload;
      cases.push(p.$case);
      if (p.$case === "task") streamed = p.value.id;
      if (p.$case === "statusUpdate") last = p.value.status.state;
      if (p.$case === "artifactUpdate") {
        answer = p.value.artifact.parts.map((x: { content: { value: string } }) => x.content.value)
          .join("");
      }
    }
    assert.equal(cases[0], "task");
    assert.equal(last, TaskState.TASK_STATE_COMPLETED);
    assert.equal(answer, "slow answer");

    // Activated by A2A-Extensions: murmur's frames ride in the StreamResponses the SDK parses.
    const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
    const activated = {
      serviceParameters: ServiceParameters.create(withA2AExtensions(STREAM_URI)),
    };
    const frames: string[] = [];
    for await (const ev of c.sendMessageStream(q({ message: msg("slow frames") }), activated)) {
      // deno-lint-ignore no-explicit-any
      const p = (ev as any).payload;
      const f = p.value?.metadata?.[STREAM_URI];
      if (f) frames.push(f.frame);
    }
    assert.ok(frames.includes("text"), `frames: ${frames}`);

    // Subscribe to a task taken with returnImmediately, while it works.
    const bg = taskOf(
      await c.sendMessage(
        q({ message: msg("slow bg"), configuration: { returnImmediately: true } }),
      ),
    );
    assert.equal(bg.status.state, TaskState.TASK_STATE_SUBMITTED);
    const sub: string[] = [];
    let subLast: number | undefined;
    for await (const ev of c.resubscribeTask(q({ id: bg.id }))) {
      // deno-lint-ignore no-explicit-any
      const p = (ev as any).payload;
      sub.push(p.$case);
      if (p.$case === "statusUpdate") subLast = p.value.status.state;
    }
    assert.equal(sub[0], "task");
    assert.equal(subLast, TaskState.TASK_STATE_COMPLETED);

    const got = await c.getTask(q({ id: done.id, historyLength: 1 }));
    assert.equal(got.id, done.id);
    assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);

    const page = await c.listTasks(q({
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 2,
      includeArtifacts: true,
    }));
    assert.equal(page.totalSize, 4);
    assert.equal(page.tasks.length, 2);
    assert.ok(page.tasks[0].artifacts.length > 0);
    const next = await c.listTasks(q({
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 2,
      pageToken: page.nextPageToken,
    }));
    assert.equal(next.tasks.length, 2);
    assert.equal(next.nextPageToken, "");
    assert.equal(new Set([...page.tasks, ...next.tasks].map((t) => t.id)).size, 4);
    for (const id of [done.id, streamed, bg.id]) {
      assert.ok([...page.tasks, ...next.tasks].some((t) => t.id === id), id);
    }

    const held = taskOf(
      await c.sendMessage(q({ message: msg("hold"), configuration: { returnImmediately: true } })),
    );
    const canceled = await c.cancelTask(q({ id: held.id }));
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);

    // Refusals, as the SDK's typed REST errors.
    await assert.rejects(
      () => c.cancelTask(q({ id: held.id })),
      restError("TaskNotCancelableError", 400),
    );
    await assert.rejects(
      () => c.getTask(q({ id: "tsk_nope" })),
      restError("TaskNotFoundError", 404),
    );
    await assert.rejects(
      () => c.sendMessage(q({ message: { ...msg("x"), role: Role.ROLE_AGENT } })),
      restError("RequestMalformedError", 400),
    );
    await assert.rejects(
      async () => {
        for await (const _ of c.resubscribeTask(q({ id: done.id }))) { /* refused before */ }
      },
      restError("UnsupportedOperationError", 400),
    );
    // The client refuses create/get/list itself when the card says pushNotifications: false;
    // delete goes out, and so do all four through the transport itself.
    await assert.rejects(
      () => c.deleteTaskPushNotificationConfig(q({ taskId: done.id, id: "cfg" })),
      restError("PushNotificationNotSupportedError", 400),
    );
    const transport = await new RestTransportFactory({ fetchImpl: recordingFetch(seen) }).create(
      card.supportedInterfaces[1].url,
      card,
    );
    // The transport alone sends no A2A-Version (the Client adds it): given here.
    const v1 = { serviceParameters: { "A2A-Version": "1.0" } };
    const cfg = { taskId: done.id, id: "cfg", url: "https://example.com/hook" };
    for (
      const f of [
        () => transport.createTaskPushNotificationConfig(q(cfg), v1),
        () => transport.getTaskPushNotificationConfig(q({ taskId: done.id, id: "cfg" }), v1),
        () => transport.listTaskPushNotificationConfig(q({ taskId: done.id }), v1),
      ]
    ) await assert.rejects(f, restError("PushNotificationNotSupportedError", 400));

    // Every call went to a REST route, none to the JSON-RPC endpoint.
    assert.equal(seen.filter((s) => s === "POST /").length, 0, seen.join("\n"));
    for (
      const route of [
        "POST /message:send",
        "POST /message:stream",
        `POST /tasks/${bg.id}:subscribe`,
        `GET /tasks/${done.id}?historyLength=1`,
        `POST /tasks/${held.id}:cancel`,
        "GET /tasks?status=TASK_STATE_COMPLETED&pageSize=2&includeArtifacts=true",
        `DELETE /tasks/${done.id}/pushNotificationConfigs/cfg`,
        `POST /tasks/${done.id}/pushNotificationConfigs`,
      ]
    ) assert.ok(seen.includes(route), `${route} not in:\n${seen.join("\n")}`);
  } finally {
    await cap.close();
  }
});

Deno.test("SDK client over HTTP+JSON: the push-config routes of a door with push on", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    network: { push_notifications: { enabled: true, allow_private: true } },
    script: { tasks: [{ turns: [{ steps: [{ text: "waited", delay_ms: 600_000 }] }] }] },
  });
  try {
    const seen: string[] = [];
    const c = await restClient(cap.base, seen);
    const t = taskOf(
      await c.sendMessage(q({ message: msg("wait"), configuration: { returnImmediately: true } })),
    );
    const made = await c.createTaskPushNotificationConfig(q({
      taskId: t.id,
      id: "cfg-1",
      url: "http://127.0.0.1:9/hook",
      token: "tok",
    }));
    assert.equal(made.id, "cfg-1");
    assert.equal(made.taskId, t.id);
    const got = await c.getTaskPushNotificationConfig(q({ taskId: t.id, id: "cfg-1" }));
    assert.equal(got.url, "http://127.0.0.1:9/hook");
    const listed = await c.listTaskPushNotificationConfig(q({ taskId: t.id }));
    assert.deepEqual(listed.configs.map((x) => x.id), ["cfg-1"]);
    await c.deleteTaskPushNotificationConfig(q({ taskId: t.id, id: "cfg-1" }));
    // Idempotent: deleting again is no error.
    await c.deleteTaskPushNotificationConfig(q({ taskId: t.id, id: "cfg-1" }));
    await assert.rejects(
      () => c.getTaskPushNotificationConfig(q({ taskId: t.id, id: "cfg-1" })),
      restError("TaskNotFoundError", 404),
    );
    for (
      const route of [
        `POST /tasks/${t.id}/pushNotificationConfigs`,
        `GET /tasks/${t.id}/pushNotificationConfigs/cfg-1`,
        `GET /tasks/${t.id}/pushNotificationConfigs`,
        `DELETE /tasks/${t.id}/pushNotificationConfigs/cfg-1`,
      ]
    ) assert.ok(seen.includes(route), `${route} not in:\n${seen.join("\n")}`);
    await c.cancelTask(q({ id: t.id }));
  } finally {
    await cap.close();
  }
});
