/**
 * A mirror's log (EventLog.appendMirrored, src/edge/mirror.ts): events keep the ids they were given;
 * a duplicate is dropped; a hole restarts the replay buffer at the new id, so a replay from before
 * the hole answers a gap, and a live subscription counts the hole as events it lost.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog, type MirroredEvent } from "../../src/events/log.ts";

const ev = (id: number): MirroredEvent => ({
  id,
  taskId: "tsk_a",
  contextId: "ctx_a",
  standard: false,
  state: "TASK_STATE_WORKING",
  terminal: false,
  inputRequired: false,
  activated: `{"n":${id}}`,
  plain: null,
});

Deno.test("mirror log: a start past 1 is the buffer's start, not a loss", () => {
  const log = new EventLog();
  for (let id = 40; id <= 45; id++) log.appendMirrored(ev(id));
  assertEquals(log.firstAvailableId, 40);
  assertEquals(log.replay(41).gap, null);
  assertEquals(log.replay(41).entries.map((e) => e.id), [42, 43, 44, 45]);
  assertEquals(log.replay(10).gap, 40);
  assertEquals(log.replay(45 + 3).gap, 40);
});

Deno.test("mirror log: duplicates dropped; a hole is a gap for replays and lost for live readers", () => {
  const log = new EventLog();
  for (let id = 1; id <= 10; id++) log.appendMirrored(ev(id));
  const sub = log.subscribe();
  assertEquals(log.appendMirrored(ev(10)), null);
  assertEquals(log.appendMirrored(ev(3)), null);
  log.appendMirrored(ev(11));
  log.appendMirrored(ev(20)); // 12..19 never came
  // The hole is told where it is: after 11, before 20 (not before 11, which the reader had).
  const before = sub.take();
  assertEquals([before.entries.map((e) => e.id), before.missed], [[11], 0]);
  const after = sub.take();
  assertEquals([after.entries.map((e) => e.id), after.missed], [[20], 8]);
  assertEquals(log.replay(5).gap, 20);
  assertEquals(log.replay(5).entries.map((e) => e.id), [20]);
  assertEquals(log.replay(20).gap, null);
  assertEquals(new TextDecoder().decode(log.replay(19).entries[0].activated), '{"n":20}');
  // A hole behind events the reader then loses to its own overflow is told with them, once.
  const slow = log.subscribe(undefined, 2);
  log.appendMirrored(ev(21));
  log.appendMirrored(ev(30)); // 22..29 never came
  log.appendMirrored(ev(31));
  log.appendMirrored(ev(32)); // the queue of 2 drops 21 (before the hole) and 30
  const told = slow.take();
  assertEquals([told.entries.map((e) => e.id), told.missed], [[31, 32], 1 + 8 + 1]);
  slow.close();
  sub.close();
});
