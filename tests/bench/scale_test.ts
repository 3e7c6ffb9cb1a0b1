/**
 * The scale rows' pieces that decide a figure: the capsules mur must accept as written, the
 * per-turn gaps read from a trace, and the trimmed tenths (scripts/bench/round_scale.ts).
 */
import assert from "node:assert/strict";
import {
  heapPerTurn,
  majorGc,
  queueCapsule,
  runtimeTenth,
  STALL_MS,
  tenth,
  type TraceLine,
  turnGaps,
  turnsCapsule,
  writeScaleCapsule,
} from "../../scripts/bench/round_scale.ts";
import { Scale, type Scale as _S, scaleTable } from "../../scripts/bench/scale.ts";
import { kill, spawnReady } from "../../scripts/bench/procs.ts";
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

Deno.test("runtimeTenth: whole-millisecond readings average to a sub-millisecond mean; stalls apart", () => {
  // A true 0.4 ms a turn, read through whole-millisecond clocks at random phases: each turn's
  // figure is a difference of truncated readings (the gap) minus another (the tool's duration).
  let seed = 7;
  const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const truth = (ms: number) =>
    Array.from({ length: 1000 }, () => {
      const t0 = rand() * 1000;
      const tool = 5 + rand() * 2;
      const s0 = t0 + rand() * 0.05;
      const gap = Math.floor(t0 + tool + ms) - Math.floor(t0);
      const d = Math.floor(s0 + tool) - Math.floor(s0);
      return gap - d;
    });
  const xs = [...truth(0.4).slice(0, 100), ...truth(0.8).slice(0, 900)];
  // Three stalls in the last tenth: left out of the mean, counted with their time.
  xs[990] = 40;
  xs[991] = 25;
  xs[992] = 1 + STALL_MS + 1;
  const first = runtimeTenth(xs, false);
  const last = runtimeTenth(xs, true);
  assert.ok(Math.abs(first.ms - 0.4) < 0.15, `first tenth ${first.ms}`);
  assert.ok(Math.abs(last.ms - 0.8) < 0.15, `last tenth ${last.ms}`);
  assert.deepEqual([first.turns, first.stalls], [100, 0]);
  assert.deepEqual([last.stalls, last.stallMs], [3, 40 + 25 + 1 + STALL_MS + 1]);
  // What a median of the same readings says: a whole number, blind to the difference.
  const med = (a: number[]) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  assert.ok(Number.isInteger(med(xs.slice(0, 100))));
});

Deno.test("majorGc: V8's --trace-gc line of a major collection, nothing else", () => {
  assert.deepEqual(
    majorGc(
      "[7339:0x556a347d0000]     4431 ms: Incremental Mark-Compact 36.2 (85.3) -> 24.0 (85.8) MB, pooled: 28.0 MB, 7.75 / 0.00 ms (+ 11.8 ms in 263 steps since start of marking, biggest step 0.5 ms, walltime since start of marking 40 ms) finalize incremental marking via stack guard; GC in old space requested",
    ),
    { ms: 4431, liveMiB: 24.0 },
  );
  assert.deepEqual(
    majorGc("[1:0x1]      624 ms: Mark-Compact (reduce) 52.0 (69.4) -> 30.6 (64.2) MB, x"),
    { ms: 624, liveMiB: 30.6 },
  );
  assert.equal(
    majorGc("[1:0x1]   40 ms: Scavenge 3.4 (4.4) -> 3.0 (5.2) MB, pooled: 0.0 MB"),
    null,
  );
  assert.equal(majorGc('{"url":"localhost:1","pid":2}'), null);
});

Deno.test("heapPerTurn: live heap change per turn between the collections after the first tenth", () => {
  // 100 turns, one every 10 ms from t = 1000.
  const inf = Array.from({ length: 100 }, (_, i) => 1000 + i * 10);
  const gcs = [
    { at: 1005, liveMiB: 50 }, // in the first tenth: the start, left out
    { at: 1205, liveMiB: 20 }, // after turn 20 (21 inference lines seen)
    { at: 1705, liveMiB: 21 },
    { at: 1905, liveMiB: 22 }, // after turn 90
  ];
  const h = heapPerTurn(gcs, inf);
  assert.equal(h.collections, 3);
  assert.equal(h.turns, 70);
  assert.equal(h.kib, 2 * 1024 / 70);
  assert.ok(Number.isNaN(heapPerTurn(gcs.slice(0, 2), inf).kib), "one collection is not a slope");
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

Deno.test("spawnReady: --trace-gc lines ahead of the readiness line are passed over and handed on", async () => {
  const script = [
    "echo '[1:0x1]   624 ms: Mark-Compact 52.0 (69.4) -> 30.6 (64.2) MB, x'",
    `echo '{"url":"localhost:1"}'`,
    "echo '[1:0x1]  900 ms: Mark-Compact 40.0 (69.4) -> 31.0 (64.2) MB, x'",
    "exec sleep 30",
  ].join("; ");
  const seen: string[] = [];
  const s = await spawnReady({
    name: "gc lines",
    cmd: ["bash", "-c", script],
    readyTimeoutMs: 10_000,
    skipLine: (l) => {
      seen.push(l);
      return l.startsWith("[");
    },
  });
  try {
    assert.deepEqual(s.ready, { url: "localhost:1" });
    assert.equal(seen.length, 2, "the GC line, then the readiness line (not skipped)");
    assert.deepEqual(majorGc(seen[0]), { ms: 624, liveMiB: 30.6 });
    const next = await s.lines.next();
    assert.deepEqual(majorGc(String(next.value)), { ms: 900, liveMiB: 31.0 });
  } finally {
    kill(s.pid);
  }
  // Without it, the first line must be the readiness line.
  await assert.rejects(
    spawnReady({ name: "gc lines", cmd: ["bash", "-c", script], readyTimeoutMs: 10_000 }),
    /readiness line is not JSON/,
  );
});
