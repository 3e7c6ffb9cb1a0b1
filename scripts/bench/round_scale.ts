/**
 * The scale rows (issue 18), each a real `mur run` of a scripted capsule (the scripted driver:
 * frames, turns, tools and hooks run for real, only the model is a script), read back from the
 * session's trace.jsonl:
 *
 *   turn overhead   one task of N turns, each calling the `bash` tool that prints 8 KiB; the
 *                   per-turn time (gap between consecutive `inference` trace lines) of the last
 *                   tenth over the first tenth — with the tool's run (its process start) and
 *                   without it (runtime-only: the gap minus the tool call's own duration_ms).
 *                   Beside them, memory: V8's live heap after each major collection (mur run
 *                   under `--v8-flags=--trace-gc`) per turn, against the conversation record's
 *                   bytes per turn, and RSS.
 *   hooks           the same turns with 50 `on-shell` command hooks bound, against none: per
 *                   hook run, over what spawning the same command costs this runtime directly.
 *   queue           100 tasks queued behind a gated first one: the time per task through the
 *                   queue, last tenth over first tenth.
 *   idle memory     one idle capsule, ten, a formation, against bare Deno.serve processes, each
 *                   after a full GC (round_memory.ts).
 *
 * Trace timestamps are whole milliseconds: a tenth (≥ 100 turns at N = 1,000) is what is
 * compared, never a single turn — as a trimmed mean for the whole turn, and for mur's own part
 * (well under a millisecond) as the plain mean that whole-millisecond readings resolve
 * (`runtimeTenth`).
 */
import {
  canPin,
  entryArgs,
  kill,
  killAll,
  MAIN,
  murCmd,
  rssBytes,
  SOURCE_MAIN,
  spawnReady,
} from "./procs.ts";
import { median } from "./stats.ts";
import { crewCall } from "./round_crew.ts";
import { idleMemory, idleMemoryAsIs } from "./round_memory.ts";
import { startProfiles } from "./start_profile.ts";
import { compiledBinary } from "./compiled.ts";
import type { Scale } from "./scale.ts";

const RAW = new URL("./raw_server.ts", import.meta.url).pathname;
const BASH_8K = "head -c 8192 /dev/zero | tr '\\0' a";

export interface ScaleCtx {
  scale: Scale;
  log(msg: string): void;
  /** Turns in the turn-overhead session. */
  turns: number;
  /** Turns in each hooks session. */
  hookTurns: number;
  /** Tasks through the queue. */
  queued: number;
}

export interface TraceLine {
  event_type: string;
  timestamp: number;
  duration_ms?: number;
  turn?: number;
  [k: string]: unknown;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function toolTurns(n: number): unknown[] {
  const turns: unknown[] = [];
  for (let i = 0; i < n; i++) {
    turns.push({ steps: [{ tool_call: { name: "bash", input: { command: BASH_8K } } }] });
  }
  turns.push({ steps: [{ text: "done" }] });
  return turns;
}

export interface CapsuleSpec {
  manifest: Record<string, unknown>;
  script: unknown;
}

const SHELL = { shell: { allow: ["bash"] } };
export const HOOK_CMD = ["echo", "{}"];

/** One task of `n` bash turns, with `hooks` observer hooks on `on-shell`. */
export function turnsCapsule(n: number, hooks = 0): CapsuleSpec {
  const manifest: Record<string, unknown> = {
    inference: { driver: "scripted", script: "script.json", max_turns: n + 5 },
    capabilities: SHELL,
  };
  if (hooks > 0) {
    manifest.hooks = Array.from({ length: hooks }, (_, i) => ({
      name: `h${i}`,
      binding: "on-shell",
      command: HOOK_CMD,
    }));
  }
  return { manifest, script: { tasks: [{ turns: toolTurns(n) }] } };
}

/** A sleeping queued capsule: a `gate` task waits 1.5 s, every other task answers at once. */
export function queueCapsule(q: number): CapsuleSpec {
  return {
    manifest: {
      inference: { driver: "scripted", script: "script.json", max_turns: 4 },
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: q + 1 },
    },
    script: {
      tasks: [
        { match: "^gate$", turns: [{ steps: [{ delay_ms: 1500 }, { text: "gate" }] }] },
        { turns: [{ steps: [{ text: "ok" }] }] },
      ],
    },
  };
}

