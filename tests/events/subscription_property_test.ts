/**
 * Property of a subscription (subscription.ts, issue 13): whatever is offered, filtered, taken
 * and however slowly, a take returns the newest events it holds in order, and `missed` counts
 * exactly the ones it dropped since the last take — against a reference queue written here. A
 * listener is called at once ("urgent") exactly when its queue reaches capacity − 32.
 */
import fc from "fast-check";
import assert from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { LISTEN_MARGIN } from "../../src/events/subscription.ts";
import { checkProperty } from "../helpers/property.ts";
import { input } from "./helpers.ts";

type Op =
  | { k: "offer"; n: number; task: number }
  | { k: "take" }
  | { k: "listen" };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant("offer" as const),
      n: fc.nat({ max: 300 }),
      task: fc.nat({ max: 2 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant("take" as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("listen" as const) }) },
);

Deno.test("subscription property: takes hold the newest events in order; missed counts the rest", () => {
  let dropped = 0;
  const runs = checkProperty(
    { name: "subscription property", numRuns: 500 },
    fc.property(
      fc.array(op, { maxLength: 40 }),
      fc.integer({ min: 1, max: 200 }),
      fc.option(fc.nat({ max: 2 })),
      fc.boolean(),
      (ops, capacity, only, takeWhenUrgent) => {
        const log = new EventLog();
        const task = only === null ? undefined : `tsk_${only}`;
        const sub = log.subscribe(
          task === undefined ? undefined : (e) => e.taskId === task,
          capacity,
        );
        // The reference: a plain array and a counter.
        let queue: number[] = [];
        let missed = 0;
        let listening = false;
        const listenAt = Math.max(1, capacity - LISTEN_MARGIN);
        let urgentCalls = 0;
        let urgentWant = 0;
        const take = () => {
          const got = sub.take();
          assert.deepEqual(got.entries.map((e) => e.id), queue);
          assert.equal(got.missed, missed);
          queue = [];
          missed = 0;
        };
        for (const o of ops) {
          if (o.k === "take") take();
          else if (o.k === "listen" && !listening) {
            listening = true;
            sub.listen({
              ready(urgent) {
                if (!urgent) return;
                urgentCalls++;
                if (takeWhenUrgent) take();
              },
            });
          } else if (o.k === "offer") {
            for (let i = 0; i < o.n; i++) {
              // The reference moves first: an urgent listener takes from inside `append`.
              const taskId = `tsk_${(o.task + i) % 3}`;
              if (task === undefined || taskId === task) {
                if (queue.length >= capacity) {
                  queue.shift();
                  missed++;
                  dropped++;
                }
                queue.push(log.nextId);
                if (listening && queue.length >= listenAt) urgentWant++;
              }
              log.append(input({ taskId }));
              assert.equal(sub.pending, queue.length);
            }
          }
        }
        assert.equal(urgentCalls, urgentWant, "urgent calls");
        take();
        sub.close();
        assert.equal(log.subscriptionCount, 0);
      },
    ),
  );
  console.log(`property: subscription: ${runs} cases, ${dropped} drops counted`);
});
