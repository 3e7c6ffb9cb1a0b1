import assert from "node:assert/strict";
import { abortableSleep } from "../src/abortable_sleep.ts";

Deno.test("abortableSleep waits on the timer queue: a 0 ms timer set before it fires first", async () => {
  // Timers fire in deadline order, so a sleep that did not wait on a timer (a resolved promise)
  // would end before this callback ran.
  let fired = false;
  setTimeout(() => (fired = true), 0);
  await abortableSleep(1, new AbortController().signal);
  assert.equal(fired, true);
});

Deno.test("abortableSleep ends at once when its signal aborts, or was already aborted", async () => {
  const c = new AbortController();
  const long = abortableSleep(3_600_000, c.signal);
  c.abort();
  await long; // a timer left pending would also fail the test's op sanitizer
  await abortableSleep(3_600_000, AbortSignal.abort());
});