/** Writes a capsule (JSON is YAML) into a fresh folder under `dir`; returns its manifest path. */
export async function writeScaleCapsule(
  dir: string,
  name: string,
  { manifest, script }: CapsuleSpec,
): Promise<string> {
  const at = `${dir}/${name}`;
  await Deno.mkdir(at, { recursive: true });
  await Deno.writeTextFile(`${at}/script.json`, JSON.stringify(script));
  await Deno.writeTextFile(
    `${at}/murmur.yaml`,
    JSON.stringify({ name, version: "0.1.0", ...manifest }),
  );
  return `${at}/murmur.yaml`;
}

async function readTrace(sessionDir: string): Promise<TraceLine[]> {
  const text = await Deno.readTextFile(`${sessionDir}/trace.jsonl`);
  return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as TraceLine);
}

interface SessionRun {
  trace: TraceLine[];
  /** RSS samples (bytes) taken every 250 ms while it ran. */
  rss: number[];
  /** Major collections, when asked for (`gc`): epoch ms (approximate) and the live heap left. */
  gcs: { at: number; liveMiB: number }[];
  /** Bytes of the session's conversation records (`conversation/*.jsonl`). */
  conversationBytes: number;
}

/**
 * One line of V8's `--trace-gc` for a major collection: ms since the isolate started and the
 * heap it left, e.g. `[7339:0x55…]  4431 ms: Incremental Mark-Compact 36.2 (85.3) -> 24.0 (85.8)
 * MB, …` (V8's MB are MiB); null for any other line.
 */
export function majorGc(line: string): { ms: number; liveMiB: number } | null {
  const m = /\s(\d+(?:\.\d+)?) ms: (?:Incremental )?Mark-Compact.*?-> ([\d.]+) \(/.exec(line);
  return m ? { ms: Number(m[1]), liveMiB: Number(m[2]) } : null;
}

async function conversationBytes(sessionDir: string): Promise<number> {
  let n = 0;
  try {
    for await (const e of Deno.readDir(`${sessionDir}/conversation`)) {
      if (e.isFile) n += (await Deno.stat(`${sessionDir}/conversation/${e.name}`)).size;
    }
  } catch { /* none */ }
  return n;
}

/** Runs one launch task to the end (`--lifecycle-after-task exit`); returns its trace. */
async function runToEnd(
  dir: string,
  name: string,
  spec: CapsuleSpec,
  timeoutMs: number,
  /** Run under `--v8-flags=--trace-gc` and collect the major collections. */
  gc = false,
): Promise<SessionRun> {
  const path = await writeScaleCapsule(dir, name, spec);
  let cmd = murCmd(path, `${dir}/${name}/wd`, ["--task", "go", "--lifecycle-after-task", "exit"]);
  // V8 prints its GC lines on stdout, among mur's own (JSON objects): told apart by their `[`.
  if (gc) {
    cmd = [cmd[0], "run", "--v8-flags=--trace-gc,--trace-gc-ignore-scavenger", ...cmd.slice(2)];
  }
  const gcs: SessionRun["gcs"] = [];
  const started = Date.now();
  const onLine = (l: string) => {
    const g = majorGc(l);
    if (g) gcs.push({ at: started + g.ms, liveMiB: g.liveMiB });
    return l.startsWith("[");
  };
  const s = await spawnReady({
    name: `mur run (${name})`,
    cmd,
    env: { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" },
    core: 0,
    readyTimeoutMs: 30_000,
    skipLine: gc ? onLine : undefined,
  });
  const rss: number[] = [];
  const sampler = setInterval(() => {
    const v = rssBytes(s.pid);
    if (Number.isFinite(v)) rss.push(v);
  }, 250);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const drain = (async () => {
      for (;;) {
        const r = await s.lines.next();
        if (r.done) break;
        if (gc) onLine(r.value);
      }
    })();
    const ended = await Promise.race([
      s.child.status.then((st) => st),
      new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs))),
    ]);
    if (ended === "timeout") throw new Error(`${name}: not finished within ${timeoutMs} ms`);
    await drain.catch(() => {});
    if (!ended.success) {
      throw new Error(`${name}: mur run exited ${ended.code}: ${s.stderr().trim().slice(-200)}`);
    }
    const sessionDir = String(s.ready.session_dir);
    return {
      trace: await readTrace(sessionDir),
      rss,
      gcs,
      conversationBytes: await conversationBytes(sessionDir),
    };
  } finally {
    clearTimeout(timer);
    clearInterval(sampler);
    kill(s.pid);
  }
}

