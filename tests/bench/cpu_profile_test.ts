/**
 * The bench's profile readers (scripts/bench/cpu_profile.ts) on a profile built by hand: each
 * sample's time lands in the part / module its frame belongs to, idle time in none.
 */
import assert from "node:assert/strict";
import { byModule, byPart, EVENT_PATH, selfTimes } from "../../scripts/bench/cpu_profile.ts";
import type { CpuProfile } from "../../scripts/bench/inspector.ts";

const frame = (id: number, functionName: string, url: string) => ({
  id,
  callFrame: { functionName, url, lineNumber: 0 },
});

const PROFILE: CpuProfile = {
  nodes: [
    frame(1, "(idle)", ""),
    frame(2, "append", "file:///r/src/events/log.ts"),
    frame(3, "play", "file:///r/src/drivers/scripted.ts"),
    frame(4, "#slot", "file:///r/src/events/wire.ts"),
    frame(5, "(garbage collector)", ""),
    frame(6, "parse", "file:///h/deno/npm/registry.npmjs.org/zod/4.6.7/v4/core.js"),
    frame(7, "(program)", ""),
    frame(8, "enqueue", "ext:deno_web/06_streams.js"),
  ],
  // Every sample 1 ms (timeDeltas in µs); node 2 three times.
  samples: [1, 2, 2, 2, 3, 4, 5, 6, 7, 8, 1],
  timeDeltas: Array(11).fill(1000),
};

Deno.test("cpu profile: self time per part of the event path, idle left out", () => {
  const parts = new Map(byPart(PROFILE, EVENT_PATH).map((p) => [p.part, p.ms]));
  const ms = (prefix: string) => [...parts].find(([k]) => k.startsWith(prefix))![1];
  assert.equal(ms("log append"), 3);
  assert.equal(ms("driver"), 1);
  assert.equal(ms("framing"), 1);
  assert.equal(ms("garbage"), 1);
  assert.equal(ms("write"), 1);
  assert.equal(ms("native"), 1);
  assert.equal(parts.get("other"), 1); // zod: no rule of the event path
  assert.equal([...parts.values()].reduce((a, b) => a + b, 0), 9);
});

Deno.test("cpu profile: by module, npm packages by name and mur's files by folder", () => {
  const m = new Map(byModule(PROFILE).map((r) => [r.module, r.ms]));
  assert.equal(m.get("src/events/"), 4);
  assert.equal(m.get("src/drivers/"), 1);
  assert.equal(m.get("npm:zod"), 1);
  assert.equal(m.get("the runtime's JS (ext:…, ops)"), 1);
  assert.ok(![...m.keys()].some((k) => k.includes("idle")));
  assert.equal(selfTimes(PROFILE)[0].ms, 3);
});
