/**
 * Reading V8 CPU profiles (a `--cpu-prof` file, or the inspector's Profiler.stop): self time per
 * function, per part of the event path, per module. Self time is where the samples landed: a
 * builtin V8 inlines (JSON.stringify, a typed array's set) counts in the function that called it.
 */
import type { CpuProfile } from "./inspector.ts";

export type { CpuProfile } from "./inspector.ts";

/** Each sample's self time with its frame: `fn` one entry per sample, in ms. */
function eachSample(
  p: CpuProfile,
  fn: (url: string, name: string, line: number, ms: number) => void,
) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    if (!n) continue;
    const f = n.callFrame;
    fn(f.url, f.functionName, f.lineNumber, (p.timeDeltas[i] ?? 0) / 1000);
  }
}

/** Self time per function (name + file:line), descending, in ms. */
export function selfTimes(p: CpuProfile): { fn: string; ms: number; pct: number }[] {
  const self = new Map<string, number>();
  let total = 0;
  eachSample(p, (url, name, line, ms) => {
    total += ms;
    const file = url.replace(/^.*\/(node_modules|main|deno)\//, "$1/");
    const key = `${name || "(anonymous)"} ${file}:${line + 1}`;
    self.set(key, (self.get(key) ?? 0) + ms);
  });
  return [...self.entries()]
    .map(([fn, ms]) => ({ fn, ms, pct: (100 * ms) / total }))
    .sort((a, b) => b.ms - a.ms);
}

/** A part of the work, and how to tell its samples: the first rule that matches wins. */
export interface PartRule {
  part: string;
  test(url: string, name: string): boolean;
}

/** Self ms per part in rule order (idle left out; what no rule matched is "other"). */
export function byPart(p: CpuProfile, rules: PartRule[]): { part: string; ms: number }[] {
  const ms = new Map<string, number>(rules.map((r) => [r.part, 0]));
  ms.set("other", 0);
  eachSample(p, (url, name, _line, t) => {
    if (name === "(idle)") return;
    const r = rules.find((r) => r.test(url, name));
    const k = r?.part ?? "other";
    ms.set(k, (ms.get(k) ?? 0) + t);
  });
  return [...ms.entries()].map(([part, ms]) => ({ part, ms }));
}

const src = (...dirs: string[]) => (url: string) => dirs.some((d) => url.includes(`/src/${d}`));

/**
 * The event path's parts (scripts/bench/round_profile.ts), from the model's part to the socket:
 * who made the event, who logged it, who framed it for the connection, who wrote it.
 */
export const EVENT_PATH: PartRule[] = [
  { part: "driver (the scripted model streams its parts)", test: src("drivers/") },
  {
    part: "session loop (turn, sink, registry: a part becomes a frame)",
    test: src("session/"),
  },
  {
    part: "log append (the carrier's JSON, UTF-8 into a block, the id line, fan-out to queues)",
    test: (url, name) =>
      src("events/log.ts", "events/emit.ts", "a2a/")(url) ||
      name === "op_encoding_encode_into" || url.includes("08_text_encoding"),
  },
  {
    part: "framing (each connection's wire: id, envelope, body copied once; its queue, its chunk)",
    test: src("events/"),
  },
  {
    part: "write (web stream to the HTTP layer: JS side of Deno.serve)",
    test: (url) => url.startsWith("ext:"),
  },
  { part: "garbage collection", test: (_u, name) => name === "(garbage collector)" },
  {
    part: "native (V8 and Rust outside JS: the HTTP layer's socket writes, ops)",
    test: (url, name) => name === "(program)" || name.startsWith("op_") || url === "",
  },
];

/**
 * Where a start spends its CPU, by module: an npm package by name, mur's own files by folder
 * (src/<dir>/), the runtime's JS (ext:…) together, and V8/Rust outside JS (module loading,
 * parsing, compiling: "(program)"). `capMs`: a sample standing for longer than this is a wait the
 * profiler did not mark idle (a call blocked in the runtime), counted as `capMs`.
 */
export function byModule(p: CpuProfile, capMs = Infinity): { module: string; ms: number }[] {
  const ms = new Map<string, number>();
  eachSample(p, (url, name, _line, dt) => {
    if (name === "(idle)") return;
    const t = Math.min(dt, capMs);
    let m: string;
    const npm = /\/npm\/[^/]+\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    const own = /\/(src\/[^/]+|vendor\/[^/]+|main\.ts)/.exec(url);
    if (name === "(program)") m = "(program: loading, parsing, compiling; V8 and Rust)";
    else if (name === "(garbage collector)") m = "(garbage collector)";
    else if (npm) m = `npm:${npm[1]}`;
    else if (own) m = own[1].endsWith(".ts") ? own[1] : `${own[1]}/`;
    else if (url.startsWith("ext:") || name.startsWith("op_")) m = "the runtime's JS (ext:…, ops)";
    else m = url ? url.replace(/^file:\/\/\/.*\//, "") : "(native)";
    ms.set(m, (ms.get(m) ?? 0) + t);
  });
  return [...ms.entries()].map(([module, ms]) => ({ module, ms })).sort((a, b) => b.ms - a.ms);
}
