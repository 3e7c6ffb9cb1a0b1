/**
 * A task's history (docs/protocol.md "Task history") read by the real `@a2a-js/sdk` client on both
 * bindings: a task that asked for input once keeps the user's message, the question, the answer
 * and the agent's reply, in that order; `historyLength` is read exactly (unset: all, 0: none, n:
 * the n newest) by GetTask, ListTasks, SendMessage's Task and a stream's first Task; the
 * manifest's `lifecycle.history_limit` drops the oldest and the Task says how many.
 */
import assert from "node:assert/strict";
import { Role, TaskState } from "@a2a-js/sdk";
import { call, capsule } from "./helpers.ts";
import { collect, streamRequest } from "../helpers/sse.ts";
import { sdkClient as client, sdkMessage as msg } from "../helpers/sdk.ts";

// deno-lint-ignore no-explicit-any
const q = (x: unknown) => x as any;
// deno-lint-ignore no-explicit-any
const texts = (history: any[]) =>
  history.map((m) =>
    `${m.role === Role.ROLE_USER ? "user" : "agent"}: ${m.parts[0].content.value}`
  );

/** Asks once (request-input), then answers with the reply it got. */
const ASK_ONCE = {
  tasks: [{
    turns: [
      {
        steps: [{
          tool_call: { id: "t1", name: "request-input", input: { prompt: "Which city?" } },
        }],
      },
      { steps: [{ text: "Weather for the city: sunny" }] },
    ],
  }],
};

for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
  Deno.test(`history over ${binding}: one input round, historyLength unset / 0 / 2 / 1 on every read`, async () => {
    const cap = await capsule({
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
      extra: { tools: [{ builtin: "request-input" }] },
      script: ASK_ONCE,
    });
    try {
      const c = await client(cap.base, binding);
      // SendMessage's Task, blocking until the input wait: the user's message and the question.
      const waiting = q(await c.sendMessage(q({ message: msg("weather please") })));
      assert.equal(waiting.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.deepEqual(texts(waiting.history), ["user: weather please", "agent: Which city?"]);
      assert.equal(waiting.history[0].taskId, waiting.id);
      assert.equal(waiting.history[0].contextId, waiting.contextId);
      // The answer, with configuration.historyLength 1: the Task returned holds only the reply.
      const done = q(
        await c.sendMessage(q({
          message: msg("Lisbon", waiting.id),
          configuration: { historyLength: 1 },
        })),
      );
      assert.equal(done.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.deepEqual(texts(done.history), ["agent: Weather for the city: sunny"]);
      assert.equal(done.artifacts[0].parts[0].content.value, "Weather for the city: sunny");

      // GetTask historyLength 2: the user's answer and the agent's reply.
      const two = q(await c.getTask(q({ id: done.id, historyLength: 2 })));
      assert.deepEqual(texts(two.history), ["user: Lisbon", "agent: Weather for the city: sunny"]);
      assert.equal(two.history[1].role, Role.ROLE_AGENT);
      const all = q(await c.getTask(q({ id: done.id })));
      assert.deepEqual(texts(all.history), [
        "user: weather please",
        "agent: Which city?",
        "user: Lisbon",
        "agent: Weather for the city: sunny",
      ]);
      const none = q(await c.getTask(q({ id: done.id, historyLength: 0 })));
      assert.deepEqual(none.history, []);
      const more = q(await c.getTask(q({ id: done.id, historyLength: 99 })));
      assert.equal(more.history.length, 4);

      // ListTasks: historyLength per task.
      const page = q(
        await c.listTasks(q({ status: TaskState.TASK_STATE_UNSPECIFIED, historyLength: 1 })),
      );
      assert.equal(page.tasks.length, 1);
      assert.deepEqual(texts(page.tasks[0].history), ["agent: Weather for the city: sunny"]);
    } finally {
      await cap.close();
    }
  });
}

Deno.test("history on the wire: 0 omits the key, a negative length is -32602 on every method, a stream's first Task honours configuration.historyLength", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
    extra: { tools: [{ builtin: "request-input" }] },
    script: ASK_ONCE,
  });
  try {
    const sent = await call(cap.base, "SendMessage", {
      message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "weather please" }] },
    });
    const task = sent.json.result.task;
    assert.equal(task.status.state, "TASK_STATE_INPUT_REQUIRED");
    const zero = await call(cap.base, "GetTask", { id: task.id, historyLength: 0 });
    assert.equal("history" in zero.json.result, false, zero.text);
    const snake = await call(cap.base, "GetTask", { id: task.id, history_length: 1 });
    assert.equal(snake.json.result.history.length, 1);
    assert.equal(snake.json.result.history[0].messageId.length > 0, true);
    for (
      const [method, params] of [
        ["GetTask", { id: task.id, historyLength: -1 }],
        ["ListTasks", { historyLength: -1 }],
        ["SendMessage", {
          message: { messageId: "m-x", role: "ROLE_USER", parts: [{ text: "x" }] },
          configuration: { historyLength: "two" },
        }],
      ] as const
    ) {
      const a = await call(cap.base, method, params);
      assert.equal(a.json.error?.code, -32602, `${method}: ${a.text}`);
    }
    // The REST binding reads the query the same way.
    const rest = await fetch(`${cap.base}/tasks/${task.id}?historyLength=1`, {
      headers: { "a2a-version": "1.0" },
    });
    assert.equal((await rest.json()).history.length, 1);

    // The answer's stream opens with the task and exactly the one newest message.
    const res = await streamRequest(cap.base, "SendStreamingMessage", {
      message: {
        messageId: "m-2",
        role: "ROLE_USER",
        taskId: task.id,
        parts: [{ text: "Lisbon" }],
      },
      configuration: { historyLength: 1 },
    });
    const events = await collect(res, (e) => {
      const r = e.data.result as { statusUpdate?: { status: { state: string } } };
      return r.statusUpdate?.status.state === "TASK_STATE_COMPLETED";
    }, 20_000);
    const first = (events[0].data.result as { task: { history: { parts: { text: string }[] }[] } })
      .task;
    assert.deepEqual(first.history.map((m) => m.parts[0].text), ["Lisbon"]);
  } finally {
    await cap.close();
  }
});

