/**
 * docs/protocol.md "Slow readers" and `lagged`: a connection that stops reading loses the
 * oldest of its queued events (queue of 128), is told exactly how many with one `lagged` frame
 * before its next event, stays open, and the capsule's memory does not grow with the event count.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { frameOf, STREAM_URI } from "../helpers/sse.ts";
import { RawSse, rssKiB } from "../helpers/raw_sse.ts";

type R = Record<string, Record<string, unknown>>;

function isCompleted(e: { data: Record<string, unknown> }): boolean {
  const su = (e.data.result as R).statusUpdate;
  return !!su && (su.status as { state: string }).state === "TASK_STATE_COMPLETED";
}

async function waitState(
  rpc: (m: string, p: unknown) => Promise<Record<string, unknown>>,
  id: string,
  state: string,
  ms = 60_000,
) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const t = (await rpc("GetTask", { id })).result as { status: { state: string } };
    if (t.status.state === state) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${id} not ${state} within ${ms} ms`);
}

Deno.test("lagged: a stalled watcher gets lagged frames whose counts add up exactly to what it lost, then live events", async () => {
  const N = 100_000;
  const cap = await startCapsule({
    manifest: {
      name: "lagged",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: {
      tasks: [
        { match: "^warm", turns: [{ steps: [{ text: "w", repeat: 2000 }] }] },
        { match: "^tail", turns: [{ steps: [{ text: "z", repeat: 3, delay_ms: 50 }] }] },
        { turns: [{ steps: [{ text: "x".repeat(100), repeat: N }] }] },
      ],
    },
  });
  const stalled = await RawSse.open(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
  try {
    // Warm up (JIT, buffers), so the RSS baseline is not the cold process.
    await cap.rpc("SendMessage", userMessage("warm up"));
    const first = await stalled.read((_e, all) => all.length >= 10);
    assertEquals(frameOf(first[0])?.frame, "connection-ack");

    const sent = await cap.rpc("SendMessage", {
      ...userMessage("flood"),
      configuration: { returnImmediately: true },
    });
    const id = (sent.result as { task: { id: string } }).task.id;
    await waitState(cap.rpc, id, "TASK_STATE_COMPLETED");

    // Now read everything: every numbered event arrives or is counted as lost.
    const evs = [
      ...first,
      ...await stalled.read((e) => isCompleted(e) && e.id !== null && e.id > 3000),
    ];
    let lastId = 0;
    let received = 0;
    let missed = 0;
    let laggedFrames = 0;
    let pendingLag = 0;
    for (const e of evs) {
      const f = frameOf(e);
      if (f?.frame === "lagged") {
        assertEquals(e.id, null);
        laggedFrames++;
        pendingLag = f.missed as number;
        assert(pendingLag >= 1);
        missed += pendingLag;
        continue;
      }
      if (e.id === null) continue;
      // The jump in ids is exactly the count the lagged frame before it named.
      assertEquals(e.id - lastId - 1, pendingLag, `ids ${lastId} → ${e.id}`);
      pendingLag = 0;
      lastId = e.id;
      received++;
    }
    assert(laggedFrames >= 1, "a stalled reader was told it lagged");
    assertEquals(
      received + missed,
      lastId,
      "every numbered event was received or counted as missed",
    );
    // The connection stayed open: a live event after the flood still arrives.
    await cap.rpc("SendMessage", userMessage("tail"));
    const live = await stalled.read((e) => isCompleted(e));
    assert(live.some((e) => frameOf(e)?.frame === "text" && (frameOf(e)!.text === "z")));
    const { stderr } = await (async () => {
      await cap.close();
      return await cap.finished();
    })();
    assert(/SSE broadcast lagged by \d+ events/.test(stderr));
  } finally {
    stalled.close();
    await cap.close();
  }
});

Deno.test("a stalled reader does not grow memory with the event count: 300,000 events (~100 MB of stream) under a 64 MB heap", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "stalled",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    // A heap this small cannot hold what a stalled reader would be owed if its queue were
    // unbounded: the capsule would die of OOM instead of answering below.
    denoArgs: ["--v8-flags=--max-old-space-size=64"],
    // Short text: the answer the task keeps is small; each event is still ~330 bytes on the wire.
    script: { tasks: [{ turns: [{ steps: [{ text: "s", repeat: 100_000 }] }] }] },
  });
  const stalled = await RawSse.open(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
  try {
    await cap.rpc("SendMessage", userMessage("flood 0"));
    const afterFirst = await rssKiB(cap.ready.pid);
    for (let i = 1; i < 3; i++) {
      const r = await cap.rpc("SendMessage", userMessage(`flood ${i}`));
      const st = (r.result as { task: { status: { state: string } } }).task.status.state;
      assertEquals(st, "TASK_STATE_COMPLETED");
    }
    const afterThird = await rssKiB(cap.ready.pid);
    // 200,000 more events (~70 MB of stream) to the stalled reader: RSS may settle, not grow by it.
    assert(
      afterThird - afterFirst < 40 * 1024,
      `RSS ${afterFirst} KiB after 100k events, ${afterThird} KiB after 300k`,
    );
    const list = (await cap.rpc("ListTasks", {})).result as { tasks: unknown[] };
    assertEquals(list.tasks.length, 3, "the capsule is alive and answering");
  } finally {
    stalled.close();
    await cap.close();
  }
});

Deno.test("lagged task stream: a stalled SendStreamingMessage reader that lost its task's end writes the ending at a heartbeat and closes", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "lagged-task",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    env: { MURMUR_HEARTBEAT_MS: "300" },
    script: { tasks: [{ turns: [{ steps: [{ text: "y".repeat(200), repeat: 40_000 }] }] }] },
  });
  try {
    const s = await RawSse.open(cap.base, "SendStreamingMessage", userMessage("flood"), {
      "A2A-Extensions": STREAM_URI,
    });
    const opening = await s.read((_e, all) => all.length >= 1);
    const id = ((opening[0].data.result as R).task as { id: string }).id;
    await waitState(cap.rpc, id, "TASK_STATE_COMPLETED");
    const rest = await s.read(() => false, 30_000); // until the server closes the stream
    const all = [...opening, ...rest];
    assert(all.some((e) => frameOf(e)?.frame === "lagged"));
    const last = all[all.length - 1];
    assert(isCompleted(last), "the stream ends with the terminal status");
    const got = (await cap.rpc("GetTask", { id })).result as { status: unknown };
    assertEquals((last.data.result as R).statusUpdate.status, got.status);
    // exactly one final status on the connection
    assertEquals(all.filter(isCompleted).length, 1);
    const art = all[all.length - 2].data.result as R;
    assertEquals(art.artifactUpdate?.lastChunk, true);
    s.close();
  } finally {
    await cap.close();
  }
});
