/**
 * README "A first capsule of your own", done as written by a user with nothing but the README:
 * `deno task install` puts `mur` on PATH (into a folder of the test's), the two files of the
 * README's yaml blocks are written into a new folder outside the clone, and the three lines of
 * the sh block after them run through `sh -c` from that folder: terminal 1 starts the capsule,
 * terminal 2's `mur watch` (started once the capsule announced itself, after its task may well
 * have ended) shows the task to `[completed]`, and `mur stop @1` ends the capsule, which prints
 * `status: ok`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Mur, startProcess } from "../helpers/mur.ts";
import { until } from "../helpers/until.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const MARKER = "<!-- tests/run/readme_recipe_test.ts writes the two files below";

/** The README's recipe: its files (path → text, from the yaml blocks) and its commands. */
async function recipe(): Promise<{ files: [string, string][]; lines: string[] }> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const at = readme.indexOf(MARKER);
  assert.ok(at >= 0, "the README's recipe marker is missing");
  const rest = readme.slice(at);
  const files = [...rest.matchAll(/```yaml\n# (\S+)\n([\s\S]*?)```/g)].slice(0, 2)
    .map((m) => [m[1], m[2]] as [string, string]);
  const block = /```sh\n([\s\S]*?)```/.exec(rest)![1];
  const lines = block.split("\n").filter((l) => l.trim() !== "").map((l) =>
    l.replace(/\s+#.*$/, "")
  );
  return { files, lines };
}

/** `deno task install --dir DIR`, as the README says (the task runs from the clone). */
async function install(dir: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "install", "--dir", dir],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, text + new TextDecoder().decode(out.stderr));
  assert.match(text, new RegExp(`^installed: ${dir}/mur \\(runs `));
}

/** `sh -c line` in `cwd`, with `bin` on PATH, in a session of its own (killed as one). */
function sh(line: string, env: Record<string, string>, cwd: string, bin: string): Mur {
  return startProcess(["sh", "-c", line], {
    cwd,
    env: { ...env, PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`, NO_COLOR: "1" },
    setsid: true,
  });
}

Deno.test("README's first capsule works as written outside the clone: watch sees the task completed, stop ends it with status ok", async () => {
  const { files, lines } = await recipe();
  assertEquals(files.map(([p]) => p), ["my-capsule/murmur.yaml", "my-capsule/script.yaml"]);
  assertEquals(lines.length, 3, lines.join("\n"));
  const [runLine, watchLine, stopLine] = lines;
  assert.match(runLine, /^mur run --manifest my-capsule /);
  assert.match(watchLine, /^mur watch$/);
  assert.match(stopLine, /^mur stop @1$/);

  const home = await Deno.makeTempDir({ prefix: "mur-recipe-" });
  const bin = `${home}/bin`;
  const here = `${home}/projects`;
  await install(bin);
  for (const [path, text] of files) {
    await Deno.mkdir(`${here}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
    await Deno.writeTextFile(`${here}/${path}`, text);
  }
  const env = { MURMUR_HOME: `${home}/murmur`, HOME: home };
  const sh1 = (line: string) => sh(line, env, here, bin);
  const t1 = sh1(runLine);
  const t2 = { proc: undefined as ReturnType<typeof sh> | undefined };
  let sessionId = "";
  try {
    const head = await t1.out.until((l) => l.startsWith("session: "), 60_000);
    sessionId = head.at(-1)!.slice("session: ".length);
    assert.match(head.find((l) => l.startsWith("murmur: url "))!, /^murmur: url localhost:\d+$/);
    // Terminal 2 starts after the announcement; the hello task may be over by then.
    t2.proc = sh1(watchLine);
    const seen = await t2.proc.out.until((l) => l === "[completed]", 60_000);
    assert.ok(seen.includes("[working] inference turn 1"), seen.join("\n"));
    assert.ok(seen.some((l) => l.startsWith("[artifact] tool: bash [ok, exit 0")), seen.join("\n"));
    assert.ok(seen.some((l) => l.includes("Done: the shell said hello.")), seen.join("\n"));

    const stop = sh1(stopLine);
    const stopped = await stop.status;
    const stopOut = await stop.out.rest(10_000);
    assertEquals(stopped.code, 0, (await stop.err.rest(5_000)).join("\n"));
    assertEquals(stopOut[0], `stopped: ${sessionId}`);

    const rest = await t1.out.rest(30_000);
    assertEquals(rest.at(-1), "status: ok", rest.join("\n"));
    assertEquals((await t1.status).code, 0);
    // The watch learns the capsule is gone as a lost connection (no closing frame).
    assertEquals((await t2.proc.status).code, 1);
    const errs = await t2.proc.err.rest(5_000);
    // The stream's line, then the end told as an end (docs/watch.md "When the stream ends").
    assert.match(
      errs.at(-2)!,
      /^error\[E-IO-003\]: connection to ses_[0-9a-f]{32} lost after event id \d+$/,
    );
    assert.equal(
      errs.at(-1),
      "[murmur] the capsule ended: status ok (its stream said so as it closed)",
    );
    await until("the capsule's record to be gone", async () => {
      const left = await Array.fromAsync(Deno.readDir(`${home}/murmur/running`)).catch(() => []);
      return left.length === 0 ? true : undefined;
    }, 10_000);
  } finally {
    await t1.close();
    await t2.proc?.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
