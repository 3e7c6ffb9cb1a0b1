/**
 * A retried send is not a second task (src/door/retries.ts, README "The door"): the same message
 * sent again by the same caller answers with the task the first one started, on SendMessage and
 * on SendStreamingMessage (which resumes by Last-Event-ID, losing and repeating nothing); another
 * caller's message with the same id is its own task.
 */
import assert from "node:assert/strict";
import { collect, frameOf, type SseEvent, streamRequest } from "../helpers/capsule.ts";
import { call, capsule, message, traceOf } from "./helpers.ts";

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

Deno.test("retry: a SendStreamingMessage cut mid-task and sent again resumes from Last-Event-ID, nothing lost or repeated", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    const msg = message("long answer", { messageId: `m-${crypto.randomUUID()}` });
    const activated = {
      "a2a-extensions": "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1",
    };
    // The first stream: read until five text frames arrived, then the "network" cuts it.
    const res1 = await streamRequest(cap.base, "SendStreamingMessage", msg, activated);
    const part1 = await collect(
      res1,
      (_, all) => all.filter((e) => frameOf(e)?.frame === "text").length === 5,
    );
    const taskId = (part1[0].data.result as { task: { id: string } }).task.id;
    const lastId = part1.filter((e) => e.id !== null).at(-1)!.id!;
    // The retry, with the last id it got.
    const res2 = await streamRequest(cap.base, "SendStreamingMessage", msg, {
      ...activated,
      "last-event-id": String(lastId),
    });
    const part2 = await collect(res2, (e) => stateOf(e) === "TASK_STATE_COMPLETED");
    assert.equal((part2[0].data.result as { task: { id: string } }).task.id, taskId);
    const ids = [...part1, ...part2].map((e) => e.id).filter((id) => id !== null) as number[];
    assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), "no id twice, in order");
    // Every event of the task, as a watch from 0 sees them, reached the client once.
    const watch = await collect(
      await streamRequest(cap.base, "murmur.WatchSession", {}),
      (e) => stateOf(e) === "TASK_STATE_COMPLETED",
    );
    const mine = watch.filter((e) => e.id !== null).map((e) => e.id);
    assert.deepEqual(ids, mine);
    const text = [...part1, ...part2].map((e) => frameOf(e)).filter((f) =>
      f?.frame === "text" && !f.final
    )
      .map((f) => f!.text).join("");
    assert.equal(text, "ж✓ ".repeat(40));
    assert.equal((await call(cap.base, "ListTasks", {})).json.result.totalSize, 1);
    // Sent again once the task has ended: its final state, one event, and the stream ends.
    const res3 = await streamRequest(cap.base, "SendStreamingMessage", msg);
    const ended = await collect(res3);
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