/** Per turn: the gap to the next turn's `inference` line, and that gap minus its tool call. */
export function turnGaps(trace: TraceLine[]): { whole: number[]; runtime: number[] } {
  const inf = trace.filter((l) => l.event_type === "inference");
  const tool = new Map<number, number>();
  for (const l of trace) {
    if (l.event_type === "tool_call" && typeof l.turn === "number") {
      tool.set(l.turn, (tool.get(l.turn) ?? 0) + (l.duration_ms ?? 0));
    }
  }
  const whole: number[] = [];
  const runtime: number[] = [];
  for (let i = 0; i + 1 < inf.length; i++) {
    const gap = inf[i + 1].timestamp - inf[i].timestamp;
    whole.push(gap);
    runtime.push(gap - (tool.get(inf[i].turn ?? -1) ?? 0));
  }
  return { whole, runtime };
}

/**
 * The first or last tenth of `xs`, as a mean trimmed of its highest and lowest tenth: trace
 * times are whole milliseconds, so a median of ~1 ms gaps can only read 1 or 2, while the
 * differences of truncated clock readings average out to the true gap.
 */
export function tenth(xs: number[], last: boolean): number {
  const k = Math.max(1, Math.floor(xs.length / 10));
  const part = (last ? xs.slice(-k) : xs.slice(0, k)).sort((a, b) => a - b);
  const cut = Math.floor(part.length / 10);
  const kept = part.slice(cut, part.length - cut);
  return kept.reduce((a, b) => a + b, 0) / kept.length;
}

/** Turns further than this from their tenth's median are stalls, not rounding (see below). */
export const STALL_MS = 4;

/**
 * Mur's own part of a turn (the gap minus its tool call) over the first or last tenth, finer than
 * the trace's whole milliseconds. Each turn's figure is a difference of whole-millisecond clock
 * readings (two timestamps, and the tool's two readings behind its duration_ms), so it is off from
 * the true time by less than 2 ms either way, by as much up as down over many turns (where in a
 * millisecond a reading falls has nothing to do with the work): the plain mean of ≥ 100 turns is
 * within a few hundredths of a millisecond of the truth, where a median can only read 0 or 1.
 * A trimmed mean would not do: cutting a tenth off each end of a few integer values cuts
 * unequal amounts of each, which biases it. What rounding cannot explain — a turn more than
 * STALL_MS from the tenth's median (the shared machine's other load, a long GC pause) — is left
 * out of the mean and counted, with its time, so it is reported rather than hidden.
 */
export function runtimeTenth(
  xs: number[],
  last: boolean,
): { ms: number; turns: number; stalls: number; stallMs: number } {
  const k = Math.max(1, Math.floor(xs.length / 10));
  const part = last ? xs.slice(-k) : xs.slice(0, k);
  const mid = median(part);
  const kept = part.filter((x) => Math.abs(x - mid) <= STALL_MS);
  const out = part.filter((x) => Math.abs(x - mid) > STALL_MS);
  return {
    ms: kept.reduce((a, b) => a + b, 0) / kept.length,
    turns: part.length,
    stalls: out.length,
    stallMs: out.reduce((a, b) => a + b, 0),
  };
}

/**
 * The live heap's growth per turn, KiB, from the major collections after the first tenth (the
 * session's start has settled by then): the change in what each left, first to last, over the
 * turns between them. NaN with fewer than two such collections.
 */
