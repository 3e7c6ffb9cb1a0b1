/**
 * A retried send is not a second task (src/door/retries.ts, docs/door.md): the same message
 * sent again by the same caller answers with the task the first one started, on SendMessage and
 * on SendStreamingMessage (which resumes by Last-Event-ID, losing and repeating nothing); another
 * caller's message with the same id is its own task.
 */
import assert from "node:assert/strict";
import { collect, frameOf, type SseEvent, streamRequest } from "../helpers/sse.ts";
import { call, capsule, message, traceOf, waitTask } from "./helpers.ts";

const SCRIPT = {
  tasks: [
    // A task that streams 40 pieces a few ms apart: a stream can be cut in the middle of it.
    { match: "^long", turns: [{ steps: [{ text: "ж✓ ", repeat: 40, delay_ms: 5 }] }] },
    { turns: [{ steps: [{ text: "done" }] }] },
  ],
};

const stateOf = (e: SseEvent) =>
  ((e.data.result as Record<string, Record<string, Record<string, unknown>>>)?.statusUpdate
    ?.status?.state) as string | undefined;

Deno.test("retry: the same SendMessage twice is one task; the retry changes nothing", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    const msg = message("hello", { messageId: `m-${crypto.randomUUID()}` });
    const first = await call(cap.base, "SendMessage", msg);
    assert.equal(first.json.result.task.status.state, "TASK_STATE_COMPLETED", first.text);
    const again = await call(cap.base, "SendMessage", msg);
    assert.deepEqual(again.json.result.task, first.json.result.task);
    const list = await call(cap.base, "ListTasks", {});
    assert.equal(list.json.result.totalSize, 1);
    const starts = (await traceOf(cap)).filter((l) => l.event_type === "task_start");
    assert.equal(starts.length, 1, "the work ran once");
    // A new message id is a new task.
    const other = await call(cap.base, "SendMessage", message("hello"));
    assert.notEqual(other.json.result.task.id, first.json.result.task.id);
  } finally {
    await cap.close();
  }
});

const ACTIVATED = {
  "a2a-extensions": "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1",
};

/** The first stream of `msg`, cut by the "network" once five text frames arrived. */
async function cutStream(base: string, msg: unknown) {
  const res = await streamRequest(base, "SendStreamingMessage", msg, ACTIVATED);
  const part = await collect(
    res,
    (_, all) => all.filter((e) => frameOf(e)?.frame === "text").length === 5,
  );
  const taskId = (part[0].data.result as { task: { id: string } }).task.id;
  return { part, taskId, lastId: part.filter((e) => e.id !== null).at(-1)!.id! };
}

const texts = (events: SseEvent[]) =>
  events.map((e) => frameOf(e)).filter((f) => f?.frame === "text" && !f.final).map((f) => f!.text)
    .join("");

Deno.test("retry: a SendStreamingMessage cut mid-task and sent again while the task runs resumes from Last-Event-ID", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    // Five pieces, then a ten-minute wait the test ends with CancelTask: the task runs throughout.
    script: {
      tasks: [{
        turns: [{ steps: [{ text: "ж✓ ", repeat: 8 }, { text: "never", delay_ms: 600_000 }] }],
      }],
    },
  });
  try {
    const msg = message("long answer", { messageId: `m-${crypto.randomUUID()}` });
    const first = await cutStream(cap.base, msg);
    const retry = await streamRequest(cap.base, "SendStreamingMessage", msg, {
      ...ACTIVATED,
      "last-event-id": String(first.lastId),
    });
    const reading = collect(retry, (e) => stateOf(e) === "TASK_STATE_CANCELED");
    // The task is still running (it waits ten minutes): the retry is its stream, not a new task.
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 1);
    await call(cap.base, "CancelTask", { id: first.taskId });
    const part2 = await reading;
    assert.equal((part2[0].data.result as { task: { id: string } }).task.id, first.taskId);
    const ids = [...first.part, ...part2].map((e) => e.id).filter((id) => id !== null);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a! - b!), "no id twice, in order");
    assert.equal(texts([...first.part, ...part2]), "ж✓ ".repeat(8));
  } finally {
    await cap.close();
  }
});

