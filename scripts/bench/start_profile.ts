/**
 * What a start spends its CPU on, by module (cpu_profile.ts `byModule`): `mur run` of a scripted
 * capsule to its readiness line (then SIGTERM: its graceful end writes the profile), `mur ps` to
 * its exit, and `mur watch --url … --json` of a capsule whose one task ends its session, so the
 * watch exits by itself after its events (a profile is written at a normal exit only). Profiled
 * from source, where each module keeps its name (the bundle runs the same code in a few chunks). Each runs
 * once under `--cpu-prof`, after the timed tries; idle samples are left out, so the waits (the
 * watch's for its capsule's task) count for nothing.
 */
import { byModule, type CpuProfile } from "./cpu_profile.ts";
import { kill, murCmd, SOURCE_MAIN, spawnReady } from "./procs.ts";
import { type ScaleCtx, writeScaleCapsule } from "./round_scale.ts";

const TOP = 12;
/** `--cpu-prof-interval` (µs) and the most one sample stands for (cpu_profile.ts `byModule`). */
const INTERVAL_US = 250;
const CAP_MS = 2;

async function readProfile(dir: string): Promise<CpuProfile> {
  for (const e of Deno.readDirSync(dir)) {
    if (e.name.endsWith(".cpuprofile")) {
      return JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)) as CpuProfile;
    }
  }
  throw new Error(`no .cpuprofile written in ${dir}`);
}

/** Waits for a child's exit, at most `ms`; false when it was still running (then killed). */
async function exited(child: Deno.ChildProcess, pid: number, ms: number): Promise<boolean> {
  let t: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([
    child.status.then(() => true),
    new Promise<false>((res) => (t = setTimeout(() => res(false), ms))),
  ]);
  clearTimeout(t);
  if (!r) kill(pid);
  return r;
}

function table(name: string, p: CpuProfile): string {
  const mods = byModule(p, CAP_MS);
  const total = mods.reduce((s, m) => s + m.ms, 0);
  const rows = mods.slice(0, TOP).map((m) =>
    `| ${m.module} | ${m.ms.toFixed(1)} | ${((100 * m.ms) / total).toFixed(0)} % |`
  );
  const rest = mods.slice(TOP).reduce((s, m) => s + m.ms, 0);
  return `**${name}**: ${total.toFixed(0)} ms of CPU on the main thread (idle left out)

| module | self ms | share |
| --- | ---: | ---: |
${rows.join("\n")}${
    rest > 0
      ? `\n| ${mods.length - TOP} more | ${rest.toFixed(1)} | ${
        ((100 * rest) / total).toFixed(0)
      } % |`
      : ""
  }`;
}

export async function startProfiles(
  ctx: ScaleCtx,
  dir: string,
  manifest: string,
  env: Record<string, string>,
): Promise<string> {
  const out: string[] = [];
  const prof = (tag: string) => {
    const d = `${dir}/prof-${tag}`;
    Deno.mkdirSync(d, { recursive: true });
    return ["--cpu-prof", `--cpu-prof-dir=${d}`, `--cpu-prof-interval=${INTERVAL_US}`, d] as const;
  };
  const section = async (name: string, f: () => Promise<CpuProfile>) => {
    try {
      out.push(table(name, await f()));
    } catch (e) {
      out.push(`**${name}**: not available: ${(e as Error).message}`);
    }
  };
  ctx.log("scale: cold start profiles (--cpu-prof)");
  await section("`mur run`, spawn → readiness line (→ SIGTERM)", async () => {
    const [a, b, c, d] = prof("run");
    const s = await spawnReady({
      name: "mur run (profiled)",
      cmd: murCmd(manifest, `${dir}/cold/wd-prof`, [], [a, b, c], SOURCE_MAIN),
      env,
      core: 0,
      readyTimeoutMs: 30_000,
    });
    Deno.kill(s.pid, "SIGTERM");
    if (!await exited(s.child, s.pid, 10_000)) throw new Error("mur run did not end on SIGTERM");
    return await readProfile(d);
  });
  await section("`mur ps`, spawn → exit", async () => {
    const [a, b, c, d] = prof("ps");
    const o = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", a, b, c, SOURCE_MAIN, "ps"],
      env,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!o.success) throw new Error(`mur ps exited ${o.code}`);
    return await readProfile(d);
  });
  await section("`mur watch --url … --json`, spawn → its capsule's end", async () => {
    // A capsule whose one task waits a second (the watch attaches meanwhile), answers, and
    // ends the session: the watch reads the end and exits 0.
    const path = await writeScaleCapsule(dir, "watched", {
      manifest: {
        inference: { driver: "scripted", script: "script.json", max_turns: 4 },
      },
      script: { tasks: [{ turns: [{ steps: [{ delay_ms: 1000 }, { text: "ok" }] }] }] },
    });
    const cap = await spawnReady({
      name: "mur run (watched)",
      cmd: murCmd(path, `${dir}/watched/wd`, ["--task", "go", "--lifecycle-after-task", "exit"]),
      env,
      core: 0,
      readyTimeoutMs: 30_000,
    });
    try {
      const [a, b, c, d] = prof("watch");
      const w = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          a,
          b,
          c,
          SOURCE_MAIN,
          "watch",
          "--url",
          String(cap.ready.url),
          "--json",
        ],
        env,
        stdout: "null",
        stderr: "null",
      }).spawn();
      if (!await exited(w, w.pid, 20_000)) {
        throw new Error("mur watch did not end with its capsule");
      }
      return await readProfile(d);
    } finally {
      kill(cap.pid);
    }
  });
  return `## What start costs, by module

Each start once more under \`--cpu-prof\` after the timed tries above (scripts/bench/start_profile.ts):
self time on the main thread by module — an npm package by name, mur's files by folder, the
runtime's own JS together, and \`(program)\`: V8 and Deno outside JavaScript (reading, parsing and
compiling modules, the runtime's Rust). One sample every ${INTERVAL_US} µs; idle samples are left out, and a
sample standing for more than ${CAP_MS} ms (a wait the profiler did not mark idle) counts ${CAP_MS} ms. What no
profile shows is the runtime's work before the first module runs (reading deno.json and the lockfile,
building the module graph, loading the code cache): the rest of each start's wall time above.

${out.join("\n\n")}
`;
}