export function heapPerTurn(
  gcs: SessionRun["gcs"],
  inferenceTimes: number[],
): { kib: number; collections: number; fromMiB: number; toMiB: number; turns: number } {
  const turnAt = (t: number) => {
    let lo = 0;
    let hi = inferenceTimes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (inferenceTimes[mid] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const tenth = Math.floor(inferenceTimes.length / 10);
  const after = gcs.map((g) => ({ ...g, turn: turnAt(g.at) })).filter((g) =>
    g.turn > tenth && g.turn < inferenceTimes.length
  );
  if (after.length < 2) {
    return { kib: NaN, collections: after.length, fromMiB: NaN, toMiB: NaN, turns: 0 };
  }
  const [a, b] = [after[0], after[after.length - 1]];
  const turns = b.turn - a.turn;
  return {
    kib: turns > 0 ? (b.liveMiB - a.liveMiB) * 1024 / turns : NaN,
    collections: after.length,
    fromMiB: a.liveMiB,
    toMiB: b.liveMiB,
    turns,
  };
}

export async function turnOverhead(ctx: ScaleCtx, dir: string): Promise<void> {
  const n = ctx.turns;
  const label = (what: string) =>
    `turn overhead, ${
      n.toLocaleString("en")
    } turns × 8 KiB tool output: ms per turn ${what}, last tenth`;
  ctx.log(`scale: ${n} scripted turns`);
  // The machine's own drift: the same command spawned from this (small) process every 200 ms
  // while the session runs, so the first and the last tenth each have a reference taken in the
  // same seconds (a shared machine's load changes over a run).
  const probes: { at: number; ms: number }[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const at = Date.now();
      probes.push({ at, ms: await rawSpawnMs(["bash", "-c", BASH_8K], 1) });
      await sleep(200);
    }
  })();
  let run: SessionRun;
  try {
    run = await runToEnd(dir, "turns", turnsCapsule(n), Math.max(120_000, n * 200), true);
  } catch (e) {
    for (const w of ["with the tool's process start", "runtime only"]) {
      ctx.scale.missing(label(w), (e as Error).message);
    }
    return;
  } finally {
    probing = false;
    await prober;
  }
  const { whole, runtime } = turnGaps(run.trace);
  if (whole.length < 10) {
    ctx.scale.missing(label("(any)"), `only ${whole.length} turns in the trace`);
    return;
  }
  const tools = run.trace.filter((l) => l.event_type === "tool_call").map((l) =>
    l.duration_ms ?? 0
  );
  ctx.scale.add({
    label: label("with the tool's process start"),
    mur: tenth(whole, true),
    base: tenth(whole, false),
    baseLabel: "first tenth",
    unit: "ms",
    digits: 1,
    target: 1.3,
  });
  const [rt0, rt1] = [runtimeTenth(runtime, false), runtimeTenth(runtime, true)];
  ctx.scale.add({
    label: label("runtime only (without the tool call's own time; mean, stalls apart)"),
    mur: rt1.ms,
    base: rt0.ms,
    baseLabel: "first tenth",
    unit: "ms",
    digits: 2,
    target: 1.3,
  });
  const stalls = (r: typeof rt0) =>
    r.stalls === 0
      ? "none"
      : `${r.stalls} turn${r.stalls === 1 ? "" : "s"}, ${r.stallMs.toFixed(0)} ms together`;
  ctx.scale.facts.push(
    `Turn overhead, runtime only: the mean of each tenth's ${rt0.turns.toLocaleString("en")} ` +
      `turns, gap minus tool call, whole-millisecond readings averaged (scripts/bench/` +
      `round_scale.ts \`runtimeTenth\`); turns more than ${STALL_MS} ms from their tenth's ` +
      `median are stalls, left out and counted: first tenth ${stalls(rt0)}, last tenth ${
        stalls(rt1)
      }.`,
  );
  ctx.scale.add({
    label: "turn overhead: the tool call itself (spawn to result), last tenth",
    mur: tenth(tools, true),
    base: await rawSpawnMs(["bash", "-c", BASH_8K], 50),
    baseLabel: "the same `bash -c` spawned by Deno.Command from a small process",
    unit: "ms",
    digits: 1,
  });
  const inf = run.trace.filter((l) => l.event_type === "inference").map((l) => l.timestamp);
  const k = Math.max(1, Math.floor((inf.length - 1) / 10));
  const within = (from: number, to: number) =>
    median(probes.filter((p) => p.at >= from && p.at <= to).map((p) => p.ms));
  const early = within(inf[0], inf[k]);
  const late = within(inf[inf.length - 1 - k], inf[inf.length - 1]);
  ctx.scale.add({
    label:
      "turn overhead: the machine's drift — the same `bash -c` spawned from the bench process every 200 ms during the last tenth",
    mur: late,
    base: early,
    baseLabel: "during the first tenth",
    unit: "ms",
    digits: 1,
  });
  const [w0, w1] = [tenth(whole, false), tenth(whole, true)];
  const [t0, t1] = [tenth(tools, false), tenth(tools, true)];
  const [r0, r1] = [rt0.ms, rt1.ms];
  if (w1 / w0 > 1.3) {
    ctx.scale.facts.push(
      `What stands in the way of a flat turn: the turn went from ${w0.toFixed(1)} to ${
        w1.toFixed(1)
      } ms; the tool call (spawn to result) from ${t0.toFixed(1)} to ${
        t1.toFixed(1)
      } ms, mur's own part from ${r0.toFixed(2)} to ${r1.toFixed(2)} ms, and the same command ` +
        `spawned from the bench process in the same seconds from ${early.toFixed(1)} to ${
          late.toFixed(1)
        } ms (${(late / early).toFixed(2)}×: the shared machine's load). mur spawns tools, hooks ` +
        `and checks with posix_spawn through setsid(1) (src/tools/group_leader.ts): Deno's ` +
        `\`detached\` spawn forks, and a fork costs more the larger the heap (4.7 ms at 40 MiB ` +
        `RSS, 8.4 ms at 350 MiB, against 0.5 and 0.7 ms with posix_spawn).`,
    );
  }
  memoryRows(ctx, run, n, inf);
}

