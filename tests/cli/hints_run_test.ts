/**
 * Every command line mur prints for a user to type — the demos' lines, `mur run -v`'s `watch:`
 * and `stop:` lines, the commands in error hints, the `--help` synopses — is collected from what
 * was printed and RUN as printed: through `sh -c`, with the PATH the user has (no `deno` on it
 * after the README's set-up; `npx` puts its own folders in front only for its child), from the
 * folder the user is in. None may fail with a usage or lookup error (E-CLI-…, E-TRC-002,
 * E-RUN-022, E-IO-001, `couldn't find deno.json`, `command not found`). src/invocation.ts
 * says which prefix each case prints.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { until } from "../helpers/until.ts";
import { startProcess } from "../helpers/mur.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
/** The PATH of a machine with Node and npm and nothing else (no `deno`): README's fresh machine. */
const USER_PATH = "/usr/local/bin:/usr/bin:/bin";
const NPX = "npx -y deno@2 task mur";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** A user's shell: only PATH, HOME (npx's cache) and the variables given. */
function userEnv(home: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: USER_PATH,
    HOME: Deno.env.get("HOME") ?? "/root",
    MURMUR_HOME: home,
    NO_COLOR: "1",
    ...more,
  };
}

/**
 * `line` through `sh -c` in `cwd`, in a session of its own under exactly `env`, through the one
 * launcher (tests/helpers/mur.ts); killed (its group) after 120 s so a hang fails the test.
 */
function shell(line: string, cwd: string, env: Record<string, string>) {
  const p = startProcess(["sh", "-c", line], { cwd, env, clearEnv: true, setsid: true });
  const result: Promise<Ran> = p.end(120_000).then(({ code, stdout, stderr }) => ({
    code,
    stdout,
    stderr,
  }));
  result.catch(() => {}); // a caller that kills it and never awaits this is not unhandled
  return {
    result,
    kill: () => p.kill("SIGKILL"),
    stdout: () => p.out.text(),
    stderr: () => p.err.text(),
  };
}

const run = (line: string, cwd: string, env: Record<string, string>) =>
  shell(line, cwd, env).result;

const LOOKUP =
  /error\[(E-CLI-\d+|E-TRC-002|E-RUN-022|E-IO-001)\]|couldn't find|not found|No such file/i;

/** The printed command ran: exit 0, and nothing a usage or lookup error says. */
function assertRan(line: string, r: Ran, codes = [0]): void {
  const said = `${line}\n→ exit ${r.code}\n${r.stdout}\n${r.stderr}`;
  assert.ok(codes.includes(r.code), said);
  assert.doesNotMatch(r.stderr, LOOKUP, said);
}

/**
 * The command lines in `text` that start with `prefix`: a whole line (after `$ ` or `watch: `,
 * before `  # …`), or a backticked one in a hint. A template (`<frm id>`, `DIR`) is not a line
 * to run and is left out.
 */
function commands(text: string, prefix: string): string[] {
  const out: string[] = [];
  const esc = prefix.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  for (const m of text.matchAll(new RegExp("`(" + esc + "(?: [^`]*)?)`", "g"))) out.push(m[1]);
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^\s*(\$ |[a-z]+: )?/, "").replace(/\s+#.*$/, "");
    if (line.startsWith(prefix + " ")) out.push(line);
  }
  return out.filter((c) => !/<[^>]*>|\b[A-Z]{3,}\b/.test(c));
}

