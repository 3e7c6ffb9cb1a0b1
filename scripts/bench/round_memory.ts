/**
 * What idle sessions cost in memory, against bare `Deno.serve` processes measured the same way in
 * the same run (scripts/bench/raw_server.ts, nothing pre-built). Every process is started with its
 * inspector, and every reading follows a full garbage collection through it (inspector.ts).
 *
 *   one idle capsule   RSS of a queued, sleeping scripted capsule after its readiness line and a
 *                      full GC, against one bare process's; the two take turns, median of TRIES.
 *   ten idle capsules  the ten's total while all ten run, against ten bare processes' total.
 *                      A total is the sum of each process's PSS (/proc/<pid>/smaps_rollup: its
 *                      private pages plus its share of the pages it shares, as the runtime
 *                      binary's code): the memory the ten take together, which RSS would count
 *                      ten times over for the shared pages.
 *   a formation        a lead and four members, the lead's callees, each a `mur run` as a
 *                      roster's member runs (MURMUR_CREW_CALLEES / MURMUR_CREW_FILE; the
 *                      launcher of `mur run --roster`, one more process, is not counted), total
 *                      PSS against five bare processes'.
 *   in 4 GiB           4 GiB over a capsule's share of the ten's total, against the same for bare
 *                      processes.
 *
 * Beside them, where the difference comes from: a bare process that imported zod alone, and one
 * that imported every module `mur run` loads at start without running any (bare_import.ts); and
 * what the idle capsule's JS heap holds: the sources of its modules, as V8 keeps them
 * (Debugger.scriptParsed lengths).
 */
import { INSPECT_FLAG, type Inspector, inspectorOf } from "./inspector.ts";
import { kill, MAIN, murCmd, rssBytes, type Spawned, spawnReady } from "./procs.ts";
import { median } from "./stats.ts";
import { queueCapsule, type ScaleCtx, writeScaleCapsule } from "./round_scale.ts";

const RAW = new URL("./raw_server.ts", import.meta.url).pathname;
const BARE_IMPORT = new URL("./bare_import.ts", import.meta.url).pathname;
/** What `mur run` loads at start, as the bench runs it: the bundle's run module (procs.ts MAIN). */
const RUN_GRAPH = new URL("src/cli/run.js", new URL(".", `file://${MAIN}`)).href;
/** The vendored zod by its file, so the process needs no config file either. */
const ZOD = new URL("../../vendor/zod/zod.js", import.meta.url).href;
const TRIES = 3;
const MiB = 2 ** 20;

/** Proportional set size of a pid in bytes (Linux smaps_rollup), or NaN. */
export function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface Idle {
  s: Spawned;
  gc: Inspector;
}

async function startBare(): Promise<Idle> {
  const s = await spawnReady({
    name: "raw (idle)",
    cmd: [Deno.execPath(), "run", "-A", INSPECT_FLAG, RAW, "0", "0"],
    core: 0,
    readyTimeoutMs: 30_000,
  });
  return { s, gc: await inspectorOf(s) };
}

/** A bare process as a user runs one: no inspector, so nothing collects it from outside. */
async function startBareAsIs(): Promise<Spawned> {
  return await spawnReady({
    name: "raw (idle, as is)",
    cmd: [Deno.execPath(), "run", "-A", RAW, "0", "0"],
    readyTimeoutMs: 60_000,
  });
}

/** A bare process that imported `spec` first (bare_import.ts). */
async function startImporting(spec: string): Promise<Idle> {
  const s = await spawnReady({
    name: `bare + ${spec}`,
    cmd: [Deno.execPath(), "run", "-A", "--no-config", INSPECT_FLAG, BARE_IMPORT, spec],
    core: 0,
    readyTimeoutMs: 30_000,
  });
  return { s, gc: await inspectorOf(s) };
}

/** An idle capsule as the installed `mur` runs one (procs.ts murCmd): no inspector. */
async function startCapsuleAsIs(
  manifest: string,
  workdir: string,
  env: Record<string, string>,
): Promise<Spawned> {
  return await spawnReady({
    name: "mur run (idle, as is)",
    cmd: murCmd(manifest, workdir, []),
    env,
    readyTimeoutMs: 60_000,
  });
}

async function startCapsule(
  manifest: string,
  workdir: string,
  env: Record<string, string>,
): Promise<Idle> {
  const s = await spawnReady({
    name: "mur run (idle)",
    cmd: murCmd(manifest, workdir, [], [INSPECT_FLAG]),
    env,
    core: 0,
    readyTimeoutMs: 30_000,
  });
  return { s, gc: await inspectorOf(s) };
}

