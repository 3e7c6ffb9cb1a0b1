/**
 * CallOrder (src/drivers/process/call_order.ts): a bridge call runs only after the harness's
 * announcement of it has gone out as parts, whichever of the two arrives first.
 */
import assert from "node:assert/strict";
import { CallOrder } from "../../../src/drivers/process/call_order.ts";

/** Whether `p` has settled once pending callbacks ran (no clock involved). */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

const LONG = 600_000; // never reached by a test: only announce() or close() may release a call

Deno.test("call order: a call that arrives first waits for its announcement; one per announcement", async () => {
  const order = new CallOrder(LONG);
  const first = order.ready("request-input");
  const second = order.ready("request-input");
  assert.equal(await settled(first), false, "no announcement yet");
  order.announce("toolu_1", "other-tool");
  assert.equal(await settled(first), false, "another tool's announcement does not count");
  order.announce("toolu_2", "request-input");
  assert.equal(await settled(first), true);
  assert.equal(await settled(second), false, "one announcement releases one call");
  order.announce("toolu_2", "request-input"); // the same call's whole form: not a second one
  assert.equal(await settled(second), false);
  order.announce("toolu_3", "request-input");
  assert.equal(await settled(second), true);
  order.close();
});

Deno.test("call order: an announcement that came first lets its call run at once; close releases all", async () => {
  const order = new CallOrder(LONG);
  order.announce("a", "echo");
  assert.equal(await settled(order.ready("echo")), true);
  const waiting = order.ready("echo");
  assert.equal(await settled(waiting), false);
  order.close();
  assert.equal(await settled(waiting), true);
  assert.equal(await settled(order.ready("echo")), true, "after close nothing waits");
});

Deno.test("call order: a harness that never announces delays a call by the grace period only", async () => {
  const order = new CallOrder(0);
  await order.ready("echo"); // resolves from its timer: the test would hang otherwise
  order.close();
});
