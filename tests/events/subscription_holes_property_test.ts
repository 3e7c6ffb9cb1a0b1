/**
 * Property of a subscription to a mirrored log (an edge's copy of a session, src/edge/mirror.ts):
 * whatever mix of events, holes (events the edge never read) and takes, with any queue size, each
 * take's `missed` is exactly the events missing between what the reader got last and the take's
 * first entry, and a take's entries have no hole among them. So a `lagged` frame is told where the
 * loss is — not before older events still queued — and received + told = written. The reference
 * is the ids themselves: consecutive numbers, so any hole is visible.
 */
import fc from "fast-check";
import assert from "node:assert/strict";
import { EventLog, type MirroredEvent } from "../../src/events/log.ts";
import { checkProperty } from "../helpers/property.ts";

type Op = { k: "event" } | { k: "hole"; n: number } | { k: "take" };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ k: "event" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("hole" as const), n: fc.integer({ min: 1, max: 40 }) }),
  },
  { weight: 2, arbitrary: fc.constant({ k: "take" as const }) },
);

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

Deno.test("subscription holes property: a take's missed is exactly the hole before its first entry", () => {
  let holesTold = 0;
  const runs = checkProperty(
    { name: "subscription holes property", numRuns: 500 },
    fc.property(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 12 }), (ops, cap) => {
      const log = new EventLog();
      log.appendMirrored(ev(1));
      const sub = log.subscribe(undefined, cap);
      let next = 2;
      let got = 1; // the reader's last id (1 came before it subscribed)
      let total = 0;
      const take = () => {
        const t = sub.take();
        if (t.entries.length === 0) {
          // Only a loss at the end of what was written: the next event will come after it.
          total += t.missed;
          return;
        }
        const ids = t.entries.map((e) => e.id);
        assert.equal(t.missed, ids[0] - got - 1, `missed before ${ids[0]} (after ${got})`);
        ids.forEach((id, i) => i > 0 && assert.equal(id, ids[i - 1] + 1, "a hole inside a take"));
        if (t.missed > 0) holesTold++;
        total += t.missed + ids.length;
        got = ids.at(-1)!;
      };
      for (const o of ops) {
        if (o.k === "event") log.appendMirrored(ev(next++));
        else if (o.k === "hole") next += o.n;
        else take();
      }
      log.appendMirrored(ev(next)); // a last event, so every hole lies before something
      while (sub.pending > 0 || sub.missed > 0) take();
      assert.equal(got, next);
      assert.equal(total, next - 1, "received + told = written");
      sub.close();
    }),
  );
  console.log(`property: subscription holes: ${runs} cases, ${holesTold} losses told in place`);
});
