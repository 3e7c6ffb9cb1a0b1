/**
 * Subscriptions (design.md): a bounded queue of 128 per reader that never blocks the log. A reader
 * that falls behind loses the oldest queued events, and is told exactly how many (`lagged`).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { SUBSCRIPTION_CAPACITY } from "../../src/events/subscription.ts";
import { appendMany, ids, input, range, settlesWithin } from "./helpers.ts";

Deno.test("subscription: sees only events appended after it subscribed, in order", () => {
  const log = new EventLog();
  appendMany(log, 5);
  const sub = log.subscribe();
  assertEquals(sub.pending, 0);
  appendMany(log, 3);
  assertEquals(sub.pending, 3);
  const got = sub.take();
  assertEquals(ids(got.entries), [6, 7, 8]);
  assertEquals(got.missed, 0);
  assertEquals(sub.take(), { entries: [], missed: 0 }, "take empties the queue");
});

Deno.test("subscription: the filter decides what is queued; filtered-out events are not missed", () => {
  const log = new EventLog();
  const onlyB = log.subscribe((e) => e.taskId === "tsk_b", 4);
  for (let i = 0; i < 20; i++) log.append(input({ taskId: i % 5 === 0 ? "tsk_b" : "tsk_a" }));
  const got = onlyB.take();
  assertEquals(ids(got.entries), [1, 6, 11, 16]);
  assertEquals(got.missed, 0);
});

Deno.test("subscription: capacity 128, drop-oldest, exact missed count", () => {
  assertEquals(SUBSCRIPTION_CAPACITY, 128);
  const log = new EventLog();
  const sub = log.subscribe();
  appendMany(log, 128);
  assertEquals(sub.pending, 128);
  let got = sub.take();
  assertEquals(got.missed, 0);
  assertEquals(ids(got.entries), range(1, 128));

  appendMany(log, 200); // ids 129..328
  assertEquals(sub.pending, 128);
  got = sub.take();
  assertEquals(got.missed, 72);
  assertEquals(ids(got.entries), range(201, 328), "the newest 128 are kept");

  // The count resets with each take and starts again from the next overflow.
  appendMany(log, 129); // 329..457
  got = sub.take();
  assertEquals(got.missed, 1);
  assertEquals(ids(got.entries), range(330, 457));
  assertEquals(sub.take().missed, 0);
});

Deno.test("subscription: a reader that never reads does not block the log; counts stay exact over thousands", () => {
  const log = new EventLog();
  const slow = log.subscribe();
  const fast = log.subscribe();
  let fastSeen = 0;
  for (let i = 0; i < 5000; i++) {
    log.append(input({ n: i + 1 }));
    if (i % 100 === 99) fastSeen += fast.take().entries.length;
  }
  fastSeen += fast.take().entries.length;
  assertEquals(fastSeen, 5000, "a reader that keeps up loses nothing");
  const got = slow.take();
  assertEquals(got.missed, 5000 - 128);
  assertEquals(ids(got.entries), range(5000 - 127, 5000));
  assertEquals(got.missed + got.entries.length, log.lastId);
});

Deno.test("subscription: a custom capacity bounds the queue the same way", () => {
  const log = new EventLog();
  const sub = log.subscribe(undefined, 3);
  appendMany(log, 10);
  const got = sub.take();
  assertEquals(got.missed, 7);
  assertEquals(ids(got.entries), [8, 9, 10]);
});

Deno.test("subscription: wait() resolves on an event, on wakeUp, on end; at once when something is queued", async () => {
  const log = new EventLog();
  const sub = log.subscribe();
  const idle = sub.wait();
  assert.equal(await settlesWithin(idle, 30), false, "nothing queued: wait stays pending");
  log.append(input());
  assert.ok(await settlesWithin(idle, 1000), "an appended event wakes the reader");
  assert.ok(await settlesWithin(sub.wait(), 1000), "queued: resolves at once");
  sub.take();

  const woken = sub.wait();
  sub.wakeUp();
  assert.ok(await settlesWithin(woken, 1000), "wakeUp (heartbeat due) wakes the reader");

  const ending = sub.wait();
  log.close();
  assert.ok(await settlesWithin(ending, 1000), "the log's end wakes the reader");
  assert.ok(sub.ended);
  assert.ok(await settlesWithin(sub.wait(), 1000), "an ended subscription never waits");
});

Deno.test("subscription: end() keeps what is queued for the reader; close() drops it and leaves the log", () => {
  const log = new EventLog();
  const ends = log.subscribe();
  const closes = log.subscribe();
  appendMany(log, 2);
  assertEquals(log.subscriptionCount, 2);

  ends.end();
  assert.ok(ends.ended);
  log.append(input());
  assertEquals(ids(ends.take().entries), [1, 2], "nothing is queued after end");

  closes.close();
  assert.ok(closes.ended);
  assertEquals(closes.pending, 0);
  assertEquals(log.subscriptionCount, 1, "a closed subscription leaves the log");
  log.append(input());
  assertEquals(closes.take(), { entries: [], missed: 0 });
});

Deno.test("subscription: a pending wait() resolves when the reader closes", async () => {
  const log = new EventLog();
  const sub = log.subscribe();
  const w = sub.wait();
  sub.close();
  assert.ok(await settlesWithin(w, 1000));
  assertEquals(log.subscriptionCount, 0);
});
