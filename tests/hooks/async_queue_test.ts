/**
 * The session-end drain of async hooks (src/hooks/async_queue.ts, docs/hooks.md "Async hooks"):
 * when the budget runs out, the events still waiting are dropped, and a call already running is
 * waited for, so its own answer or failure is what gets recorded. No timing: the budget is 0 and
 * the running call ends when the test says so.
 */
import assert from "node:assert/strict";
import { AsyncQueues } from "../../src/hooks/async_queue.ts";
import type { BoundHook } from "../../src/manifest/types.ts";
import type { HookEvent } from "../../src/session/hooks_api.ts";

const hook = (name: string) => ({ name }) as unknown as BoundHook;
const event = (n: number) => ({ n }) as unknown as HookEvent;

Deno.test("drain: a running call is waited for past the budget; waiting events are dropped", async () => {
  const log: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const queues = new AsyncQueues({
    run: async (h, ev) => {
      log.push(`start ${h.name} ${(ev as unknown as { n: number }).n}`);
      if (h.name === "busy") await held;
      log.push(`end ${h.name} ${(ev as unknown as { n: number }).n}`);
    },
    overflow: (h) => log.push(`overflow ${h.name}`),
    dropped: (h, n) => log.push(`dropped ${h.name} ${n}`),
  });
  queues.enqueue(hook("busy"), event(1));
  queues.enqueue(hook("busy"), event(2));
  queues.enqueue(hook("busy"), event(3));
  let drained = false;
  const draining = queues.drain(0).then(() => (drained = true));
  // The budget (0) runs out with event 1 running and 2, 3 waiting: those two are dropped at once.
  for (let i = 0; i < 1000 && !log.includes("dropped busy 2"); i++) {
    await new Promise((r) => setTimeout(r, 0));
  }
  assert.deepEqual(log, ["start busy 1", "dropped busy 2"]);
  assert.equal(drained, false, "the drain waits for the running call");
  release();
  await draining;
  assert.deepEqual(log, ["start busy 1", "dropped busy 2", "end busy 1"]);
});

Deno.test("drain: a queue whose only call is running records no drop", async () => {
  const log: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const queues = new AsyncQueues({
    run: async () => {
      log.push("start");
      await held;
      log.push("end");
    },
    overflow: () => log.push("overflow"),
    dropped: (_h, n) => log.push(`dropped ${n}`),
  });
  queues.enqueue(hook("hang"), event(1));
  const draining = queues.drain(0);
  setTimeout(release, 0);
  await draining;
  assert.deepEqual(log, ["start", "end"]);
});
