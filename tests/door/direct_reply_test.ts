/**
 * Direct replies (docs/protocol.md "Direct replies"): under `lifecycle.direct_reply: true` a
 * message answered in one turn with no tool call is a bare `Message` on both bindings, for
 * SendMessage and SendStreamingMessage (one `message` event, then the end), read by the real
 * `@a2a-js/sdk` client; a task that called a tool is answered as a Task; with the switch off (the
 * default) the same one-turn answer is a Task, and the card is the same either way.
 */
import assert from "node:assert/strict";
import { Role, TaskState } from "@a2a-js/sdk";
import { call, capsule } from "./helpers.ts";
import { collect, streamRequest } from "../helpers/sse.ts";
import { sdkClient as client, sdkMessage as msg } from "../helpers/sdk.ts";

// deno-lint-ignore no-explicit-any
const q = (x: unknown) => x as any;

const SCRIPT = {
  tasks: [
    {
      match: "^tool",
      turns: [
        { steps: [{ tool_call: { id: "c1", name: "lookup", input: {} } }] },
        { steps: [{ text: "looked it up" }] },
      ],
    },
    { turns: [{ steps: [{ text: "just an answer" }] }] },
  ],
};

const LOOKUP = { name: "lookup", description: "looks up", command: "echo found" };

function start(directReply: boolean | undefined) {
  return capsule({
    lifecycle: {
      task_acceptance: "queue",
      after_task: "sleep",
      queue_depth: 8,
      ...(directReply === undefined ? {} : { direct_reply: directReply }),
    },
    extra: { tools: [LOOKUP] },
    script: SCRIPT,
  });
}

for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
  Deno.test(`direct reply over ${binding}: a one-turn answer is a bare Message (send and stream); a tool call is a Task`, async () => {
    const cap = await start(true);
    try {
      const c = await client(cap.base, binding);
      const got = q(await c.sendMessage(q({ message: msg("hello") })));
      assert.equal(got.id, undefined, JSON.stringify(got));
      assert.equal(got.role, Role.ROLE_AGENT);
      assert.equal(got.parts[0].content.value, "just an answer");
      assert.ok(got.contextId);

      const events = [];
      for await (const ev of c.sendMessageStream(q({ message: msg("hello again") }))) {
        events.push(q(ev).payload);
      }
      assert.deepEqual(events.map((p) => p.$case), ["message"]);
      assert.equal(events[0].value.parts[0].content.value, "just an answer");

      const task = q(await c.sendMessage(q({ message: msg("tool please") })));
      assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(task.artifacts[0].parts[0].content.value, "looked it up");
      const streamed = [];
      for await (const ev of c.sendMessageStream(q({ message: msg("tool stream") }))) {
        streamed.push(q(ev).payload);
      }
      assert.equal(streamed[0].$case, "task");
      const last = streamed[streamed.length - 1];
      assert.equal(last.$case, "statusUpdate");
      assert.equal(last.value.status.state, TaskState.TASK_STATE_COMPLETED);
      // The held stream replayed the task's events from its start: the answer is there.
      assert.ok(streamed.some((p) => p.$case === "artifactUpdate"), JSON.stringify(streamed));
    } finally {
      await cap.close();
    }
  });
}

Deno.test("direct reply on the wire: `result.message`, one SSE event; a retried send answers the same Message; off by default; the card unchanged", async () => {
  const on = await start(true);
  const off = await start(undefined);
  try {
    const params = {
      message: { messageId: "m-direct", role: "ROLE_USER", parts: [{ text: "hi" }] },
    };
    const a = await call(on.base, "SendMessage", params);
    assert.equal(a.json.result.task, undefined, a.text);
    assert.equal(a.json.result.message.role, "ROLE_AGENT");
    assert.equal("taskId" in a.json.result.message, false);
    const again = await call(on.base, "SendMessage", params);
    assert.deepEqual(again.json.result, a.json.result);

    const res = await streamRequest(on.base, "SendStreamingMessage", {
      message: { messageId: "m-direct-2", role: "ROLE_USER", parts: [{ text: "hi" }] },
    });
    const events = await collect(res, () => false, 20_000);
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(
      (events[0].data.result as { message: { role: string } }).message.role,
      "ROLE_AGENT",
    );

    // Off (the default): the same one-turn answer is a Task.
    const b = await call(off.base, "SendMessage", params);
    assert.equal(b.json.result.task.status.state, "TASK_STATE_COMPLETED", b.text);
    // The card says nothing different either way (apart from its own address and session).
    const card = async (base: string) => {
      const c = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
      delete c.supportedInterfaces;
      return JSON.stringify(c).replaceAll(/ses_[0-9a-f]+/g, "ses");
    };
    assert.equal(await card(on.base), await card(off.base));
  } finally {
    await on.close();
    await off.close();
  }
});

Deno.test("direct reply: a held stream opens as the task stream as soon as the task calls a tool, not at its next turn", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", direct_reply: true },
    extra: {
      tools: [{
        name: "gate",
        description: "waits for the release file",
        command: "while [ ! -e release ]; do sleep 0.02; done; echo released",
      }],
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "g1", name: "gate", input: {} } }] },
          { steps: [{ text: "after the gate" }] },
        ],
      }],
    },
  });
  try {
    // The tool holds the first turn until the file exists: the stream must open before that.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const res = await Promise.race([
      streamRequest(cap.base, "SendStreamingMessage", {
        message: { messageId: "m-gate", role: "ROLE_USER", parts: [{ text: "gate" }] },
      }),
      new Promise<never>((_, reject) =>
        timer = setTimeout(
          () => reject(new Error("the stream did not open while the tool ran")),
          15_000,
        )
      ),
    ]);
    clearTimeout(timer);
    await Deno.writeTextFile(`${cap.ready.workdir}/release`, "");
    const events = await collect(res, (e) => {
      const r = e.data.result as { statusUpdate?: { status: { state: string } } };
      return r.statusUpdate?.status.state === "TASK_STATE_COMPLETED";
    }, 20_000);
    assert.ok("task" in (events[0].data.result as object), JSON.stringify(events[0]));
    const answer = events.find((e) => "artifactUpdate" in (e.data.result as object));
    assert.ok(answer, "the response artifact");
  } finally {
    await cap.close();
  }
});