/** Every process collected (twice: a first pass can leave what finalizers free), then read. */
async function settle(ps: Idle[]): Promise<{ rss: number[]; pss: number[]; heap: number[] }> {
  await new Promise((r) => setTimeout(r, 300));
  const heap: number[] = [];
  for (const p of ps) {
    await p.gc.collect();
    heap.push(await p.gc.collect());
  }
  return { rss: ps.map((p) => rssBytes(p.s.pid)), pss: ps.map((p) => pssBytes(p.s.pid)), heap };
}

function stop(ps: Idle[]): void {
  for (const p of ps) {
    p.gc.close();
    kill(p.s.pid);
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** How long after the last readiness line processes run untouched before they are read. */
export const AS_IS_WAIT_MS = 8_000;

/**
 * Several processes started one after another (`start(i)`, handed those already running), left
 * alone until AS_IS_WAIT_MS after the last one's readiness line (so every one has idled at least
 * that long), then read as they are: what a user's `ps` sees. Every one is killed after.
 */
async function groupAsIs(
  n: number,
  start: (i: number, running: Spawned[]) => Promise<Spawned>,
): Promise<{ rss: number[]; pss: number[]; anon: number[] }> {
  const ps: Spawned[] = [];
  try {
    for (let i = 0; i < n; i++) ps.push(await start(i, ps));
    await new Promise((r) => setTimeout(r, AS_IS_WAIT_MS));
    return {
      rss: ps.map((p) => rssBytes(p.pid)),
      pss: ps.map((p) => pssBytes(p.pid)),
      anon: ps.map((p) => anonBytes(p.pid)),
    };
  } finally {
    for (const p of ps) kill(p.pid);
  }
}

/** Anonymous resident memory of a pid in bytes (Linux /proc status RssAnon), or NaN. */
function anonBytes(pid: number): number {
  try {
    const m = /^RssAnon:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Several processes started one after another, then read together; all killed after. */
async function group(n: number, start: (i: number) => Promise<Idle>) {
  const ps: Idle[] = [];
  try {
    for (let i = 0; i < n; i++) ps.push(await start(i));
    return await settle(ps);
  } finally {
    stop(ps);
  }
}

/** The sources V8 holds for an idle capsule, by who wrote them. */
async function sourcesFact(p: Idle): Promise<string> {
  const scripts = await p.gc.scripts();
  let own = 0, npm = 0, rest = 0, n = 0;
  for (const s of scripts) {
    n++;
    if (/\/npm\//.test(s.url)) npm += s.length;
    else if (s.url.startsWith("file://")) own += s.length;
    else rest += s.length;
  }
  const k = (c: number) => `${Math.round(c / 1024).toLocaleString("en")}K characters`;
  return `${n} scripts: the bundle's files (the vendored zod and yaml among them) ${
    k(own)
  }, npm packages ${k(npm)}, the runtime's ${
    k(rest)
  }. V8 keeps each module's source as it was handed over: the bundle's files are JavaScript with no source map, and one with any character outside Latin-1 (a message's dash or arrow) is stored two bytes per character`;
}

export async function idleMemory(ctx: ScaleCtx, dir: string): Promise<void> {
  const labels = {
    one: "memory of one idle capsule: RSS after a full GC",
    ten: "memory of ten idle capsules, all running: total PSS after a full GC",
    formation: "memory of a formation (a lead + four members), idle: total PSS after a full GC",
    fit: "idle capsules in 4 GiB (from the ten's total)",
  };
  ctx.log("scale: idle memory (one capsule, ten, a formation) against bare Deno.serve processes");
  const env = { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" };
  const manifest = await writeScaleCapsule(dir, "idle", queueCapsule(1));
  let tag = 0;
  const capsule = (extra: Record<string, string> = {}) => () =>
    startCapsule(manifest, `${dir}/idle/wd-${++tag}`, { ...env, ...extra });
  try {
    const one = { mur: [] as number[], bare: [] as number[], murHeap: [] as number[] };
    const bareHeap: number[] = [];
    let sources = "";
    for (let i = 0; i < TRIES; i++) {
      const b = await group(1, startBare);
      one.bare.push(b.rss[0]);
      bareHeap.push(b.heap[0]);
      const ps: Idle[] = [];
      try {
        ps.push(await capsule()());
        const m = await settle(ps);
        one.mur.push(m.rss[0]);
        one.murHeap.push(m.heap[0]);
        if (i === 0) sources = await sourcesFact(ps[0]);
      } finally {
        stop(ps);
      }
    }
    ctx.scale.add({
      label: labels.one,
      mur: median(one.mur) / MiB,
      base: median(one.bare) / MiB,
      baseLabel: "a bare Deno.serve process, the same way",
      unit: "MiB",
      digits: 1,
      target: 1.5,
    });
    // Where the difference comes from: the same bare process after importing zod alone, and
    // after importing every module `mur run` loads at start (the bundle's run module, nothing run).
    const zod = await group(1, () => startImporting(ZOD));
    const graph = await group(1, () => startImporting(RUN_GRAPH));
    const mib = (b: number) => `${(b / MiB).toFixed(1)} MiB`;
    const bare = median(one.bare);
    ctx.scale.facts.push(
      `Idle memory, where it goes (RSS after a full GC, the same way): a bare process ${
        mib(bare)
      }; the same importing the vendored zod alone (vendor/zod/) ${mib(zod.rss[0])} (+${
        mib(zod.rss[0] - bare)
      }, its JS heap ${
        mib(zod.heap[0])
      }); importing every module \`mur run\` loads at start, nothing run (the bundle's src/cli/run.js and the chunks it imports, the vendored zod and yaml among them) ${
        mib(graph.rss[0])
      } (+${mib(graph.rss[0] - bare)}, heap ${mib(graph.heap[0])}); the idle capsule itself ${
        mib(median(one.mur))
      } (its running session, door and state +${mib(median(one.mur) - graph.rss[0])}).`,
    );
    ctx.scale.facts.push(
      'Idle memory and start: kept, each measured (docs/benchmarks.md "Cost per session"): ' +
        "mur runs as a bundle (scripts/bundle.ts: no TypeScript emit, no inline source maps; " +
        "the modules loaded on first use are chunks of it), run with no config file; the " +
        "vendored zod holds only the parts of `z` mur uses; an idle capsule collects once after " +
        "5 s with nothing to do (src/session/idle_collect.ts, the reason the rows without a forced " +
        "GC read close to these). Tried and not kept: the compiler options that " +
        "would drop the source maps from source (Deno 2 ignores them), V8 flags " +
        "(`--lite-mode`, a smaller young generation, no code cache), the vendored packages " +
        "minified, zod's compiled fast path turned off for the manifest, and the bundle's " +
        "characters outside Latin-1 written as escapes (−0.8 MiB, start unchanged).",
    );
    ctx.scale.facts.push(
      `Idle memory: of one idle capsule's ${
        (median(one.mur) / MiB).toFixed(1)
      } MiB RSS, V8's heap ` +
        `after the collection held ${
          (median(one.murHeap) / MiB).toFixed(1)
        } MiB (a bare process's ${
          (median(bareHeap) / MiB).toFixed(1)
        } MiB); the rest is the runtime's own (its binary's pages, the allocator's). Its heap ` +
        `holds the source of every module loaded: ${sources}.`,
    );

    const tenBare = await group(10, startBare);
    const ten = await group(10, capsule());
    ctx.scale.add({
      label: labels.ten,
      mur: sum(ten.pss) / MiB,
      base: sum(tenBare.pss) / MiB,
      baseLabel: "ten bare Deno.serve processes, the same way",
      unit: "MiB",
      digits: 1,
    });
    const per = sum(ten.pss) / 10, perBare = sum(tenBare.pss) / 10;
    ctx.scale.add({
      label: labels.fit,
      mur: (4 * 1024 * MiB) / per,
      base: (4 * 1024 * MiB) / perBare,
      baseLabel: "bare Deno.serve processes",
      unit: "",
      digits: 0,
    });

    const fiveBare = await group(5, startBare);
    const crewFile = `${dir}/idle-crew.json`;
    const members: { name: string; url: string; token: string }[] = [];
    const formation = await group(5, async (i) => {
      if (i < 4) {
        const p = await capsule()();
        members.push({
          name: `m${i + 1}`,
          url: `http://${String(p.s.ready.url).replace("localhost", "127.0.0.1")}`,
          token: "",
        });
        return p;
      }
      await Deno.writeTextFile(crewFile, JSON.stringify({ formation_id: "idle", members }));
      return await capsule({
        MURMUR_CREW_CALLEES: members.map((m) => m.name).join(","),
        MURMUR_CREW_FILE: crewFile,
      })();
    });
    ctx.scale.add({
      label: labels.formation,
      mur: sum(formation.pss) / MiB,
      base: sum(fiveBare.pss) / MiB,
      baseLabel: "five bare Deno.serve processes, the same way",
      unit: "MiB",
      digits: 1,
    });
  } catch (e) {
    for (const l of Object.values(labels)) {
      if (!ctx.scale.rows.some((r) => r.label === l)) ctx.scale.missing(l, (e as Error).message);
    }
  }
}

/**
 * Idle memory as a user's `ps` sees it: nothing collected from outside, every process read at
 * least AS_IS_WAIT_MS after its readiness line (an idle capsule collects once by itself after 5 s
 * with nothing to do: src/session/idle_collect.ts). Ten capsules and a hundred, each against as
 * many bare processes, and a crew of ten (a lead and nine members).
 */
export async function idleMemoryAsIs(ctx: ScaleCtx, dir: string): Promise<void> {
  const secs = AS_IS_WAIT_MS / 1000;
  const labels = {
    ten: `memory of ten idle capsules, ${secs} s or more after readiness, no forced GC: PSS each`,
    hundred:
      `memory of 100 idle capsules, ${secs} s or more after readiness, no forced GC: PSS each`,
    fit: "idle capsules in 16 GiB (from the 100's PSS, no forced GC)",
    crew:
      `memory of a crew of ten (a lead + nine members), idle ${secs} s or more, no forced GC: total PSS`,
  };
  ctx.log(`scale: idle memory as is (10, 100, a crew of ten; ${secs} s after readiness, no GC)`);
  const env = { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" };
  const manifest = await writeScaleCapsule(dir, "idle-as-is", queueCapsule(1));
  let tag = 0;
  const capsule = (extra: Record<string, string> = {}) =>
    startCapsuleAsIs(manifest, `${dir}/idle-as-is/wd-${++tag}`, { ...env, ...extra });
  const each = (xs: number[]) => sum(xs) / xs.length / MiB;
  const mib = (x: number) => `${x.toFixed(1)} MiB`;
  try {
    for (const [n, label] of [[10, labels.ten], [100, labels.hundred]] as const) {
      const bare = await groupAsIs(n, () => startBareAsIs());
      const mur = await groupAsIs(n, () => capsule());
      ctx.scale.add({
        label,
        mur: each(mur.pss),
        base: each(bare.pss),
        baseLabel: `${n} bare Deno.serve processes, the same way`,
        unit: "MiB",
        digits: 1,
        limit: n === 100 ? 16 : undefined,
      });
      ctx.scale.facts.push(
        `Idle memory as is, ${n} at once (${secs} s or more after readiness, no forced GC), each: ` +
          `PSS ${mib(each(mur.pss))} against a bare process's ${mib(each(bare.pss))}; RSS ${
            mib(each(mur.rss))
          } against ${mib(each(bare.rss))}, of it anonymous ${mib(each(mur.anon))} against ${
            mib(each(bare.anon))
          } (the rest is the runtime binary's pages, shared: PSS counts each process's share).`,
      );
      if (n === 100) {
        ctx.scale.add({
          label: labels.fit,
          mur: (16 * 1024) / each(mur.pss),
          base: (16 * 1024) / each(bare.pss),
          baseLabel: "bare Deno.serve processes",
          unit: "",
          digits: 0,
        });
      }
    }
    const tenBare = await groupAsIs(10, () => startBareAsIs());
    const crewFile = `${dir}/idle-crew-ten.json`;
    const members: { name: string; url: string; token: string }[] = [];
    const crew = await groupAsIs(10, async (i) => {
      if (i < 9) {
        const p = await capsule();
        members.push({
          name: `m${i + 1}`,
          url: `http://${String(p.ready.url).replace("localhost", "127.0.0.1")}`,
          token: "",
        });
        return p;
      }
      await Deno.writeTextFile(crewFile, JSON.stringify({ formation_id: "idle-ten", members }));
      return await capsule({
        MURMUR_CREW_CALLEES: members.map((m) => m.name).join(","),
        MURMUR_CREW_FILE: crewFile,
      });
    });
    ctx.scale.add({
      label: labels.crew,
      mur: sum(crew.pss) / MiB,
      base: sum(tenBare.pss) / MiB,
      baseLabel: "ten bare Deno.serve processes, the same way",
      unit: "MiB",
      digits: 1,
    });
  } catch (e) {
    for (const l of Object.values(labels)) {
      if (!ctx.scale.rows.some((r) => r.label === l)) ctx.scale.missing(l, (e as Error).message);
    }
  }
}

if (import.meta.main) {
  // These rows alone: deno run -A scripts/bench/round_memory.ts [--as-is | --after-gc]
  const { Scale, scaleTable } = await import("./scale.ts");
  const scale = new Scale();
  const dir = await Deno.makeTempDir({ prefix: "mur-memory-" });
  try {
    await Deno.mkdir(`${dir}/home`, { recursive: true });
    const ctx = { scale, log: console.error, turns: 0, hookTurns: 0, queued: 0 };
    if (!Deno.args.includes("--as-is")) await idleMemory(ctx, dir);
    if (!Deno.args.includes("--after-gc")) await idleMemoryAsIs(ctx, dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  console.log(scaleTable(scale));
  console.log(scale.facts.join("\n"));
}
