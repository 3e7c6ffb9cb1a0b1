/**
 * The compiled binary's rows: `deno task compile` (scripts/build.ts) builds `mur` into the run's
 * temporary folder; where it builds, its `mur run` of a scripted capsule is timed spawn →
 * readiness line against the raw Deno.serve server's, taking turns, and its idle RSS is read the
 * same way as the raw server's — 300 ms after the readiness line, no forced collection (a
 * compiled binary takes no `--inspect`). Where it does not build (`deno compile` downloads its
 * runtime, denort, unless DENORT_BIN names one), one line says why.
 */
import { canPin, kill, rssBytes, spawnReady } from "./procs.ts";
import { median } from "./stats.ts";
import { queueCapsule, type ScaleCtx, writeScaleCapsule } from "./round_scale.ts";

const BUILD = new URL("../build.ts", import.meta.url).pathname;
const RAW = new URL("./raw_server.ts", import.meta.url).pathname;
const TRIES = 5;

/** Builds the binary into `out`; null when built, else the build's last error line. */
async function build(out: string): Promise<string | null> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BUILD, "--output", out],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, 300_000);
  const o = await child.output();
  clearTimeout(timer);
  if (o.success) return null;
  const lines = new TextDecoder().decode(o.stderr).split("\n").map((l) => l.trim())
    .filter((l) => l && !/^\d+: |^Stack backtrace/.test(l));
  return (lines.findLast((l) => /error/i.test(l)) ?? lines.at(-1) ?? `exit ${o.code}`)
    .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
}

export async function compiledBinary(ctx: ScaleCtx, dir: string): Promise<void> {
  ctx.log("scale: the compiled binary (deno task compile)");
  const bin = `${dir}/mur-compiled`;
  const why = await build(bin);
  if (why !== null) {
    ctx.scale.facts.push(
      `The compiled binary: not measured — \`deno task compile\` could not build it on this machine (${why}).`,
    );
    return;
  }
  const manifest = await writeScaleCapsule(dir, "compiled", queueCapsule(1));
  const env = { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" };
  const t = {
    raw: [] as number[],
    bin: [] as number[],
    rawRss: [] as number[],
    binRss: [] as number[],
  };
  try {
    for (let i = 0; i < TRIES; i++) {
      const raw = await spawnReady({
        name: "raw (compiled row)",
        cmd: [Deno.execPath(), "run", "-A", RAW, "0", "0"],
        core: 0,
        readyTimeoutMs: 30_000,
      });
      t.raw.push(raw.startMs);
      await new Promise((r) => setTimeout(r, 300));
      t.rawRss.push(rssBytes(raw.pid));
      kill(raw.pid);
      const m = await spawnReady({
        name: "mur (compiled)",
        cmd: [bin, "run", "--manifest", manifest, "--json", "--workdir", `${dir}/compiled/wd-${i}`],
        env,
        core: 0,
        readyTimeoutMs: 30_000,
      });
      t.bin.push(m.startMs);
      await new Promise((r) => setTimeout(r, 300));
      t.binRss.push(rssBytes(m.pid));
      kill(m.pid);
    }
  } catch (e) {
    ctx.scale.facts.push(`The compiled binary: built, but not measured: ${(e as Error).message}.`);
    return;
  }
  ctx.scale.add({
    label: "compiled binary: `mur run` of a scripted capsule, spawn → readiness line",
    mur: median(t.bin),
    base: median(t.raw),
    baseLabel: "raw Deno.serve (deno run), spawn → readiness line",
    unit: "ms",
    digits: 0,
    target: 2,
  });
  ctx.scale.add({
    label: "compiled binary: memory of one idle capsule, RSS 300 ms after readiness (no forced GC)",
    mur: median(t.binRss) / 2 ** 20,
    base: median(t.rawRss) / 2 ** 20,
    baseLabel: "raw Deno.serve (deno run), the same way",
    unit: "MiB",
    digits: 1,
    target: 1.5,
  });
  if (!canPin()) ctx.scale.facts.push("The compiled binary's rows ran unpinned (no taskset).");
}
