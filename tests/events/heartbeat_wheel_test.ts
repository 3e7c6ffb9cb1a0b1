/**
 * The shared heartbeat wheel: each connection beats every interval from its own registration,
 * from one timer; a removed connection stops at once; an empty wheel holds no timer. The clock
 * and the timer are the test's own (a manual clock, a timer the test runs when its time comes),
 * so every beat's time is exact and nothing depends on how busy the machine is.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { HeartbeatWheel, type WheelTimer } from "../../src/events/heartbeat.ts";

/** A manual clock and the wheel's timer: `advance(t)` runs the armed timer whenever it is due. */
class ManualTime implements WheelTimer {
  now = 0;
  armed = new Map<number, { f: () => void; at: number }>();
  #next = 1;
  /** The most timers armed at once. */
  most = 0;

  set(f: () => void, ms: number): number {
    const id = this.#next++;
    this.armed.set(id, { f, at: this.now + ms });
    this.most = Math.max(this.most, this.armed.size);
    return id;
  }

  clear(id: unknown): void {
    this.armed.delete(id as number);
  }

  /** Moves the clock to `to` in 1 ms steps, firing each timer at its time (never early). */
  advance(to: number): void {
    while (this.now < to) {
      this.now++;
      for (const [id, t] of [...this.armed]) {
        if (t.at > this.now) continue;
        this.armed.delete(id);
        t.f();
      }
    }
  }
}

function conn(name: string, time: ManualTime, log: [string, number][], wheel?: HeartbeatWheel) {
  const c = {
    hbDue: 0,
    hbIndex: -1,
    beats: 0,
    beat() {
      c.beats++;
      log.push([name, time.now]);
      if (wheel && c.beats === 2) wheel.remove(c); // ends itself from inside its beat
    },
  };
  return c;
}

Deno.test("heartbeat wheel: every interval from each connection's own start, one removal stops it", () => {
  const time = new ManualTime();
  const wheel = new HeartbeatWheel(60, () => time.now, time);
  const log: [string, number][] = [];
  const a = conn("a", time, log);
  wheel.add(a);
  time.advance(25);
  const b = conn("b", time, log);
  wheel.add(b);
  const c = conn("c", time, log, wheel);
  wheel.add(c);
  assert.equal(wheel.size, 3);
  time.advance(260);
  wheel.remove(a);
  wheel.remove(b);
  assert.equal(wheel.size, 0, "c removed itself after two beats; a and b removed");
  assert.equal(time.armed.size, 0, "an empty wheel holds no timer");
  time.advance(500);
  const at = (n: string) => log.filter(([x]) => x === n).map(([, t]) => t);
  assertEquals(at("a"), [60, 120, 180, 240]);
  assertEquals(at("b"), [85, 145, 205], "b: every 60 ms from its own start, none after removal");
  assertEquals(at("c"), [85, 145]);
  assert.equal(time.most, 1, "one timer");
});

Deno.test("heartbeat wheel: many connections share one timer and each beats once per interval", () => {
  const time = new ManualTime();
  const wheel = new HeartbeatWheel(40, () => time.now, time);
  const log: [string, number][] = [];
  const conns = Array.from({ length: 500 }, (_, i) => conn(String(i), time, log));
  for (const c of conns) wheel.add(c);
  time.advance(95);
  for (const c of conns) wheel.remove(c);
  for (const c of conns) assert.equal(c.beats, 2);
  assertEquals(new Set(log.map(([, t]) => t)), new Set([40, 80]), "all due together, all at once");
  assert.equal(time.most, 1, "one timer for all of them");
  assert.equal(time.armed.size, 0);
});
