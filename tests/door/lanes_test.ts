/**
 * Queue lanes (docs/door.md) at the registry the door submits into: the front of the highest
 * non-empty lane starts next (user > peer > bg), arrival order within a lane. The door itself
 * can only reach peer and bg (lifecycle_test.ts); the user lane holds the launch task.
 */
import assert from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { Registry } from "../../src/session/registry.ts";
import type { Origin } from "../../src/session/task_record.ts";

Deno.test("lanes: user before peer before bg; arrival order within a lane; canceled tasks leave", () => {
  const reg = new Registry(new EventLog(), () => 1_000);
  const add = (origin: Origin) =>
    reg.create({ text: origin, origin, source: "a2a", trusted: false });
  const bg1 = add("event");
  const peer1 = add("peer");
  const bg2 = add("completion");
  const user1 = add("user");
  const peer2 = add("peer");
  const user2 = add("user");
  const bg3 = add("schedule");
  const order: string[] = [];
  for (;;) {
    const next = reg.nextQueued();
    if (!next) break;
    order.push(next.id);
    reg.status(next, "TASK_STATE_WORKING");
  }
  assert.deepEqual(order, [user1, user2, peer1, peer2, bg1, bg2, bg3].map((t) => t.id));
  assert.deepEqual([bg1, bg2, bg3].map((t) => t.lane), ["bg", "bg", "bg"]);
  const later = add("peer");
  const early = add("event");
  reg.finish(later, "TASK_STATE_CANCELED", "task canceled before it started");
  assert.equal(reg.nextQueued()?.id, early.id);
});
