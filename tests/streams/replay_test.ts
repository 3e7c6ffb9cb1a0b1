/**
 * docs/protocol.md "Replay" and its `gap`: one ring of the last 512 numbered events,
 * `Last-Event-ID` rules for both kinds of endpoint, a gap when events after the cursor were evicted
 * or the id was never issued, and task streams replaying their own task only (gap only when
 * activated).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";

type R = Record<string, Record<string, unknown>>;

/**
 * A task `slow <name>` writes 20 text frames, then waits in a shell command until the test
 * creates `release-<name>` in the workdir (`release`), then writes 20 more: it is still working
 * for as long as the test needs, however slow the machine.
 */
function slow(name: string) {
  const wait = `until [ -e release-${name} ]; do sleep 0.05; done`;
  return {
    match: `^slow ${name}$`,
    turns: [
      {
        steps: [
          { text: "s", repeat: 20 },
          { tool_call: { id: `gate-${name}`, name: "bash", input: { command: wait } } },
        ],
      },
      { steps: [{ text: "s", repeat: 20 }] },
    ],
  };
}

function release(cap: Capsule, name: string): Promise<void> {
  return Deno.writeTextFile(`${cap.ready.workdir}/release-${name}`, "");
}

/** Waits until task `id` waits at its gate (its tool call has started), read from a watch. */
async function atGate(cap: Capsule, id: string): Promise<void> {
  const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
  await collect(res, (e) => {
    const su = (e.data.result as R).statusUpdate;
    return su?.taskId === id && frameOf(e)?.frame === "tool-call-started";
  });
}

/** A queue capsule; every task writes `n` text frames (plus its statuses). */
function capsule(n: number, delay = 0): Promise<Capsule> {
  return startCapsule({
    manifest: {
      name: "replay",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script: {
      tasks: [
        slow("one"),
        slow("again"),
        slow("x"),
        {
          turns: [{
            steps: [delay ? { text: "t", repeat: n, delay_ms: delay } : { text: "t", repeat: n }],
          }],
        },
      ],
    },
  });
}

/** Sends a task and waits for its end; returns the task id. */
async function runTask(cap: Capsule, text = "go"): Promise<string> {
  const r = await cap.rpc("SendMessage", userMessage(text));
  const task = (r.result as { task: { id: string; status: { state: string } } }).task;
  assertEquals(task.status.state, "TASK_STATE_COMPLETED");
  return task.id;
}

/** Events of a watch up to and including the connection-ack + replay (stops at the last id). */
async function watchReplay(cap: Capsule, lastId: string | null, upTo: number): Promise<SseEvent[]> {
  const headers: Record<string, string> = {};
  if (lastId !== null) headers["Last-Event-ID"] = lastId;
  const res = await streamRequest(cap.base, "murmur.WatchSession", {}, headers);
  return await collect(res, (e) => e.id === upTo);
}

Deno.test("watch replay: absent or non-numeric Last-Event-ID replays from 0; N replays after N", async () => {
  const cap = await capsule(10);
  try {
    await runTask(cap);
    const total = 10 + 4; // turn status, 10 text, final text, response, completed
    const all = await watchReplay(cap, null, total);
    assertEquals(frameOf(all[0])?.frame, "connection-ack");
    assertEquals(all.slice(1).map((e) => e.id), Array.from({ length: total }, (_, i) => i + 1));
    const junk = await watchReplay(cap, "abc", total);
    assertEquals(junk.slice(1).map((e) => e.id), all.slice(1).map((e) => e.id));
    const after5 = await watchReplay(cap, "5", total);
    assertEquals(
      after5.slice(1).map((e) => e.id),
      Array.from({ length: total - 5 }, (_, i) => i + 6),
    );
    // Header name is case-insensitive.
    const lower = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "last-event-id": String(total - 1),
    });
    const tail = await collect(lower, (e) => e.id === total);
    assertEquals(tail.slice(1).map((e) => e.id), [total]);
    // N = the last id: nothing replayed, no gap (the next live event follows).
    const none = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "Last-Event-ID": String(total),
    });
    const only = await collect(none, () => true);
    assertEquals(only.length, 1);
    assertEquals(frameOf(only[0])?.frame, "connection-ack");
  } finally {
    await cap.close();
  }
});

Deno.test("gap: an id never issued gets a gap naming the oldest id, then every buffered event", async () => {
  const cap = await capsule(3);
  try {
    await runTask(cap);
    const total = 3 + 4;
    const evs = await watchReplay(cap, "999", total);
    assertEquals(frameOf(evs[0])?.frame, "connection-ack");
    const gap = frameOf(evs[1]);
    assertEquals(gap, { frame: "gap", firstAvailableId: 1 });
    assertEquals(evs[1].id, null);
    const carrier = (evs[1].data.result as R).message;
    assertEquals(carrier.role, "ROLE_AGENT");
    assertEquals(carrier.contextId, undefined);
    assertEquals(evs.slice(2).map((e) => e.id), Array.from({ length: total }, (_, i) => i + 1));
  } finally {
    await cap.close();
  }
});