/** The turn session's memory: the live heap per turn against the conversation's, and RSS. */
function memoryRows(ctx: ScaleCtx, run: SessionRun, n: number, inf: number[]): void {
  const label = `memory: V8's live heap after major collections, KiB per turn over the ${
    n.toLocaleString("en")
  } turns`;
  const perTurn = run.conversationBytes / 1024 / n;
  const heap = heapPerTurn(run.gcs, inf);
  if (Number.isFinite(heap.kib)) {
    ctx.scale.add({
      label,
      mur: heap.kib,
      base: perTurn,
      baseLabel: "the conversation record's bytes per turn (the history every model call carries)",
      unit: "KiB",
      digits: 1,
    });
  } else {
    ctx.scale.missing(
      label,
      `${heap.collections} major collection(s) after the first tenth (two are needed)`,
    );
  }
  if (run.rss.length < 2) return;
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  const [first, last] = [run.rss[0], run.rss[run.rss.length - 1]];
  const peak = Math.max(...run.rss);
  ctx.scale.facts.push(
    `Turn memory: mur's RSS went from ${mib(first)} MiB to ${mib(last)} MiB over the ${
      n.toLocaleString("en")
    } turns (peak ${mib(peak)} MiB; ${
      ((last - first) / 1024 / n).toFixed(1)
    } KiB per turn; the first sample already holds the heap V8 grew to while the scripted ` +
      `driver read the ${n.toLocaleString("en")}-turn script with the yaml package). RSS is ` +
      `what V8 holds between major collections, not what is live` +
      (Number.isFinite(heap.kib)
        ? `: over the turns after the first tenth, the ${heap.collections} major collections ` +
          `left ${heap.fromMiB.toFixed(1)} → ${heap.toMiB.toFixed(1)} MiB live (${
            heap.kib.toFixed(1)
          } KiB per turn)`
        : "") +
      `; the conversation, which the session keeps whole for the next model call until a ` +
      `compaction hook replaces it, grew ${perTurn.toFixed(1)} KiB per turn. What else a turn ` +
      `leaves is bounded: the replay ring holds the last 512 events (src/events/log.ts ` +
      `REPLAY_CAPACITY), each turn's ~8 KiB tool-output artifact among them, so it is full ` +
      `after at most 512 turns and weighs a few MiB from then on.`,
  );
}

/** Median ms to spawn `cmd` with a JSON object on stdin and read its stdout, from this process. */
async function rawSpawnMs(cmd: string[], times: number): Promise<number> {
  const t: number[] = [];
  const input = new TextEncoder().encode('{"event":"on-shell"}\n');
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const c = new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const w = c.stdin.getWriter();
    // A command that does not read its stdin may close it first (EPIPE): as for mur's hooks.
    await w.write(input).then(() => w.close()).catch(() => {});
    await c.output();
    t.push(performance.now() - t0);
  }
  return median(t);
}