Deno.test("hints: the demo's command lines run as printed from the clone, with no deno on PATH", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-hints-" });
  const env = userEnv(`${tmp}/home`);
  const demo = await run(`npx -y deno@2 task demo --workdir ${tmp}/wd`, ROOT, env);
  assertRan("deno task demo", demo);
  const lines = commands(demo.stdout, NPX);
  // Its run line, watch, trace show, trace steps; the two-terminal recipe (run, watch, stop).
  assert.ok(lines.length >= 7, demo.stdout);
  assert.ok(!/^\s+deno task/m.test(demo.stdout), "no bare `deno task` line: no deno on PATH");
  const recipe = lines.find((l) => l.includes("--lifecycle-after-task sleep"))!;
  assert.ok(recipe, demo.stdout);
  for (const line of lines) {
    // `$ … watch --url …` narrates the watch the demo ran (its output follows the line), on a
    // capsule that has ended since; the recipe's watch and stop are run below, on a live one.
    if (line === recipe || / (watch|stop)\b/.test(line)) continue;
    assertRan(line, await run(line, ROOT, env));
  }
  // The two-terminal recipe, typed in a folder of the clone below its root, as a user would:
  // the capsule runs, `mur run -v`'s watch and stop lines and the recipe's own run as printed.
  const cwd = `${ROOT}/examples`;
  const capsule = shell(recipe, cwd, env);
  const watchers: ReturnType<typeof shell>[] = [];
  try {
    const v = await until("the recipe's -v lines", () => {
      const m = /^stop: (.*)$/m.exec(capsule.stdout());
      return m ? capsule.stdout() : undefined;
    }, 90_000);
    const vLines = commands(v, NPX);
    assert.equal(vLines.length, 2, v);
    const sid = /^session: (ses_[0-9a-f]{32})$/m.exec(v)![1];
    // Error hints met on the way, each with a command line in it: stop with an address that
    // names no running capsule; watch --task with an id, and cancel with a label, the session
    // does not hold.
    const miss = await run(`${NPX} stop ffffff`, cwd, env);
    assert.match(miss.stderr, /E-RUN-022/);
    for (const hinted of commands(miss.stderr, NPX)) assertRan(hinted, await run(hinted, cwd, env));
    const noTask = await run(`${NPX} watch ${sid} --task tsk_${"f".repeat(32)}`, cwd, env);
    assert.match(noTask.stderr, /error\[E-RUN-048\]/);
    const noCancel = await run(`${NPX} cancel ${sid} ffff00`, cwd, env);
    assert.match(noCancel.stderr, /error\[E-RUN-048\]/);
    const hinted = [...commands(noTask.stderr, NPX), ...commands(noCancel.stderr, NPX)];
    assert.equal(hinted.length, 2, noTask.stderr + noCancel.stderr);
    assert.match(hinted[0], / --json \| jq /, "watch's hint lists the task ids through jq");
    // Every watch line follows the live session until it ends: -v's, the recipe's bare one
    // (@1 is this session), and the hints'.
    const watchLines = [vLines[0], lines.find((l) => l === `${NPX} watch`)!, ...hinted];
    watchers.push(...watchLines.map((l) => shell(l, cwd, env)));
    await until(
      "every watcher attached",
      () => watchers.every((w) => /\[murmur\] watching/.test(w.stderr())) || undefined,
      90_000,
    );
    assertRan(vLines[1], await run(vLines[1], cwd, env));
    // A watcher learns the capsule has gone from the connection ending (E-IO-003, exit 1).
    for (const [i, w] of watchers.entries()) assertRan(watchLines[i], await w.result, [0, 1]);
    assertRan(recipe, await capsule.result);
  } finally {
    for (const p of [capsule, ...watchers]) p.kill();
  }
  // `stop @1` of the recipe, once nothing runs: the lookup error it gives is the true one.
  const stop = lines.find((l) => l.endsWith(" stop @1"))!;
  const none = await run(stop, cwd, env);
  assert.match(none.stderr, /error\[E-RUN-022\]: no capsule is running/);
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("hints: the crew demo's command lines run as printed", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-hints-crew-" });
  const env = userEnv(`${tmp}/home`);
  const demo = await run(`npx -y deno@2 task demo:crew`, ROOT, env);
  assertRan("deno task demo:crew", demo);
  const lines = commands(demo.stdout, NPX);
  const traces = lines.filter((l) => l.includes(" trace show "));
  assert.equal(traces.length, 3, demo.stdout);
  assert.ok(lines.some((l) => l.endsWith(" ps")), demo.stdout);
  for (const line of lines) {
    // `$ … watch ses_…` narrates the watch the demo ran on the lead (its output follows the
    // line); the lead has ended since, so that one is not a line to run afterwards.
    if (/ watch ses_/.test(line)) continue;
    // The launch line and "run it by hand" start a formation that ends after its task.
    assertRan(line, await run(line, ROOT, env));
  }
  await Deno.remove(tmp, { recursive: true });
});