Deno.test("retry: a SendStreamingMessage sent again after its task ended replays what was missed up to the final status", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    const msg = message("long answer", { messageId: `m-${crypto.randomUUID()}` });
    const first = await cutStream(cap.base, msg);
    await waitTask(cap.base, first.taskId, (t) => t.status.state === "TASK_STATE_COMPLETED");
    const retry = await streamRequest(cap.base, "SendStreamingMessage", msg, {
      ...ACTIVATED,
      "last-event-id": String(first.lastId),
    });
    const part2 = await collect(retry); // it ends by itself at the final status
    assert.equal(stateOf(part2.at(-1)!), "TASK_STATE_COMPLETED");
    const ids = [...first.part, ...part2].map((e) => e.id).filter((id) => id !== null);
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a! - b!), "no id twice, in order");
    // Every event of the task, as a watch from 0 sees them, reached the client once.
    const watch = await collect(
      await streamRequest(cap.base, "murmur.WatchSession", {}),
      (e) => stateOf(e) === "TASK_STATE_COMPLETED",
    );
    assert.deepEqual(ids, watch.filter((e) => e.id !== null).map((e) => e.id));
    assert.equal(texts([...first.part, ...part2]), "ж✓ ".repeat(40));
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 1);
    // Without Last-Event-ID: the ended task alone, one event, and the stream ends.
    const ended = await collect(await streamRequest(cap.base, "SendStreamingMessage", msg));
    assert.equal(ended.length, 1);
    assert.equal(
      (ended[0].data.result as { task: { status: { state: string } } }).task.status.state,
      "TASK_STATE_COMPLETED",
    );
  } finally {
    await cap.close();
  }
});

Deno.test("retry: another credential's message with the same id is its own task", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    network: {
      authentication: {
        scheme: "bearer",
        credentials: { a: { scopes: ["SendMessage"] }, b: { scopes: ["SendMessage"] } },
      },
    },
    script: SCRIPT,
  });
  try {
    const tokens = cap.ready.tokens!;
    const msg = message("hello", { messageId: "m-shared" });
    const a1 = await call(cap.base, "SendMessage", msg, { token: tokens.a });
    const b1 = await call(cap.base, "SendMessage", msg, { token: tokens.b });
    const a2 = await call(cap.base, "SendMessage", msg, { token: tokens.a });
    assert.notEqual(a1.json.result.task.id, b1.json.result.task.id);
    assert.equal(a2.json.result.task.id, a1.json.result.task.id);
  } finally {
    await cap.close();
  }
});

Deno.test("retry: a reused messageId with other content is refused naming the first task; the same content still replays", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    const id = `m-${crypto.randomUUID()}`;
    const first = await call(
      cap.base,
      "SendMessage",
      message("Summarise README.md", { messageId: id }),
    );
    const taskId = first.json.result.task.id as string;
    // The docs example resent with its text edited: new work under an old id.
    for (
      const [method, text] of [["SendMessage", "Summarise ж docs/door.md ✓"], [
        "SendStreamingMessage",
        "Summarise README.md!",
      ]]
    ) {
      const edited = await call(cap.base, method, message(text, { messageId: id }));
      assert.equal(edited.json.error?.code, -32602, edited.text);
      assert.match(
        edited.json.error.message,
        new RegExp(
          `messageId ${id} was already sent with other content, and went to task ${taskId}`,
        ),
      );
    }
    // Other content also means another part or a context: each refused, the count unchanged.
    const withData = await call(cap.base, "SendMessage", {
      message: {
        messageId: id,
        role: "ROLE_USER",
        parts: [{ text: "Summarise README.md" }, { data: { x: 1 } }],
      },
    });
    assert.equal(withData.json.error?.code, -32602, withData.text);
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 1);
    // The identical message is a retry: the first task back, no second one.
    const again = await call(
      cap.base,
      "SendMessage",
      message("Summarise README.md", { messageId: id }),
    );
    assert.equal(again.json.result.task.id, taskId, again.text);
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 1);
  } finally {
    await cap.close();
  }
});
