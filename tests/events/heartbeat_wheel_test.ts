/**
 * The shared heartbeat wheel: each connection beats every interval from its own registration,
 * from one timer; a removed connection stops at once; an empty wheel holds no timer (the test's
 * op sanitizer would catch one left behind).
 */
import assert from "node:assert/strict";
import { HeartbeatWheel } from "../../src/events/heartbeat.ts";

function conn(name: string, t0: number, log: [string, number][], wheel?: HeartbeatWheel) {
  const c = {
    hbDue: 0,
    hbIndex: -1,
    beats: 0,
    beat() {
      c.beats++;
      log.push([name, performance.now() - t0]);
      if (wheel && c.beats === 2) wheel.remove(c); // ends itself from inside its beat
    },
  };
  return c;
}

Deno.test("heartbeat wheel: every interval from each connection's own start, one removal stops it", async () => {
  const ms = 60;
  const wheel = new HeartbeatWheel(ms, () => performance.now());
  const t0 = performance.now();
  const log: [string, number][] = [];
  const a = conn("a", t0, log);
  wheel.add(a);
  await new Promise((r) => setTimeout(r, 25));
  const b = conn("b", t0, log);
  const bStart = performance.now() - t0;
  wheel.add(b);
  const c = conn("c", t0, log, wheel);
  wheel.add(c);
  assert.equal(wheel.size, 3);
  await new Promise((r) => setTimeout(r, 4 * ms + 20));
  wheel.remove(a);
  const bBeats = b.beats;
  wheel.remove(b);
  assert.equal(wheel.size, 0, "c removed itself after two beats; a and b removed");
  await new Promise((r) => setTimeout(r, 2 * ms));
  assert.equal(b.beats, bBeats, "no beat after removal");
  const at = (n: string) => log.filter(([x]) => x === n).map(([, t]) => t);
  const aT = at("a"), bT = at("b"), cT = at("c");
  // Timers run late on a loaded machine, never early: bound the counts by the time elapsed.
  assert.ok(aT.length >= 1 && aT.length <= Math.floor((aT.at(-1)! + 2) / ms), `a: ${aT}`);
  assert.equal(cT.length, 2);
  for (let i = 0; i < aT.length; i++) {
    assert.ok(aT[i] >= (i + 1) * ms - 2, `a's beat ${i + 1} at ${aT[i]} ms`);
  }
  for (let i = 0; i < bT.length; i++) {
    assert.ok(bT[i] >= bStart + (i + 1) * ms - 2, `b's beat ${i + 1} at ${bT[i]} ms`);
  }
  assert.ok(aT[0] <= bT[0], "a, registered first, is due first");
});

Deno.test("heartbeat wheel: many connections share one timer and each beats once per interval", async () => {
  const ms = 40;
  const wheel = new HeartbeatWheel(ms, () => performance.now());
  const t0 = performance.now();
  const log: [string, number][] = [];
  const conns = Array.from({ length: 500 }, (_, i) => conn(String(i), t0, log));
  for (const c of conns) wheel.add(c);
  await new Promise((r) => setTimeout(r, 2 * ms + 15));
  const elapsed = performance.now() - t0;
  for (const c of conns) wheel.remove(c);
  const most = Math.floor((elapsed + 2) / ms);
  for (const c of conns) {
    assert.ok(
      c.beats >= 1 && c.beats <= most,
      `a connection beat ${c.beats} times in ${elapsed} ms`,
    );
  }
  assert.ok(
    conns.every((c) => c.beats === conns[0].beats),
    "all due together, all written together",
  );
});
