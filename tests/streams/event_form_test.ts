/**
 * docs/protocol.md "Endpoints", "Event form", "Activation": response heads, the byte form of
 * events, the request id echoed verbatim, and refusals as one JSON body before any stream opens.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";

import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, STREAM_URI, streamRequest } from "../helpers/sse.ts";

const DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1";

const script = {
  tasks: [{
    turns: [
      {
        steps: [
          { thinking: "plan" },
          { text: "hello " },
          { tool_call: { id: "toolu_1", name: "bash", input: { command: "echo hi" }, chunks: 3 } },
        ],
      },
      { steps: [{ text: "all done" }] },
    ],
  }],
};

function queueCapsule(extra: Record<string, unknown> = {}): Promise<Capsule> {
  return startCapsule({
    manifest: {
      name: "streams",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
      capabilities: { shell: { allow: ["bash"] } },
      ...extra,
    },
    script,
  });
}

/** Reads a whole SSE body as text (bounded). */
async function rawBody(res: Response, ms = 10_000): Promise<string> {
  const timer = setTimeout(() => res.body?.cancel(), ms);
  try {
    return await res.text();
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("event form: id line, one data line holding a JSON-RPC response with the request's id, blank line, no event: line", async () => {
  const cap = await queueCapsule();
  try {
    for (const id of ["r-1", 42] as const) {
      const res = await streamRequest(cap.base, "SendStreamingMessage", userMessage("go"), {
        "A2A-Extensions": STREAM_URI,
      }, id);
      assertEquals(res.status, 200);
      const text = await rawBody(res);
      assert(!/^event:/m.test(text), "no event: lines");
      const blocks = text.split("\n\n").filter((b) => b !== "");
      assert(blocks.length > 5);
      for (const [i, block] of blocks.entries()) {
        const lines = block.split("\n");
        if (i === 0) {
          // the opening task is unnumbered
          assertEquals(lines.length, 1);
          assert(lines[0].startsWith("data: "));
        } else {
          assertEquals(lines.length, 2, block);
          assert(/^id: \d+$/.test(lines[0]), lines[0]);
          assert(lines[1].startsWith("data: "));
        }
        const data = JSON.parse(lines[lines.length - 1].slice(6));
        assertEquals(data.jsonrpc, "2.0");
        assertEquals(data.id, id, "the request id, verbatim");
        assertEquals(Object.keys(data.result).length, 1, "a StreamResponse sets one member");
      }
      assert(text.endsWith("\n\n"));
    }
  } finally {
    await cap.close();
  }
});

Deno.test("response heads: content type, no-cache, keep-alive, and A2A-Extensions as Activation says", async () => {
  const cap = await queueCapsule();
  try {
    const plain = await streamRequest(cap.base, "SendStreamingMessage", userMessage("a"));
    assertEquals(plain.headers.get("content-type"), "text/event-stream");
    assertEquals(plain.headers.get("cache-control"), "no-cache");
    assertEquals(plain.headers.get("a2a-extensions"), null, "plain: the URI is not named");
    assertEquals(plain.headers.get("content-length"), null);
    await rawBody(plain);

    const act = await streamRequest(cap.base, "SendStreamingMessage", userMessage("b"), {
      "A2A-Extensions": `https://example.com/other, ${STREAM_URI} ,`,
    });
    assertEquals(act.headers.get("a2a-extensions"), STREAM_URI);
    await rawBody(act);

    // Door extension used through message.metadata: door URI first, then the stream URI.
    const door = await streamRequest(
      cap.base,
      "SendStreamingMessage",
      userMessage("c", { metadata: { [DOOR_URI]: {} } }),
      { "A2A-Extensions": STREAM_URI },
    );
    assertEquals(door.headers.get("a2a-extensions"), `${DOOR_URI}, ${STREAM_URI}`);
    await rawBody(door);

    const watch = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "A2A-Extensions": "https://example.com/ignored",
    });
    assertEquals(watch.headers.get("a2a-extensions"), `${DOOR_URI}, ${STREAM_URI}`);
    await watch.body?.cancel();

    // Other URIs, the door's own included, do not activate.
    const notAct = await streamRequest(cap.base, "SendStreamingMessage", userMessage("d"), {
      "A2A-Extensions": DOOR_URI,
    });
    assertEquals(notAct.headers.get("a2a-extensions"), null);
    const evs = await collect(notAct);
    assert(evs.every((e) => frameOf(e) === undefined), "no frames on a plain connection");
  } finally {
    await cap.close();
  }
});