Deno.test("ring of 512: evicted events give a gap naming firstAvailableId; replay from 0 after eviction too", async () => {
  const cap = await capsule(600);
  try {
    await runTask(cap);
    const total = 600 + 4;
    const first = total - 512 + 1;
    const evs = await watchReplay(cap, "10", total);
    assertEquals(frameOf(evs[1]), { frame: "gap", firstAvailableId: first });
    const ids = evs.slice(2).map((e) => e.id);
    assertEquals(ids.length, 512);
    assertEquals(ids[0], first);
    assertEquals(ids[511], total);
    const from0 = await watchReplay(cap, null, total);
    assertEquals(frameOf(from0[1]), { frame: "gap", firstAvailableId: first });
    // A cursor inside the ring: no gap.
    const inside = await watchReplay(cap, String(first), total);
    assert(frameOf(inside[1])?.frame !== "gap");
    assertEquals(inside[1].id, first + 1);
  } finally {
    await cap.close();
  }
});

Deno.test("task stream replay: after the opening task, this task's events above the cursor; gap only when activated", async () => {
  const cap = await capsule(5);
  try {
    const a = await runTask(cap, "first");
    // A second, slow task that is still working while we subscribe.
    const send = await cap.rpc("SendMessage", {
      ...userMessage("slow one"),
      configuration: { returnImmediately: true },
    });
    const b = (send.result as { task: { id: string } }).task.id;
    assert(a !== b);
    // The slow task has written events and waits at its gate.
    await atGate(cap, b);
    // Plain SubscribeToTask with Last-Event-ID 0: opening task, then b's standard events only.
    const plain = await streamRequest(cap.base, "SubscribeToTask", { id: b }, {
      "Last-Event-ID": "0",
    });
    await release(cap, "one");
    const pe = await collect(plain, (e) => {
      const su = (e.data.result as R).statusUpdate;
      return !!su && (su.status as { state: string }).state === "TASK_STATE_COMPLETED";
    });
    assertEquals(Object.keys(pe[0].data.result as object), ["task"]);
    assert(
      pe.slice(1).every((e) => {
        const r = e.data.result as R;
        return (r.statusUpdate ?? r.artifactUpdate).taskId === b && frameOf(e) === undefined;
      }),
    );
    // Replayed and live ids ascend without repeats.
    const ids = pe.slice(1).map((e) => e.id!);
    assertEquals(new Set(ids).size, ids.length);
    for (let i = 1; i < ids.length; i++) assert(ids[i] > ids[i - 1]);

    // Activated, with an id never issued: gap (a statusUpdate carrier), then replay of task b.
    const c = await cap.rpc("SendMessage", {
      ...userMessage("slow again"),
      configuration: { returnImmediately: true },
    });
    const cid = (c.result as { task: { id: string } }).task.id;
    await atGate(cap, cid);
    const act2 = await streamRequest(cap.base, "SubscribeToTask", { id: cid }, {
      "Last-Event-ID": "100000",
      "A2A-Extensions": STREAM_URI,
    });
    const ae2 = await collect(act2, (_e, all) => all.length >= 3);
    assertEquals(Object.keys(ae2[0].data.result as object), ["task"]);
    const gap = frameOf(ae2[1]);
    assertEquals(gap?.frame, "gap");
    const gapCarrier = (ae2[1].data.result as R).statusUpdate;
    assertEquals(gapCarrier.taskId, cid);
    assertEquals(ae2[1].id, null);
    // Plain with the same cursor: no gap.
    const plain2 = await streamRequest(cap.base, "SubscribeToTask", { id: cid }, {
      "Last-Event-ID": "100000",
    });
    const pe2 = await collect(plain2, (_e, all) => all.length >= 2);
    assert(pe2.every((e) => frameOf(e) === undefined));
  } finally {
    await cap.close();
  }
});

Deno.test("task stream without Last-Event-ID: no replay, only live events after the opening task", async () => {
  const cap = await capsule(5);
  try {
    const c = await cap.rpc("SendMessage", {
      ...userMessage("slow x"),
      configuration: { returnImmediately: true },
    });
    const id = (c.result as { task: { id: string } }).task.id;
    await atGate(cap, id);
    const before = (await cap.rpc("GetTask", { id })).result as { status: { state: string } };
    assertEquals(before.status.state, "TASK_STATE_WORKING");
    const res = await streamRequest(cap.base, "SubscribeToTask", { id }, {
      "A2A-Extensions": STREAM_URI,
    });
    await release(cap, "x");
    const evs = await collect(res, (e) => {
      const su = (e.data.result as R).statusUpdate;
      return !!su && (su.status as { state: string }).state === "TASK_STATE_COMPLETED";
    });
    const opening = (evs[0].data.result as { task: { status: { state: string } } }).task;
    assertEquals(opening.status.state, "TASK_STATE_WORKING");
    // Ids 1 (turn status) and the first text frames were written before we subscribed.
    assert(evs[1].id! > 2, `first live id ${evs[1].id}`);
  } finally {
    await cap.close();
  }
});
