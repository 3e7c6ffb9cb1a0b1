/**
 * docs/protocol.md "Event order within a task", "Standard events", "One final status", "Event ids":
 * the numbered list, the response artifact right before COMPLETED, ids strictly ascending and
 * contiguous across tasks on a watch, and the final status equal to GetTask's.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import {
  ARTIFACT_FRAME_KEYS,
  collect,
  frameOf,
  type SseEvent,
  STREAM_URI,
  streamRequest,
} from "../helpers/sse.ts";

type R = Record<string, Record<string, unknown>>;

function describe(e: SseEvent): string {
  const r = e.data.result as R;
  if (r.task) return `task:${(r.task.status as { state: string }).state}`;
  if (r.artifactUpdate) return `artifact:${(r.artifactUpdate.artifact as { name: string }).name}`;
  const f = frameOf(e);
  if (f) return `frame:${f.frame}${f.frame === "text" ? (f.final ? ":final" : "") : ""}`;
  const st = r.statusUpdate.status as { state: string; message?: { parts: { text: string }[] } };
  return `status:${st.state.replace("TASK_STATE_", "")}${
    st.message ? `:${st.message.parts[0].text}` : ""
  }`;
}

const script = {
  tasks: [{
    turns: [
      {
        steps: [
          { thinking: "let me think" },
          { text: "Looking. " },
          { tool_call: { id: "toolu_a", name: "bash", input: { command: "echo one" }, chunks: 4 } },
          { tool_call: { id: "toolu_b", name: "bash", input: { command: "echo two" } } },
        ],
      },
      { steps: [{ text: "Both ran." }, { usage: { input_tokens: 10, output_tokens: 3 } }] },
    ],
  }],
};

Deno.test("event order within a task (activated): turn status, frames, final text, artifacts in dispatch order, response, completed", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "order",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script,
  });
  try {
    const res = await streamRequest(cap.base, "SendStreamingMessage", userMessage("go"), {
      "A2A-Extensions": STREAM_URI,
    });
    const evs = await collect(res);
    const seq = evs.map(describe);
    // Collapse repeated progress frames: their count depends on timing.
    const shape = seq.filter((s, i) => !(s === "frame:tool-call-progress" && seq[i - 1] === s));
    assertEquals(shape, [
      "task:TASK_STATE_SUBMITTED",
      "status:WORKING:inference turn 1",
      "frame:thinking",
      "frame:text",
      "frame:tool-call-started",
      "frame:tool-call-progress",
      "frame:tool-call-started",
      "frame:tool-call-progress",
      "frame:text:final",
      "frame:artifact",
      "frame:artifact",
      "status:WORKING:inference turn 2",
      "frame:text",
      "frame:text:final",
      "artifact:response",
      "status:COMPLETED:task completed",
    ]);
    const arts = evs.map(frameOf).filter((f) => f?.frame === "artifact");
    assertEquals(arts.map((a) => a!.toolCallId), ["toolu_a", "toolu_b"]);
    // every key present, in order, null never absent
    assertEquals(Object.keys(arts[0]!), ARTIFACT_FRAME_KEYS);
    assertEquals(arts[0]!.fenceSource, "tool:bash");
    assertEquals(arts[0]!.exitCode, 0);
    // final progress reports the whole input
    const prog = evs.map(frameOf).filter((f) =>
      f?.frame === "tool-call-progress" && f.toolCallId === "toolu_a"
    );
    assertEquals(prog[prog.length - 1]!.inputBytes, JSON.stringify({ command: "echo one" }).length);
    for (let i = 1; i < prog.length; i++) {
      assert(prog[i]!.inputBytes as number >= (prog[i - 1]!.inputBytes as number));
    }

    // ids strictly ascending; the opening task unnumbered
    assertEquals(evs[0].id, null);
    const ids = evs.slice(1).map((e) => e.id!);
    for (let i = 1; i < ids.length; i++) assert(ids[i] > ids[i - 1]);
    assertEquals(ids[0], 1);

    // carriers: a statusUpdate repeating WORKING with no message
    const carrier = evs.find((e) => frameOf(e)?.frame === "text")!.data.result as R;
    const st = carrier.statusUpdate.status as Record<string, unknown>;
    assertEquals(st.state, "TASK_STATE_WORKING");
    assertEquals(st.message, undefined);
    assert(typeof st.timestamp === "string");

    // response artifactUpdate: the artifact exactly as GetTask reports it, lastChunk true
    const last = evs[evs.length - 1].data.result as R;
    const art = evs[evs.length - 2].data.result as R;
    assertEquals(art.artifactUpdate.lastChunk, true);
    const taskId = last.statusUpdate.taskId as string;
    const got = (await cap.rpc("GetTask", { id: taskId })).result as Record<string, unknown>;
    assertEquals(got.artifacts, [art.artifactUpdate.artifact]);
    // one final status: exactly GetTask's status
    assertEquals(last.statusUpdate.status, got.status);
    // The history (docs/protocol.md "Task history"): the user's message, then the reply, which
    // is the response artifact's text.
    const history = got.history as { role: string; parts: { text: string }[] }[];
    assertEquals(history.map((m) => m.role), ["ROLE_USER", "ROLE_AGENT"]);
    const artifact = art.artifactUpdate.artifact as { parts: { text: string }[] };
    assertEquals(history[1].parts[0].text, artifact.parts[0].text);
  } finally {
    await cap.close();
  }
});

Deno.test("statusUpdate messages: msg_ ids unique, ROLE_AGENT, naming task and context, one text part", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "msgs",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script,
  });
  try {
    const evs = await collect(
      await streamRequest(cap.base, "SendStreamingMessage", userMessage("go")),
    );
    const seen = new Set<string>();
    for (const e of evs.slice(1)) {
      const su = (e.data.result as R).statusUpdate;
      if (!su) continue;
      const st = su.status as { state: string; message: Record<string, unknown> };
      const m = st.message;
      assertEquals(m.role, "ROLE_AGENT");
      assertEquals(m.taskId, su.taskId);
      assertEquals(m.contextId, su.contextId);
      assertEquals((m.parts as unknown[]).length, 1);
      if (st.state === "TASK_STATE_WORKING") {
        assert(/^msg_[0-9a-f]{32}$/.test(m.messageId as string), m.messageId as string);
      }
      assert(!seen.has(m.messageId as string));
      seen.add(m.messageId as string);
    }
  } finally {
    await cap.close();
  }
});

Deno.test("event ids: one sequence per session across tasks, from 1, +1 per numbered event; a watch sees it contiguous", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "ids",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script,
  });
  try {
    for (let i = 0; i < 3; i++) {
      await cap.rpc("SendMessage", userMessage(`t${i}`));
    }
    const watch = await streamRequest(cap.base, "murmur.WatchSession", {});
    let completed = 0;
    const evs = await collect(watch, (e) => {
      const su = (e.data.result as R).statusUpdate;
      if (su && (su.status as { state: string }).state === "TASK_STATE_COMPLETED") completed++;
      return completed === 3;
    });
    assertEquals(Object.keys(evs[0].data.result as object)[0], "message"); // connection-ack
    assertEquals(frameOf(evs[0])?.frame, "connection-ack");
    const ids = evs.slice(1).map((e) => e.id);
    assertEquals(ids, ids.map((_, i) => i + 1));
    const tasks = new Set(
      evs.slice(1).map((e) => {
        const r = e.data.result as R;
        return (r.statusUpdate ?? r.artifactUpdate).taskId;
      }),
    );
    assertEquals(tasks.size, 3);
  } finally {
    await cap.close();
  }
});
