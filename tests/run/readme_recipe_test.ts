/**
 * README "The demo": the two-terminal recipe, run as written. The three lines of the block after
 * the marker are read from README.md and run through `sh -c` from the repository root, as a user
 * pastes them: terminal 1 starts the hello capsule, terminal 2's `mur watch` (started once the
 * capsule announced itself, after its task may well have ended) shows the task to `[completed]`,
 * and `mur stop @1` ends the capsule, which prints `status: ok`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { LineReader } from "../cli/helpers.ts";
import { until } from "../helpers/until.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const MARKER = "<!-- tests/run/readme_recipe_test.ts runs the three lines of the next block";

/** The commands of the README's recipe block, comments stripped. */
async function recipe(): Promise<string[]> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const at = readme.indexOf(MARKER);
  assert.ok(at >= 0, "the README's recipe marker is missing");
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))![1];
  return block.split("\n").filter((l) => l.trim() !== "").map((l) => l.replace(/\s+#.*$/, ""));
}

/** `sh -c line` from the repository root, in a process group of its own (killed as one). */
function sh(line: string, env: Record<string, string>) {
  const denoDir = Deno.execPath().slice(0, Deno.execPath().lastIndexOf("/"));
  const child = new Deno.Command("sh", {
    args: ["-c", line],
    cwd: ROOT,
    env: { ...env, PATH: `${denoDir}:${Deno.env.get("PATH") ?? ""}`, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  return { child, out: new LineReader(child.stdout), err: new LineReader(child.stderr) };
}

function killGroup(pid: number): void {
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch { /* gone */ }
}

Deno.test("README's two-terminal recipe works as written: watch sees the task completed, stop ends it with status ok", async () => {
  const lines = await recipe();
  assertEquals(lines.length, 3, lines.join("\n"));
  const [runLine, watchLine, stopLine] = lines;
  assert.match(runLine, /^deno task mur run /);
  assert.match(watchLine, /^deno task mur watch$/);
  assert.match(stopLine, /^deno task mur stop @1$/);

  const home = await Deno.makeTempDir({ prefix: "mur-recipe-" });
  const env = { MURMUR_HOME: home, HOME: home };
  const t1 = sh(runLine, env);
  const t2 = { proc: undefined as ReturnType<typeof sh> | undefined };
  let sessionId = "";
  try {
    const head = await t1.out.until((l) => l.startsWith("session: "), 60_000);
    sessionId = head.at(-1)!.slice("session: ".length);
    assert.match(head.find((l) => l.startsWith("murmur: url "))!, /^murmur: url localhost:\d+$/);
    // Terminal 2 starts after the announcement; the hello task may be over by then.
    t2.proc = sh(watchLine, env);
    const seen = await t2.proc.out.until((l) => l === "[completed]", 60_000);
    assert.ok(seen.includes("[working] inference turn 1"), seen.join("\n"));
    assert.ok(seen.some((l) => l.startsWith("[artifact] tool: bash [ok, exit 0")), seen.join("\n"));

    const stop = sh(stopLine, env);
    const stopped = await stop.child.status;
    const stopOut = await stop.out.rest(10_000);
    assertEquals(stopped.code, 0, (await stop.err.rest(5_000)).join("\n"));
    assertEquals(stopOut[0], `stopped: ${sessionId}`);

    const rest = await t1.out.rest(30_000);
    assertEquals(rest.at(-1), "status: ok", rest.join("\n"));
    assertEquals((await t1.child.status).code, 0);
    // The watch learns the capsule is gone as a lost connection (no closing frame).
    assertEquals((await t2.proc.child.status).code, 1);
    const errs = await t2.proc.err.rest(5_000);
    assert.match(
      errs.at(-1)!,
      /^error\[E-IO-003\]: connection to ses_[0-9a-f]{32} lost after event id \d+/,
    );
    await until("the capsule's record to be gone", async () => {
      const left = await Array.fromAsync(Deno.readDir(`${home}/running`)).catch(() => []);
      return left.length === 0 ? true : undefined;
    }, 10_000);
  } finally {
    killGroup(t1.child.pid);
    if (t2.proc) killGroup(t2.proc.child.pid);
    await t1.child.status;
    await t2.proc?.child.status;
    if (sessionId) {
      await Deno.remove(`${ROOT}examples/hello/workdir/${sessionId}`, { recursive: true })
        .catch(() => {});
    }
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
