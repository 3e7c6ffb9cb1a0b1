/**
 * The scale rows' pieces that decide a figure: the capsules mur must accept as written, the
 * per-turn gaps read from a trace, and the trimmed tenths (scripts/bench/round_scale.ts).
 */
import assert from "node:assert/strict";
import {
  queueCapsule,
  tenth,
  type TraceLine,
  turnGaps,
  turnsCapsule,
  writeScaleCapsule,
} from "../../scripts/bench/round_scale.ts";
import { Scale, type Scale as _S, scaleTable } from "../../scripts/bench/scale.ts";
import { loadScript } from "../../src/drivers/scripted.ts";
import { loadManifest } from "../../src/manifest/load.ts";

Deno.test("scale capsules: the turns, hooks and queue capsules load with no warning", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench-scale-" });
  try {
    for (
      const [name, spec, check] of [
        ["turns", turnsCapsule(7), (m: Awaited<ReturnType<typeof loadManifest>>) => {
          assert.equal(m.manifest.hooks.length, 0);
        }],
        ["hooks", turnsCapsule(7, 50), (m: Awaited<ReturnType<typeof loadManifest>>) => {
          assert.equal(m.manifest.hooks.length, 50);
          assert.ok(m.manifest.hooks.every((h) => h.binding === "on-shell"));
        }],
        ["queue", queueCapsule(100), (m: Awaited<ReturnType<typeof loadManifest>>) => {
          assert.equal(m.manifest.lifecycle.queueDepth, 101);
        }],
      ] as const
    ) {
      const path = await writeScaleCapsule(dir, name, spec);
      const loaded = await loadManifest(path);
      assert.deepEqual(loaded.warnings, [], name);
      check(loaded);
      await loadScript(`${dir}/${name}/script.json`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("turnGaps: per turn the gap to the next inference line, and that gap minus its tool call", () => {
  const line = (event_type: string, timestamp: number, turn: number, duration_ms?: number) =>
    ({ event_type, timestamp, turn, duration_ms }) as TraceLine;
  const trace = [
    line("inference", 1000, 0),
    line("tool_call", 1012, 0, 10),
    line("shell", 1012, 0, 10),
    line("inference", 1013, 1),
    line("tool_call", 1030, 1, 15),
    line("inference", 1031, 2),
  ];
  assert.deepEqual(turnGaps(trace), { whole: [13, 18], runtime: [3, 3] });
});

Deno.test("tenth: a mean of the first or last tenth trimmed of its extremes", () => {
  // 100 values: the first ten are 1 … 10 with one outlier, the last ten all 5.
  const xs = Array.from({ length: 100 }, (_, i) => (i < 10 ? i + 1 : 5));
  xs[0] = 1000;
  // First tenth sorted: 2 … 10, 1000; the trim drops 2 and 1000.
  assert.equal(tenth([...xs], false), (3 + 4 + 5 + 6 + 7 + 8 + 9 + 10) / 8);
  assert.equal(tenth([...xs], true), 5);
});

Deno.test("scaleTable: ratio and verdict against the target; a missing row says why", () => {
  const s = new Scale();
  s.add({ label: "a", mur: 13, base: 10, baseLabel: "first", unit: "ms", digits: 1, target: 1.3 });
  s.add({ label: "b", mur: 14, base: 10, baseLabel: "first", unit: "ms", digits: 1, target: 1.3 });
  s.missing("c", "it broke");
  const t = scaleTable(s);
  assert.match(t, /\| a \| 13\.0 ms \| first: 10\.0 ms \| 1\.30× \| ≤ 1\.3× — met \|/);
  assert.match(t, /\| b \| 14\.0 ms \| first: 10\.0 ms \| 1\.40× \| ≤ 1\.3× — not met \|/);
  assert.match(t, /\| c \[1\] \|/);
  assert.match(t, /1\. not available: it broke/);
});
