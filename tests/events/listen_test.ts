/**
 * Subscription listeners (the stream's push-driven writer): told once per macrotask for a burst,
 * synchronously before the queue of 128 could overflow, on end; never after close. Lagged counts
 * stay exact.
 */
import { setImmediate } from "node:timers";
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { LISTEN_MARGIN, SUBSCRIPTION_CAPACITY } from "../../src/events/subscription.ts";
import { appendMany, ids, input, range } from "./helpers.ts";

// The subscription's once-per-macrotask call is a setImmediate; one queued after it runs after it.
const macrotask = () => new Promise<void>((r) => setImmediate(r));

Deno.test("listener: a burst appended within one macrotask is one call, after the burst", async () => {
  const log = new EventLog();
  const sub = log.subscribe();
  let calls = 0;
  sub.listen({
    ready(urgent) {
      assert.equal(urgent, false, "below the threshold: only the end-of-burst call");
      calls++;
    },
  });
  appendMany(log, 50);
  assert.equal(calls, 0, "not called per event, nor synchronously below the threshold");
  await macrotask();
  assert.equal(calls, 1);
  assertEquals(ids(sub.take().entries), range(1, 50));
  await macrotask();
  assert.equal(calls, 1, "nothing new: no further call");
  sub.close();
});

Deno.test("listener: called synchronously at capacity − margin, so a reader that takes then never loses an event", () => {
  const log = new EventLog();
  const sub = log.subscribe();
  const got: number[] = [];
  const pendingAtCall: number[] = [];
  sub.listen({
    ready(urgent) {
      assert.ok(urgent, "mid-burst calls are urgent");
      pendingAtCall.push(sub.pending);
      const t = sub.take();
      assert.equal(t.missed, 0);
      got.push(...ids(t.entries));
    },
  });
  appendMany(log, 1000); // one synchronous burst: no macrotask in between
  const at = SUBSCRIPTION_CAPACITY - LISTEN_MARGIN;
  assert.ok(pendingAtCall.length >= Math.floor(1000 / at));
  for (const p of pendingAtCall) assert.equal(p, at);
  got.push(...ids(sub.take().entries));
  assertEquals(got, range(1, 1000));
  sub.close();
});

Deno.test("listener: after urgent takes, the burst still ends with one non-urgent call", async () => {
  const log = new EventLog();
  const sub = log.subscribe();
  const calls: boolean[] = [];
  sub.listen({
    ready(urgent) {
      calls.push(urgent);
      sub.take();
    },
  });
  appendMany(log, 200);
  assertEquals(calls, [true, true]);
  await macrotask();
  assertEquals(calls, [true, true, false], "the write-out call comes even with nothing queued");
  sub.close();
});

Deno.test("listener: a reader that does not take keeps the newest 128 and an exact missed count", async () => {
  const log = new EventLog();
  const sub = log.subscribe();
  let calls = 0;
  sub.listen({ ready: () => calls++ });
  appendMany(log, 300);
  assert.ok(calls > 0);
  const t = sub.take();
  assertEquals(ids(t.entries), range(173, 300));
  assert.equal(t.missed, 172);
  await macrotask();
  sub.close();
});

Deno.test("listener: told when the log ends; never after close", async () => {
  const log = new EventLog();
  const a = log.subscribe();
  const b = log.subscribe();
  let aCalls = 0, bCalls = 0;
  a.listen({ ready: () => aCalls++ });
  b.listen({ ready: () => bCalls++ });
  b.close();
  log.append(input());
  await macrotask();
  assert.equal(bCalls, 0, "a closed subscription's listener is not called");
  assert.equal(aCalls, 1);
  a.take();
  log.close();
  assert.equal(aCalls, 2, "the end is told at once");
  assert.ok(a.ended);
  a.close();
});

Deno.test("listener: events queued before listen() are told on the next macrotask", async () => {
  const log = new EventLog();
  const sub = log.subscribe();
  appendMany(log, 3);
  let calls = 0;
  sub.listen({ ready: () => calls++ });
  await macrotask();
  assert.equal(calls, 1);
  assertEquals(ids(sub.take().entries), [1, 2, 3]);
  sub.close();
});