async function hooks(ctx: ScaleCtx, dir: string): Promise<void> {
  const n = ctx.hookTurns;
  const HOOKS = 50;
  const label =
    `${HOOKS} command hooks on \`on-shell\`: ms per hook run (a shell call runs each twice)`;
  ctx.log(`scale: ${n} turns with 0 and with ${HOOKS} hooks`);
  try {
    const bare = await runToEnd(dir, "hooks0", turnsCapsule(n), 120_000);
    const hooked = await runToEnd(
      dir,
      "hooks50",
      turnsCapsule(n, HOOKS),
      Math.max(120_000, n * HOOKS * 2 * 100),
    );
    // Turn 0 pays for compiling the path; the median of the rest is the steady cost.
    const per = (r: SessionRun) => median(turnGaps(r.trace).whole.slice(1));
    const perHook = (per(hooked) - per(bare)) / (2 * HOOKS);
    const raw = await rawSpawnMs(HOOK_CMD, 50);
    ctx.scale.add({
      label,
      mur: perHook,
      base: raw,
      baseLabel: "`echo {}` spawned by Deno.Command",
      unit: "ms",
      digits: 2,
    });
    ctx.scale.facts.push(
      `Hooks: a turn (one bash call) took ${per(bare).toFixed(1)} ms with no hook and ${
        per(hooked).toFixed(1)
      } ms with ${HOOKS} \`on-shell\` hooks (${2 * HOOKS} hook runs).`,
    );
  } catch (e) {
    ctx.scale.missing(label, (e as Error).message);
  }
}

async function queued(ctx: ScaleCtx, dir: string): Promise<void> {
  const q = ctx.queued;
  const qLabel = `${q} queued tasks through one capsule: ms per task, last tenth`;
  ctx.log(`scale: ${q} queued tasks`);
  const path = await writeScaleCapsule(dir, "queue", queueCapsule(q));
  let s;
  try {
    s = await spawnReady({
      name: "mur run (queue)",
      cmd: murCmd(path, `${dir}/queue/wd`, []),
      env: { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" },
      core: 0,
      readyTimeoutMs: 30_000,
    });
  } catch (e) {
    ctx.scale.missing(qLabel, (e as Error).message);
    return;
  }
  try {
    const url = `http://${s.ready.url}/`;
    const send = async (text: string, i: number) => {
      const r = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: i,
          method: "SendMessage",
          params: {
            message: { messageId: `q-${i}`, role: "ROLE_USER", parts: [{ text }] },
            configuration: { returnImmediately: true },
          },
        }),
      });
      const body = await r.text();
      if (!body.includes('"result"')) throw new Error(`task ${i} refused: ${body.slice(0, 200)}`);
    };
    await send("gate", 0);
    for (let i = 1; i <= q; i++) await send(`task ${i}`, i);
    const sessionDir = String(s.ready.session_dir);
    let ends: number[] = [];
    for (let i = 0; i < 600; i++) {
      const trace = await readTrace(sessionDir).catch(() => [] as TraceLine[]);
      ends = trace.filter((l) => l.event_type === "task_end").map((l) => l.timestamp);
      if (ends.length >= q + 1) break;
      await sleep(100);
    }
    if (ends.length < q + 1) throw new Error(`only ${ends.length} of ${q + 1} tasks ended in 60 s`);
    // After the gate: each task's time is the gap from the previous task's end to its own.
    const gaps = ends.slice(1).map((t, i) => t - ends[i]);
    ctx.scale.add({
      label: qLabel,
      mur: tenth(gaps, true),
      base: tenth(gaps, false),
      baseLabel: "first tenth",
      unit: "ms",
      digits: 1,
      target: 1.3,
    });
  } catch (e) {
    ctx.scale.missing(qLabel, (e as Error).message);
  } finally {
    kill(s.pid);
  }
}

/** Spawn (on core 0 when pinning) → exit, ms; throws when it fails. */
async function timeToExit(
  cmd: string[],
  env?: Record<string, string>,
  ok: readonly number[] = [0],
): Promise<number> {
  const argv = canPin() ? ["taskset", "-c", "0", ...cmd] : cmd;
  const t0 = performance.now();
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (!ok.includes(out.code)) {
    throw new Error(
      `${cmd.slice(3).join(" ")}: exit ${out.code}: ${
        new TextDecoder().decode(out.stderr).slice(0, 200)
      }`,
    );
  }
  return ms;
}