/** A capsule whose launch task fails (the scripted model errors), in `dir`. */
async function failingCapsule(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/script.yaml`,
    stringify({ tasks: [{ turns: [{ steps: [{ error: "provider overloaded" }] }] }] }),
  );
  await Deno.writeTextFile(
    `${dir}/murmur.yaml`,
    stringify({
      name: "fails",
      version: "0.1.0",
      inference: { driver: "scripted", script: "script.yaml" },
    }),
  );
}

Deno.test("hints: E-RUN-040's trace command runs from where the user stands, with --workdir anywhere", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-hints-040-" });
  await failingCapsule(`${tmp}/cap`);
  // 1. From a folder of the clone, no deno on PATH, the workdir outside the clone.
  const env = userEnv(`${tmp}/home`);
  const cwd = `${ROOT}/examples/hello`;
  const failed = await run(
    `${NPX} run --manifest ${tmp}/cap --task go --workdir ${tmp}/wd`,
    cwd,
    env,
  );
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /error\[E-RUN-040\]/);
  const [trace] = commands(failed.stderr, NPX);
  assert.ok(trace?.includes(" trace show "), failed.stderr);
  const shown = await run(trace, cwd, env);
  assertRan(trace, shown);
  assert.match(shown.stdout, /provider overloaded|failed/);

  // 2. With a deno on PATH: `deno task mur`, from the same folder.
  const bin = `${tmp}/bin`;
  await Deno.mkdir(bin);
  await Deno.symlink(Deno.execPath(), `${bin}/deno`);
  const denoEnv = userEnv(`${tmp}/home`, { PATH: `${bin}:${USER_PATH}` });
  const again = await run(`deno task mur run --manifest ${tmp}/cap --task go`, cwd, denoEnv);
  assert.match(again.stderr, /error\[E-RUN-040\]/);
  const [denoTrace] = commands(again.stderr, "deno task mur");
  assert.ok(denoTrace, again.stderr);
  assertRan(denoTrace, await run(denoTrace, cwd, denoEnv));

  // 3. Through an install shim (MUR_COMMAND=mur), in the user's own folder outside the clone,
  // with paths relative to it.
  await Deno.writeTextFile(
    `${bin}/mur`,
    `#!/bin/sh\nMUR_COMMAND=mur exec ${Deno.execPath()} run -A --quiet ${ROOT}/main.ts "$@"\n`,
  );
  await Deno.chmod(`${bin}/mur`, 0o755);
  const own = await run("mur run --manifest cap --task go --workdir wd2", tmp, denoEnv);
  assert.match(own.stderr, /error\[E-RUN-040\]/);
  const [murTrace] = commands(own.stderr, "mur");
  assert.match(murTrace ?? "", /^mur trace show wd2\//, own.stderr);
  assertRan(murTrace, await run(murTrace, tmp, denoEnv));
  // A second capsule on a workdir a live session holds is refused (E-RUN-043); the stop line in
  // its hint ends the holder, as printed.
  const holder = shell(
    "mur run --manifest cap --workdir wd3 --lifecycle-task-acceptance queue --lifecycle-after-task sleep",
    tmp,
    denoEnv,
  );
  try {
    await until(
      "the holder's session line",
      () => /^session: /m.test(holder.stdout()) || undefined,
    );
    const second = await run("mur run --manifest cap --workdir wd3 --task again", tmp, denoEnv);
    assert.match(second.stderr, /error\[E-RUN-043\]/);
    const [stopLine] = commands(second.stderr, "mur");
    assert.match(stopLine ?? "", /^mur stop ses_[0-9a-f]{32}$/, second.stderr);
    assertRan(stopLine, await run(stopLine, tmp, denoEnv));
    assertRan("the holder", await holder.result);
  } finally {
    holder.kill();
  }
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("hints: --help synopses without placeholders, and roster and watch --task hints, run as printed", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-hints-help-" });
  const env = userEnv(`${tmp}/home`);
  const help = await run(`${NPX} ps --help`, ROOT, env);
  assertRan("ps --help", help);
  const [synopsis] = commands(help.stdout.replace(/^usage: /m, ""), NPX);
  assert.equal(synopsis, `${NPX} ps`, help.stdout);
  assertRan(synopsis, await run(synopsis, ROOT, env));
  const top = await run(`${NPX} --help`, `${ROOT}/src`, env);
  assert.match(top.stdout, new RegExp(`^usage: ${NPX} <command>`, "m"));

  // E-ROS-007: a member whose manifest does not load; the hint's command shows its own fault.
  await Deno.mkdir(`${tmp}/crew/bad`, { recursive: true });
  await Deno.writeTextFile(`${tmp}/crew/bad/murmur.yaml`, "name: [unclosed\n");
  await Deno.writeTextFile(
    `${tmp}/crew/roster.yaml`,
    stringify({ roster_version: 1, members: [{ name: "bad", manifest: "bad", entry: true }] }),
  );
  const ros = await run(`${NPX} run --roster ${tmp}/crew/roster.yaml --task x`, ROOT, env);
  assert.match(ros.stderr, /error\[E-ROS-007\]/);
  const [alone] = commands(ros.stderr, NPX);
  assert.ok(alone, ros.stderr);
  const fault = await run(alone, ROOT, env);
  assertRan(alone, fault, [1]);
  assert.match(fault.stderr, /error\[E-MAN-002\]/);
  await Deno.remove(tmp, { recursive: true });
});
