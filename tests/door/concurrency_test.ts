/**
 * The door under concurrent callers: 50 simultaneous SendMessage to a queue capsule accept
 * exactly queue_depth queued plus the one that runs, reject the rest busy, and lose or duplicate
 * nothing; reads answer in milliseconds while a turn runs.
 */
import assert from "node:assert/strict";
import { call, capsule, list, message, traceOf, waitTask } from "./helpers.ts";

Deno.test("50 concurrent SendMessage: queue_depth queued + 1 running accepted, the rest busy; none lost, none twice", async () => {
  const depth = 5;
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: depth },
    delayMs: 1_500,
  });
  try {
    const answers = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) =>
          call(cap.base, "SendMessage", message(`job ${i}`, {}, { returnImmediately: true }), {
            id: i,
          }),
      ),
    );
    const tasks = answers.map((a, i) => {
      assert.equal(a.json.id, i, a.text);
      return a.json.result.task as {
        id: string;
        status: { state: string; message?: { parts: { text: string }[] } };
      };
    });
    const accepted = tasks.filter((t) => t.status.state === "TASK_STATE_SUBMITTED");
    const rejected = tasks.filter((t) => t.status.state === "TASK_STATE_REJECTED");
    assert.equal(accepted.length, depth + 1);
    assert.equal(rejected.length, 50 - depth - 1);
    for (const r of rejected) {
      assert.equal(r.status.message?.parts[0].text, "task rejected: capsule is busy");
    }
    assert.equal(new Set(tasks.map((t) => t.id)).size, 50, "every answer names its own task");

    // The registry holds exactly the accepted ones; a busy rejection is not kept.
    const held = await list(cap.base, { pageSize: 100 });
    assert.equal(held.totalSize, depth + 1);
    assert.deepEqual(
      new Set(held.tasks.map((t) => t.id)),
      new Set(accepted.map((t) => t.id)),
    );
    const states = held.tasks.map((t) => t.status.state).sort();
    assert.deepEqual(states, [
      ...Array(depth).fill("TASK_STATE_SUBMITTED"),
      "TASK_STATE_WORKING",
    ]);
    for (const r of rejected.slice(0, 3)) {
      assert.equal((await call(cap.base, "GetTask", { id: r.id })).json.error.code, -32001);
    }

    // Every accepted task runs exactly once, serially, and completes.
    for (const t of accepted) {
      await waitTask(cap.base, t.id, (x) => x.status.state === "TASK_STATE_COMPLETED", 30_000);
    }
    const starts = (await traceOf(cap)).filter((e) => e.event_type === "task_start");
    assert.deepEqual(
      starts.map((e) => e.task_id).sort(),
      accepted.map((t) => t.id).sort(),
    );
    // Room again once the queue drained.
    const more = await call(
      cap.base,
      "SendMessage",
      message("later", {}, { returnImmediately: true }),
    );
    assert.equal(more.json.result.task.status.state, "TASK_STATE_SUBMITTED");
  } finally {
    await cap.close();
  }
});

Deno.test("GetTask and ListTasks answer while a turn runs, and while a blocking SendMessage waits", async () => {
  // The long turn does not end until it is canceled, so every answer that arrives before the
  // cancel came while the turn ran: no clock is needed to show the door did not wait for it.
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 3 },
    script: {
      tasks: [
        { match: "^quick", turns: [{ steps: [{ text: "quick answer" }] }] },
        { turns: [{ steps: [{ text: "long answer", delay_ms: 600_000 }] }] },
      ],
    },
  });
  try {
    const first = await call(
      cap.base,
      "SendMessage",
      message("long", {}, { returnImmediately: true }),
    );
    const id = first.json.result.task.id;
    await waitTask(cap.base, id, (t) => t.status.state === "TASK_STATE_WORKING");
    const queued = await call(
      cap.base,
      "SendMessage",
      message("queued", {}, { returnImmediately: true }),
    );
    for (let i = 0; i < 20; i++) {
      const g = await call(cap.base, "GetTask", { id });
      assert.equal(g.json.result.status.state, "TASK_STATE_WORKING");
      const l = await call(cap.base, "ListTasks", { includeArtifacts: true });
      assert.equal(l.json.result.totalSize, 2);
    }
    // A blocking SendMessage in flight does not hold the door either: GetTask answers while it
    // still waits (its task cannot run before the long one is canceled).
    let answeredFirst = false;
    const blocking = call(cap.base, "SendMessage", message("quick, but waits its turn"))
      .then((r) => {
        answeredFirst = true;
        return r;
      });
    const g = await call(cap.base, "GetTask", { id });
    assert.equal(g.json.result.status.state, "TASK_STATE_WORKING");
    assert.equal(answeredFirst, false, "the blocking SendMessage cannot have answered yet");
    for (const t of [id, queued.json.result.task.id]) {
      const cancel = await call(cap.base, "CancelTask", { id: t });
      assert.equal(cancel.json.result.status.state, "TASK_STATE_CANCELED");
    }
    // The blocking caller gets its (later) task once it ran.
    const answered = await blocking;
    assert.equal(answered.json.result.task.status.state, "TASK_STATE_COMPLETED", answered.text);
  } finally {
    await cap.close();
  }
});