/**
 * The commands whose start is a row, each against `deno run` of an empty file: what it runs after
 * `mur` and what it needs (`url`, `sessionDir`: the try's capsule's), and whether it is timed to its
 * exit or to its first line on stdout (`mur watch --json`: its first event). A new command's start
 * is one entry here. (`mur stop` and `cancel` load what `ps` does; timed to their exit, they would
 * count the capsule's own end.)
 */
const COMMAND_STARTS: {
  key: string;
  label: string;
  args: (c: { url: string; sessionDir: string }) => string[];
  to: "exit" | "first line";
  /** Exit codes that count as a run (default 0). */
  ok?: readonly number[];
}[] = [
  { key: "ps", label: "`mur ps`, spawn → exit", args: () => ["ps"], to: "exit" },
  {
    key: "watch",
    label: "`mur watch --url … --json`, spawn → first event on stdout",
    args: (c) => ["watch", "--url", c.url, "--json"],
    to: "first line",
  },
  {
    key: "trace",
    label: "`mur trace show <session dir>`, spawn → exit",
    args: (c) => ["trace", "show", c.sessionDir],
    to: "exit",
  },
  {
    key: "send",
    label: "`mur send --url … TEXT`, spawn → exit (the task taken)",
    args: (c) => ["send", "--url", c.url, "cold start"],
    to: "exit",
  },
  {
    key: "approve",
    label: "`mur approve --url … TASK`, spawn → exit (refused: nothing waits for approval)",
    args: (c) => ["approve", "--url", c.url, `tsk_${"0".repeat(32)}`],
    to: "exit",
    ok: [1],
  },
  // The floor of every command: main.js and its usage text (`--version` would time `git rev-parse` too).
  { key: "help", label: "`mur --help`, spawn → exit", args: () => ["--help"], to: "exit" },
];

/** Tries of each start, alternated with its baseline (`START_TRIES` in the environment). */
const START_TRIES = Number(Deno.env.get("START_TRIES") ?? 7);

/**
 * Cold start, each against its baseline in alternation (START_TRIES of each, medians): `mur run`
 * of a scripted capsule to its readiness line against the raw Deno.serve server's, from the bundle
 * (the installed `mur`) and from source; every other command (COMMAND_STARTS) against `deno run`
 * of an empty file.
 */