Deno.test("history_limit: the oldest messages are dropped first and the Task counts them", async () => {
  const ask = (n: number) => ({
    steps: [{ tool_call: { id: `t${n}`, name: "request-input", input: { prompt: `Q${n}` } } }],
  });
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", history_limit: 3 },
    extra: { tools: [{ builtin: "request-input" }] },
    script: { tasks: [{ turns: [ask(1), ask(2), ask(3), { steps: [{ text: "all answered" }] }] }] },
  });
  try {
    const first = await call(cap.base, "SendMessage", {
      message: { messageId: "m-0", role: "ROLE_USER", parts: [{ text: "start" }] },
    });
    let task = first.json.result.task;
    for (let i = 1; i <= 3; i++) {
      assert.equal(task.status.state, "TASK_STATE_INPUT_REQUIRED", JSON.stringify(task));
      const a = await call(cap.base, "SendMessage", {
        message: {
          messageId: `m-${i}`,
          role: "ROLE_USER",
          taskId: task.id,
          parts: [{ text: `A${i}` }],
        },
      });
      task = a.json.result.task;
    }
    assert.equal(task.status.state, "TASK_STATE_COMPLETED");
    // start Q1 A1 Q2 A2 Q3 A3 reply: 8 messages, 3 kept.
    const got = (await call(cap.base, "GetTask", { id: task.id })).json.result;
    assert.deepEqual(
      got.history.map((m: { parts: { text: string }[] }) => m.parts[0].text),
      ["Q3", "A3", "all answered"],
    );
    assert.equal(got.metadata.murmur.historyDropped, 5);
  } finally {
    await cap.close();
  }
});
