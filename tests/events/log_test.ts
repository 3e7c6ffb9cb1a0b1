/**
 * The event log (docs/design.md "One process, one session, one event log", seed 000 "Event ids"
 * and "Replay"): one sequence per session from 1, a ring of the last 512 numbered events, replay
 * with a gap when events after the cursor were evicted or the cursor was never issued, bytes
 * encoded once per event.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog, REPLAY_CAPACITY } from "../../src/events/log.ts";
import { appendMany, ids, input, json, range, text } from "./helpers.ts";

Deno.test("log: ids start at 1 and follow one sequence; nextId / lastId", () => {
  const log = new EventLog();
  assertEquals(log.lastId, 0);
  assertEquals(log.nextId, 1);
  assertEquals(log.firstAvailableId, 0);
  const a = log.append(input({ taskId: "tsk_a" }));
  const b = log.append(input({ taskId: "tsk_b", standard: false }));
  const c = log.append(input({ taskId: "tsk_a" }));
  assertEquals([a.id, b.id, c.id], [1, 2, 3]);
  assertEquals(log.lastId, 3);
  assertEquals(log.nextId, 4);
  assertEquals(log.firstAvailableId, 1);
  assertEquals(text(b.idLine), "id: 2\n");
  assertEquals(b.taskId, "tsk_b");
  assertEquals(b.contextId, "ctx_a");
});

Deno.test("log: the ring holds 512 events; the oldest is evicted first", () => {
  assertEquals(REPLAY_CAPACITY, 512);
  const log = new EventLog();
  appendMany(log, 512);
  assertEquals(log.firstAvailableId, 1);
  const full = log.replay(0);
  assertEquals(full.gap, null);
  assertEquals(ids(full.entries), range(1, 512));
  log.append(input({ n: 513 }));
  assertEquals(log.firstAvailableId, 2);
  appendMany(log, 87); // 600 in all
  assertEquals(log.lastId, 600);
  assertEquals(log.firstAvailableId, 89);
  const r = log.replay(0);
  assertEquals(r.gap, 89);
  assertEquals(ids(r.entries), range(89, 600));
  // Every entry is the event appended under that id (no slot mix-up after wrapping).
  for (const e of r.entries) assertEquals(json(e.activated)?.n, e.id);
});

Deno.test("log: replay of an empty buffer writes nothing, whatever the cursor", () => {
  const log = new EventLog();
  for (const after of [0, 1, 5, 1000, -1]) {
    assertEquals(log.replay(after), { gap: null, entries: [] }, `after ${after}`);
  }
});

Deno.test("log: replay after N is every buffered event with id > N, in order, no gap", () => {
  const log = new EventLog();
  appendMany(log, 20);
  const r0 = log.replay(0);
  assertEquals(r0.gap, null);
  assertEquals(ids(r0.entries), range(1, 20));
  const r7 = log.replay(7);
  assertEquals(r7.gap, null);
  assertEquals(ids(r7.entries), range(8, 20));
  // N = the last id issued: nothing to replay, and no gap (live events follow).
  assertEquals(log.replay(20), { gap: null, entries: [] });
  assertEquals(log.replay(19).entries.map((e) => e.id), [20]);
});

Deno.test("log: a cursor never issued (nextId or higher) is a gap naming the oldest id, then the whole buffer", () => {
  const log = new EventLog();
  appendMany(log, 10);
  for (const after of [11, 12, 10_000]) {
    const r = log.replay(after);
    assertEquals(r.gap, 1, `after ${after}`);
    assertEquals(ids(r.entries), range(1, 10), `after ${after}`);
  }
  // After eviction the gap names the oldest id still held.
  appendMany(log, 600);
  const r = log.replay(log.nextId);
  assertEquals(r.gap, 610 - 512 + 1);
  assertEquals(r.entries.length, 512);
});

Deno.test("log: events after the cursor evicted → gap naming the oldest id, then the whole buffer", () => {
  const log = new EventLog();
  appendMany(log, 600); // oldest held: 89
  for (const after of [0, 1, 50, 87]) {
    const r = log.replay(after);
    assertEquals(r.gap, 89, `after ${after}`);
    assertEquals(ids(r.entries), range(89, 600), `after ${after}`);
  }
  // N + 1 is the oldest held: nothing after N was lost.
  const edge = log.replay(88);
  assertEquals(edge.gap, null);
  assertEquals(ids(edge.entries), range(89, 600));
  const mid = log.replay(300);
  assertEquals(mid.gap, null);
  assertEquals(ids(mid.entries), range(301, 600));
});

Deno.test("log: bytes are encoded once; plain connections see only standard events", () => {
  const log = new EventLog();
  const std = log.append(input({ n: 1 }));
  assertEquals(json(std.plain), { kind: "plain", n: 1 });
  assertEquals(json(std.activated), { kind: "activated", n: 1, taskId: "tsk_a" });
  const frame = log.append(input({ standard: false, n: 2 }));
  assertEquals(frame.plain, null, "a murmur frame is not for plain connections");
  // A standard event whose plain form is the activated one shares the same bytes.
  const same = { hello: "world" };
  const shared = log.append({
    taskId: "t",
    contextId: "c",
    standard: true,
    plain: same,
    activated: same,
    state: "TASK_STATE_WORKING",
    isStatus: true,
  });
  assert.equal(shared.plain, shared.activated);
  const noPlain = log.append({
    taskId: "t",
    contextId: "c",
    standard: true,
    activated: same,
    state: "TASK_STATE_WORKING",
    isStatus: true,
  });
  assert.equal(noPlain.plain, noPlain.activated);
  // The replay hands out the very entries appended (no re-serialization per reader).
  assert.equal(log.replay(0).entries[0], std);
});

Deno.test("log: terminal and input-required are marked on statusUpdates only", () => {
  const log = new EventLog();
  const working = log.append(input({ isStatus: true, state: "TASK_STATE_WORKING" }));
  const input_ = log.append(input({ isStatus: true, state: "TASK_STATE_INPUT_REQUIRED" }));
  const carrier = log.append(input({ isStatus: false, state: "TASK_STATE_COMPLETED" }));
  const ends = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"] as const;
  const terms = ends.map((state) => log.append(input({ isStatus: true, state })));
  assertEquals([working.terminal, working.inputRequired], [false, false]);
  assertEquals([input_.terminal, input_.inputRequired], [false, true]);
  assertEquals([carrier.terminal, carrier.inputRequired], [false, false]);
  for (const t of terms) assertEquals([t.terminal, t.inputRequired], [true, false], t.state);
});

Deno.test("log: close ends every subscription, refuses appends, and a later subscribe is ended at once", () => {
  const log = new EventLog();
  const sub = log.subscribe();
  appendMany(log, 3);
  assertEquals(log.subscriptionCount, 1);
  log.close();
  assert.ok(log.closed);
  assert.ok(sub.ended);
  // What the subscription held is still delivered after the end.
  assertEquals(ids(sub.take().entries), [1, 2, 3]);
  assert.throws(() => log.append(input()), /closed/);
  assertEquals(log.lastId, 3);
  const late = log.subscribe();
  assert.ok(late.ended);
  assertEquals(late.pending, 0);
  assertEquals(log.subscriptionCount, 1, "a subscription made after close is not kept");
  log.close(); // idempotent
  // The replay ring survives the close (a last reader may still ask).
  assertEquals(ids(log.replay(0).entries), [1, 2, 3]);
});