export async function coldStart(ctx: ScaleCtx, dir: string): Promise<void> {
  ctx.log("scale: cold start");
  const path = await writeScaleCapsule(dir, "cold", queueCapsule(1));
  const empty = `${dir}/empty.ts`;
  await Deno.writeTextFile(empty, "");
  const env = { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" };
  const t: Record<string, number[]> = { raw: [], run: [], source: [], empty: [] };
  for (const c of COMMAND_STARTS) t[c.key] = [];
  const runLabel = "cold start: `mur run` of a scripted capsule, spawn → readiness line";
  const loads: number[] = [];
  try {
    for (let i = 0; i < START_TRIES; i++) {
      loads.push(Deno.loadavg()[0]);
      const raw = await spawnReady({
        name: "raw (cold)",
        cmd: [Deno.execPath(), "run", "-A", RAW, "0", "0"],
        core: 0,
        readyTimeoutMs: 30_000,
      });
      t.raw.push(raw.startMs);
      kill(raw.pid);
      const mur = await spawnReady({
        name: "mur run (cold)",
        cmd: murCmd(path, `${dir}/cold/wd-${i}`, []),
        env,
        core: 0,
        readyTimeoutMs: 30_000,
      });
      try {
        t.run.push(mur.startMs);
        const src = await spawnReady({
          name: "mur run from source (cold)",
          cmd: murCmd(path, `${dir}/cold/wd-src-${i}`, [], [], SOURCE_MAIN),
          env,
          core: 0,
          readyTimeoutMs: 30_000,
        });
        t.source.push(src.startMs);
        kill(src.pid);
        const at = {
          url: String(mur.ready.url),
          sessionDir: String(mur.ready.session_dir),
        };
        for (const c of COMMAND_STARTS) {
          t.empty.push(await timeToExit([Deno.execPath(), "run", "-A", empty]));
          const cmd = [Deno.execPath(), "run", "-A", ...entryArgs(MAIN), ...c.args(at)];
          if (c.to === "exit") t[c.key].push(await timeToExit(cmd, env, c.ok));
          else {
            const w = await spawnReady({
              name: `mur ${c.key} (cold)`,
              cmd,
              env,
              core: 0,
              readyTimeoutMs: 30_000,
            });
            t[c.key].push(w.startMs);
            kill(w.pid);
          }
        }
      } finally {
        kill(mur.pid);
      }
    }
  } catch (e) {
    for (const l of [runLabel, ...COMMAND_STARTS.map((c) => `cold start: ${c.label}`)]) {
      ctx.scale.missing(l, (e as Error).message);
    }
    return;
  }
  ctx.scale.facts.push(
    `Cold start: ${START_TRIES} tries of each, every start alternated with its baseline; the load average (1 min) read ${
      Math.min(...loads).toFixed(1)
    }–${Math.max(...loads).toFixed(1)} over them.`,
  );
  ctx.scale.sections.push(await startProfiles(ctx, dir, path, env));
  ctx.scale.add({
    label: runLabel,
    mur: median(t.run),
    base: median(t.raw),
    baseLabel: "raw Deno.serve, spawn → readiness line",
    unit: "ms",
    digits: 0,
    target: 2,
  });
  // No target: `deno task mur` is the developer's entry; the installed `mur` runs the bundle.
  ctx.scale.add({
    label: "cold start: `mur run` from source (`deno task mur`: main.ts, no bundle)",
    mur: median(t.source),
    base: median(t.raw),
    baseLabel: "raw Deno.serve, spawn → readiness line",
    unit: "ms",
    digits: 0,
  });
  for (const c of COMMAND_STARTS) {
    ctx.scale.add({
      label: `cold start: ${c.label}`,
      mur: median(t[c.key]),
      base: median(t.empty),
      baseLabel: "`deno run` of an empty file, spawn → exit",
      unit: "ms",
      digits: 0,
      target: 1.3,
    });
  }
}

export async function roundScale(ctx: ScaleCtx, dir: string): Promise<void> {
  await Deno.mkdir(`${dir}/home`, { recursive: true });
  await coldStart(ctx, dir);
  await turnOverhead(ctx, dir);
  await hooks(ctx, dir);
  await queued(ctx, dir);
  await idleMemory(ctx, dir);
  await idleMemoryAsIs(ctx, dir);
  await compiledBinary(ctx, dir);
  await crewCall(ctx, dir, ctx.queued);
}

/** The parts of this round, each also run alone: `deno run -A scripts/bench/round_scale.ts --only start`. */
const PARTS: Record<string, (ctx: ScaleCtx, dir: string) => Promise<void>> = {
  start: coldStart,
  turns: turnOverhead,
  hooks,
  queue: queued,
  memory: async (ctx, dir) => {
    await idleMemory(ctx, dir);
    await idleMemoryAsIs(ctx, dir);
  },
  compiled: compiledBinary,
  crew: (ctx, dir) => crewCall(ctx, dir, ctx.queued),
};

if (import.meta.main) {
  const { Scale, scaleTable } = await import("./scale.ts");
  const scale = new Scale();
  const dir = await Deno.makeTempDir({ prefix: "mur-scale-" });
  const only = Deno.args.indexOf("--only");
  const part = only === -1 ? undefined : Deno.args[only + 1];
  if (part !== undefined && !(part in PARTS)) {
    console.error(`--only takes one of ${Object.keys(PARTS).join(", ")}`);
    Deno.exit(2);
  }
  const n = Number(
    Deno.args.find((a, i) => /^\d+$/.test(a) && Deno.args[i - 1] !== "--only") ?? 200,
  );
  const ctx = { scale, log: console.error, turns: n, hookTurns: 5, queued: 30 };
  try {
    await Deno.mkdir(`${dir}/home`, { recursive: true });
    if (part) await PARTS[part](ctx, dir);
    else await roundScale(ctx, dir);
  } finally {
    killAll();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  console.log(scaleTable(scale));
  console.log(scale.facts.join("\n"));
}
