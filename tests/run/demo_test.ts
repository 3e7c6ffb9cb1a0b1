/**
 * `deno task demo` (scripts/demo.ts): runs examples/hello with a real `mur watch` on it, then shows
 * where the answer went; leaves nothing running, also when interrupted.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { writeCapsule } from "../helpers/capsule.ts";
import { runningFiles, until } from "./helpers.ts";

const DEMO = new URL("../../scripts/demo.ts", import.meta.url).pathname;

function spawnDemo(tmp: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", DEMO, ...args, "--workdir", `${tmp}/wd`],
    env: { MURMUR_HOME: `${tmp}/home`, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

function gone(pid: number): true | undefined {
  try {
    Deno.kill(pid, "SIGCONT");
    return undefined;
  } catch {
    return true;
  }
}

/** Pids of the live processes whose parent is `pid`, with their command lines (Linux /proc). */
async function childrenOf(pid: number): Promise<{ pid: number; cmd: string }[]> {
  const out: { pid: number; cmd: string }[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== pid) continue;
      const cmd = (await Deno.readTextFile(`/proc/${e.name}/cmdline`)).split("\0").join(" ");
      out.push({ pid: Number(e.name), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function capsulePid(stdout: string): number {
  const m = /"pid":(\d+)/.exec(stdout);
  assert.ok(m, `no readiness line in the demo's output:\n${stdout}`);
  return Number(m[1]);
}

Deno.test("demo: watch shows the session live, then the workdir, result.txt and trace are shown", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-demo-" });
  const child = spawnDemo(tmp, ["Say hello to the test"]);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stdout + stderr);
    // mur watch's own lines (its stdout is the demo's): statuses, the text, the tool's artifact.
    assert.match(stdout, /^\[working\] inference turn 1$/m);
    assert.match(stdout, /^\[artifact\] tool: bash \[ok, exit 0/m);
    assert.match(stdout, /^\[completed\]$/m);
    assert.match(stderr, /\[murmur\] watching ses_[0-9a-f]{32}/);
    // Then where everything went: under --workdir, the session's own files are in its folder
    // under .murmur/ (docs/running.md "Files"), named by the readiness line.
    const ready = JSON.parse(/^\s*(\{"url".*\})$/m.exec(stdout)![1]);
    const sd = ready.session_dir as string;
    assertEquals(sd, `${tmp}/wd/.murmur/${ready.session_id}`);
    const result = await Deno.readTextFile(`${sd}/out/result.txt`);
    assert.ok(result.length > 0);
    assert.ok(stdout.includes(`│ ${result.trimEnd().split("\n")[0]}`), "result.txt is shown");
    assert.match(stdout, /status ok, exit code 0/);
    const traceLines = (await Deno.readTextFile(`${sd}/trace.jsonl`)).trimEnd().split("\n");
    assert.ok(stdout.includes(`trace.jsonl — ${traceLines.length} lines`), stdout);
    assert.match(stdout, /mur trace show ses_[0-9a-f]{32} --workdir /);
    assertEquals(await Deno.readTextFile(`${tmp}/wd/task.md`), "Say hello to the test");
    // Nothing left: the capsule is gone and its running record removed.
    await until("the capsule process to be gone", () => gone(capsulePid(stdout)), 5000);
    assertEquals(await runningFiles(`${tmp}/home`), []);
  } finally {
    clearTimeout(timer);
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});

Deno.test("demo: Ctrl-C stops the capsule and the watcher it started", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-demo-" });
  // A capsule that runs until stopped, so the interrupt surely lands while both children run.
  const capsule = await writeCapsule({
    manifest: { name: "slow", version: "1.0.0" },
    script: { tasks: [{ turns: [{ steps: [{ text: "thinking hard" }, { delay_ms: 60_000 }] }] }] },
  });
  const child = spawnDemo(tmp, ["--manifest", capsule]);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  try {
    // Wait for the readiness line (the capsule is running, the watcher is starting).
    while (!/"pid":\d+/.test(stdout)) {
      const r = await reader.read();
      if (r.done) break;
      stdout += r.value;
    }
    const pid = capsulePid(stdout);
    const started = await until("the watcher to start", async () => {
      const kids = await childrenOf(child.pid);
      return kids.some((k) => / watch --url /.test(k.cmd)) ? kids : undefined;
    }, 15_000);
    assert.ok(started.some((k) => k.pid === pid), "the capsule is the demo's child");
    child.kill("SIGINT");
    const status = await child.status;
    assertEquals(status.code, 130);
    for (const k of started) {
      await until(`${k.cmd} (${k.pid}) to be gone`, () => gone(k.pid), 10_000);
    }
    assertEquals(await runningFiles(`${tmp}/home`), []);
    // The capsule ended cleanly on the SIGTERM the demo sent: its trace (in its session folder
    // under --workdir's .murmur/) is closed.
    const sid = JSON.parse(/^\s*(\{"url".*\})$/m.exec(stdout)![1]).session_id;
    const trace = (await Deno.readTextFile(`${tmp}/wd/.murmur/${sid}/trace.jsonl`)).trimEnd()
      .split("\n");
    const end = JSON.parse(trace.at(-1)!);
    assertEquals([end.event_type, end.exit_status], ["session_end", "canceled"]);
  } finally {
    clearTimeout(timer);
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await reader.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    await Deno.remove(capsule, { recursive: true }).catch(() => {});
  }
});