Deno.test("plain connection: only its task's task/statusUpdate/artifactUpdate, no metadata under the URI", async () => {
  const cap = await queueCapsule();
  try {
    const res = await streamRequest(cap.base, "SendStreamingMessage", userMessage("plain"));
    const evs = await collect(res);
    const kinds = evs.map((e) => Object.keys(e.data.result as object)[0]);
    assertEquals(kinds[0], "task");
    assert(kinds.every((k) => ["task", "statusUpdate", "artifactUpdate"].includes(k)));
    assert(!JSON.stringify(evs).includes(STREAM_URI));
    const taskId = (evs[0].data.result as { task: { id: string } }).task.id;
    for (const e of evs.slice(1)) {
      const r = e.data.result as Record<string, { taskId: string }>;
      assertEquals(Object.values(r)[0].taskId, taskId);
    }
  } finally {
    await cap.close();
  }
});

Deno.test("refusals are one JSON-RPC body before any stream", async () => {
  const cap = await queueCapsule();
  try {
    const bad = await streamRequest(
      cap.base,
      "SendStreamingMessage",
      { message: { role: "ROLE_USER" } },
      {},
      9,
    );
    assertEquals(bad.headers.get("content-type"), "application/json");
    const body = await bad.json();
    assertEquals(body.id, 9);
    assertEquals(body.error.code, -32602);

    const file = await streamRequest(cap.base, "SendStreamingMessage", {
      message: { messageId: "f1", role: "ROLE_USER", parts: [{ url: "http://x/y.png" }] },
    });
    assertEquals((await file.json()).error.code, -32005);

    const noId = await streamRequest(cap.base, "SubscribeToTask", {});
    assertEquals((await noId.json()).error.code, -32602);
    const unknown = await streamRequest(cap.base, "SubscribeToTask", { id: "tsk_nope" });
    assertEquals((await unknown.json()).error.code, -32001);

    const version = await fetch(cap.base + "/", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "v", method: "murmur.WatchSession", params: {} }),
    });
    assertEquals(version.headers.get("content-type"), "application/json");
    assertEquals((await version.json()).error.code, -32009);

    // An ended task: -32004 before any stream.
    const done = await cap.rpc("SendMessage", userMessage("finish me"));
    const id = (done.result as { task: { id: string; status: { state: string } } }).task.id;
    const ended = await streamRequest(cap.base, "SubscribeToTask", { id });
    const endedBody = await ended.json();
    assertEquals(endedBody.error.code, -32004);
  } finally {
    await cap.close();
  }
});

Deno.test("task_acceptance none: SendStreamingMessage and SubscribeToTask refused -32004, WatchSession served", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "none",
      version: "0.1.0",
      lifecycle: { task_acceptance: "none" },
    },
    script: { tasks: [{ turns: [{ steps: [{ delay_ms: 3000 }, { text: "x" }] }] }] },
    args: ["--task", "slow launch task"],
  });
  try {
    const s = await streamRequest(cap.base, "SendStreamingMessage", userMessage("x"));
    assertEquals((await s.json()).error.code, -32004);
    const list = await cap.rpc("ListTasks", {});
    const id = (list.result as { tasks: { id: string }[] }).tasks[0].id;
    const sub = await streamRequest(cap.base, "SubscribeToTask", { id });
    assertEquals((await sub.json()).error.code, -32004);
    const w = await streamRequest(cap.base, "murmur.WatchSession", {});
    assertEquals(w.headers.get("content-type"), "text/event-stream");
    await w.body?.cancel();
  } finally {
    await cap.close();
  }
});

Deno.test("a new task with no room is a stream of exactly one unnumbered task event in TASK_STATE_REJECTED", async () => {
  const cap = await startCapsule({
    manifest: { name: "single", version: "0.1.0" },
    script: { tasks: [{ turns: [{ steps: [{ delay_ms: 3000 }, { text: "x" }] }] }] },
    args: ["--task", "the one task"],
  });
  try {
    const res = await streamRequest(cap.base, "SendStreamingMessage", userMessage("another"), {
      "A2A-Extensions": STREAM_URI,
    });
    const text = await rawBody(res);
    const blocks = text.split("\n\n").filter(Boolean);
    assertEquals(blocks.length, 1);
    assert(!blocks[0].startsWith("id:"));
    const data = JSON.parse(blocks[0].slice(6));
    assertEquals(data.result.task.status.state, "TASK_STATE_REJECTED");
    assertEquals(data.result.task.status.message.parts[0].text, "task rejected: capsule is busy");
  } finally {
    await cap.close();
  }
});
