/**
 * docs/protocol.md "What each stream writes": SendStreamingMessage ends at a live
 * TASK_STATE_INPUT_REQUIRED; the reply (a message naming the task, with Last-Event-ID) opens in
 * TASK_STATE_WORKING and carries on; a SubscribeToTask stays open through the wait and carries
 * `resumed`. Closing a connection never cancels its task.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";

type R = Record<string, Record<string, unknown>>;

function stateOf(e: SseEvent): string | undefined {
  const r = e.data.result as R;
  if (r.task) return (r.task.status as { state: string }).state;
  if (r.statusUpdate) return (r.statusUpdate.status as { state: string }).state;
  return undefined;
}

function messageOf(e: SseEvent): string | undefined {
  const su = (e.data.result as R).statusUpdate;
  const m = (su?.status as { message?: { parts: { text: string }[] } })?.message;
  return m?.parts[0].text;
}

const manifest = {
  name: "ask",
  version: "0.1.0",
  lifecycle: { task_acceptance: "queue", after_task: "sleep" },
  tools: [{ builtin: "request-input" }],
};
const script = {
  tasks: [{
    turns: [
      {
        steps: [{
          tool_call: { id: "ask1", name: "request-input", input: { prompt: "Which city?" } },
        }],
      },
      { steps: [{ text: "Noted." }] },
    ],
  }],
};

Deno.test("input-required: SendStreamingMessage ends at the live wait; the reply stream opens WORKING with resumed, replays with Last-Event-ID; SubscribeToTask stays open through it", async () => {
  const cap = await startCapsule({ manifest, script });
  try {
    const first = await streamRequest(cap.base, "SendStreamingMessage", userMessage("weather"), {
      "A2A-Extensions": STREAM_URI,
    });
    const a = await collect(first); // ends by itself at INPUT_REQUIRED
    const last = a[a.length - 1];
    assertEquals(stateOf(last), "TASK_STATE_INPUT_REQUIRED");
    assertEquals(messageOf(last), "Which city?");
    const taskId = ((a[0].data.result as R).task as { id: string }).id;
    const got = (await cap.rpc("GetTask", { id: taskId })).result as {
      status: { state: string };
      artifacts: { name: string; parts: { text: string }[] }[];
    };
    assertEquals(got.status.state, "TASK_STATE_INPUT_REQUIRED");
    assertEquals(got.artifacts.find((x) => x.name === "prompt")?.parts[0].text, "Which city?");

    // A subscriber that joins during the wait stays open through it.
    const sub = await streamRequest(cap.base, "SubscribeToTask", { id: taskId });
    const subEvents = collect(sub, (e) => stateOf(e) === "TASK_STATE_COMPLETED");

    // A message naming a task that is not waiting is refused.
    const lastId = last.id!;
    const reply = await streamRequest(
      cap.base,
      "SendStreamingMessage",
      userMessage("Paris", { taskId }),
      { "A2A-Extensions": STREAM_URI, "Last-Event-ID": String(lastId) },
    );
    const b = await collect(reply);
    assertEquals(stateOf(b[0]), "TASK_STATE_WORKING");
    assertEquals((b[0].data.result as R).task.status, {
      state: "TASK_STATE_WORKING",
      timestamp: ((b[0].data.result as R).task.status as { timestamp: string }).timestamp,
    });
    assert(b.slice(1).every((e) => e.id === null || e.id > lastId), "only events after the cursor");
    const resumed = b.find((e) => messageOf(e) === "resumed");
    assert(resumed, "the resumed status");
    assertEquals(stateOf(b[b.length - 1]), "TASK_STATE_COMPLETED");

    const s = await subEvents;
    assertEquals(stateOf(s[0]), "TASK_STATE_INPUT_REQUIRED");
    assert(s.some((e) => messageOf(e) === "resumed"));
    assertEquals(stateOf(s[s.length - 1]), "TASK_STATE_COMPLETED");

    // The reply reached the model as the tool's result.
    const art = b.find((e) => JSON.stringify(e.data).includes('"frame":"artifact"'));
    assert(art && JSON.stringify(art.data).includes("Paris"));

    const again = await cap.rpc("SendMessage", userMessage("late", { taskId }));
    assertEquals((again.error as { code: number }).code, -32004);
  } finally {
    await cap.close();
  }
});

Deno.test("closing a stream never cancels its task", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "close",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "x", repeat: 20, delay_ms: 50 }] }] }] },
  });
  try {
    const res = await streamRequest(cap.base, "SendStreamingMessage", userMessage("go"));
    const evs = await collect(res, (_e, all) => all.length >= 2); // hang up early
    const id = ((evs[0].data.result as R).task as { id: string }).id;
    const deadline = Date.now() + 10_000;
    let state = "";
    while (Date.now() < deadline) {
      state = ((await cap.rpc("GetTask", { id })).result as { status: { state: string } }).status
        .state;
      if (state === "TASK_STATE_COMPLETED") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(state, "TASK_STATE_COMPLETED");
  } finally {
    await cap.close();
  }
});
