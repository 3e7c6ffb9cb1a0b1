/**
 * Seed 000's "Working status messages" for handed-off work, exactly, including the `; ` join
 * when both kinds are out or arrived (src/crew/calls/answers_message.ts).
 */
import assert from "node:assert/strict";
import { continuingStatus, waitingStatus } from "../../src/crew/calls/answers_message.ts";
import type { HandedOffWork } from "../../src/crew/calls/handed_off.ts";

const work = (kind: "call" | "delegation"): HandedOffWork => ({
  kind,
  id: `${kind}_1`,
  name: "x",
  outstanding: false,
  delivered: false,
  done: Promise.resolve(),
  stop() {},
});

Deno.test("statuses: waiting on calls, delegations, and both joined with '; '", () => {
  assert.equal(
    waitingStatus({ calls: 2, delegations: 0 }),
    "waiting on call-member: 2 call(s) outstanding",
  );
  assert.equal(
    waitingStatus({ calls: 0, delegations: 1 }),
    "waiting on delegate-task: 1 delegation(s) outstanding",
  );
  assert.equal(
    waitingStatus({ calls: 1, delegations: 3 }),
    "waiting on call-member: 1 call(s) outstanding; waiting on delegate-task: 3 delegation(s) outstanding",
  );
});

Deno.test("statuses: continuing with answers first, then outcomes, joined with '; '", () => {
  assert.equal(continuingStatus([work("call")]), "continuing with 1 member answer(s)");
  assert.equal(
    continuingStatus([work("delegation"), work("delegation")]),
    "continuing with 2 delegation outcome(s)",
  );
  assert.equal(
    continuingStatus([work("delegation"), work("call"), work("call")]),
    "continuing with 2 member answer(s); continuing with 1 delegation outcome(s)",
  );
});
