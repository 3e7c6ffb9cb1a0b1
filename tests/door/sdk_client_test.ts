/**
 * The real `@a2a-js/sdk` 1.3.0 client against a running capsule (docs/door.md): card
 * discovery, SendMessage blocking and returnImmediately, GetTask, ListTasks (status given
 * explicitly), CancelTask, the SDK's typed errors, and the extended card of an authenticated door.
 */
import assert from "node:assert/strict";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import { capsule, CAPSULE_URI, DOOR_URI } from "./helpers.ts";
import { q, sdkMessage as msg, taskOf } from "../helpers/sdk.ts";

/** The card names `localhost`; the door listens on 127.0.0.1, so requests go there. */
function loopbackFetch(token?: string): typeof fetch {
  const base: typeof fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input).replace(
      "//localhost:",
      "//127.0.0.1:",
    );
    return fetch(input instanceof Request ? new Request(url, input) : url, init);
  };
  if (!token) return base;
  return createAuthenticatingFetchWithRetry(base, {
    headers: () => Promise.resolve({ authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: () => Promise.resolve(undefined),
  });
}

function client(base: string, token?: string): Promise<Client> {
  const fetchImpl = loopbackFetch(token);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(base);
}

Deno.test("SDK client: send (blocking and returnImmediately), get, list, cancel, typed errors", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
  });
  try {
    const c = await client(cap.base);
    const card = await c.getAgentCard();
    assert.equal(card.name, "door");
    assert.equal(card.capabilities?.extendedAgentCard, false);

    // Blocking: answers once the task is terminal, with the response artifact.
    const done = taskOf(await c.sendMessage(q({ message: msg("hello") })));
    assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(done.artifacts[0].artifactId, "response");
    assert.equal(done.artifacts[0].parts[0].content.value, "done");
    assert.equal(done.status.message.parts[0].content.value, "task completed");
    assert.ok(done.status.timestamp);

    // returnImmediately: the task as taken.
    const slow = taskOf(
      await c.sendMessage(
        q({ message: msg("slow one"), configuration: { returnImmediately: true } }),
      ),
    );
    assert.equal(slow.status.state, TaskState.TASK_STATE_SUBMITTED);
    assert.match(slow.id, /^tsk_[0-9a-f]{32}$/);
    assert.match(slow.contextId, /^ctx_[0-9a-f]{32}$/);

    const got = await c.getTask(q({ id: done.id }));
    assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(got.id, done.id);

    const all = await c.listTasks(q({
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      includeArtifacts: true,
    }));
    assert.equal(all.totalSize, 2);
    assert.equal(all.pageSize, 1);
    assert.equal(all.tasks.length, 1);
    assert.ok(all.nextPageToken.length > 0);
    const rest = await c.listTasks(q({
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: all.nextPageToken,
    }));
    assert.equal(rest.tasks.length, 1);
    assert.equal(rest.nextPageToken, "");
    assert.deepEqual(new Set([all.tasks[0].id, rest.tasks[0].id]), new Set([done.id, slow.id]));
    const completed = await c.listTasks(q({
      status: TaskState.TASK_STATE_COMPLETED,
      includeArtifacts: true,
    }));
    assert.deepEqual(completed.tasks.map((t) => t.id), [done.id]);
    assert.equal(completed.tasks[0].artifacts[0].artifactId, "response");

    const canceled = await c.cancelTask(q({ id: slow.id }));
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.equal(
      // deno-lint-ignore no-explicit-any
      (canceled.status?.message?.parts[0].content as any).value,
      "task canceled",
    );

    await assert.rejects(
      () => c.cancelTask(q({ id: done.id })),
      (e: Error) => e.constructor.name.includes("TaskNotCancelable") && /already/.test(e.message),
    );
    await assert.rejects(
      () => c.getTask(q({ id: "tsk_nope" })),
      (e: Error) => e.constructor.name.includes("TaskNotFound"),
    );
    await assert.rejects(
      () => c.sendMessage(q({ message: { ...msg("x"), role: Role.ROLE_AGENT } })),
      (e: Error) => /ROLE_USER/.test(e.message),
    );
  } finally {
    await cap.close();
  }
});

Deno.test("SDK client: an authenticated door's extended card via GetExtendedAgentCard", async () => {
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
    const c = await client(cap.base, cap.ready.tokens!.reader);
    const card = await c.getAgentCard();
    const uris = (card.capabilities?.extensions ?? []).map((e) => e.uri);
    assert.deepEqual(uris.slice(0, 2), [DOOR_URI, CAPSULE_URI]);
    assert.equal(card.capabilities?.extendedAgentCard, true);
    const list = await c.listTasks(q({ status: TaskState.TASK_STATE_UNSPECIFIED }));
    assert.equal(list.totalSize, 0);
    // The reader may not send: the 403 reaches the SDK as an error.
    await assert.rejects(() => c.sendMessage(q({ message: msg("hi") })));
    const op = await client(cap.base, cap.ready.tokens!.operator);
    const t = taskOf(await op.sendMessage(q({ message: msg("hi") })));
    assert.equal(t.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal((await c.getTask(q({ id: t.id }))).status?.state, TaskState.TASK_STATE_COMPLETED);
  } finally {
    await cap.close();
  }
});
