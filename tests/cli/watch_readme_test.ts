/**
 * docs/watch.md's `mur watch` pipe examples, run as written: every line of the sh block after the
 * marker in docs/watch.md "mur watch in pipes" goes to `sh -c` with a `mur` on PATH that runs this
 * checkout, against a real capsule. Each line has its expected output here; a line added to the
 * docs/watch.md without one, or one removed, fails the test.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type Out, WatchRenderer } from "../../src/watch/render.ts";
import {
  mur,
  murOnPath,
  type Ran,
  reach,
  runTasks,
  send,
  shell,
  start,
  startPipes,
  wireReplay,
} from "./pipes.ts";

const MARKER = "<!-- tests/cli/watch_readme_test.ts runs every line of the next sh block -->";

function readmeExamples(): string[] {
  const text = Deno.readTextFileSync(new URL("../../docs/watch.md", import.meta.url));
  const at = text.indexOf(MARKER);
  assert(at >= 0, "docs/watch.md lost the examples' marker");
  const open = text.indexOf("```sh\n", at) + "```sh\n".length;
  const close = text.indexOf("\n```", open);
  return text.slice(open, close).split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
}

/** The example lines, exactly as docs/watch.md has them. */
const FINAL_STATES =
  `mur watch --json | jq -r '.event.statusUpdate // empty | select(.status.state | test("COMPLETED|FAILED|CANCELED|REJECTED")) | "\\(.taskId) \\(.status.state)"'`;
const TOOL_CALLS =
  `mur watch --json | jq -r '.event.statusUpdate.metadata // {} | .[] | select(.frame? == "artifact") | "\\(.toolName) exit \\(.exitCode)"'`;
const ANSWER =
  `mur watch --task "$TASK" --json | jq -r '.event.artifactUpdate // empty | select(.artifact.name == "response") | .artifact.parts[].text'`;
const BRANCH =
  `mur watch --task "$TASK" --exit-status > /dev/null && echo completed || echo "not completed: exit $?"`;
const SINCE = `mur watch --since 120`;
const PAGER = `mur watch --color always | less -R`;

/**
 * What the renderer of docs/protocol.md "What mur watch does" prints for these events (the same
 * renderer mur watch runs).
 */
function rendered(events: { result: unknown }[]): string {
  const r = new WatchRenderer();
  const outs: Out[] = [];
  for (const e of events) outs.push(...r.handle(e.result));
  outs.push(...r.finish());
  return outs.filter((o) => o.to === "stdout").map((o) => o.text).join("");
}

Deno.test("docs/watch.md: every `mur watch` pipe example works as written", async () => {
  for (const tool of ["jq", "less", "sh"]) {
    const found = await shell(`command -v ${tool}`, {});
    assert(
      found.code === 0,
      `${tool} is not installed (deno task test installs it: scripts/test/programs.ts)`,
    );
  }
  const lines = readmeExamples();
  assertEquals(lines, [FINAL_STATES, TOOL_CALLS, ANSWER, BRANCH, SINCE, PAGER]);

  const cap = await startPipes();
  const bin = await murOnPath();
  const env = { PATH: `${bin}:${Deno.env.get("PATH")}`, MURMUR_HOME: cap.home };
  try {
    const { weather, fail } = await runTasks(cap);
    const talk = await send(cap, "talk"); // 150 text frames: the session passes event 120
    await reach(cap, talk, "TASK_STATE_COMPLETED");

    // The examples that follow one task end by themselves.
    const run = (line: string, task: string) => shell(line, { ...env, TASK: task });
    const answer = await run(ANSWER, weather);
    assertEquals([answer.code, answer.stdout], [0, "Sunny in 東京 ✓\n"], answer.stderr);
    assertEquals((await run(ANSWER, fail)).stdout, "");
    assertEquals((await run(BRANCH, weather)).stdout, "completed\n");
    assertEquals((await run(BRANCH, fail)).stdout, "not completed: exit 3\n");

    // The whole-session examples run until the capsule stops; stop it once all are attached.
    const wire = await wireReplay(cap.base);
    const session = [FINAL_STATES, TOOL_CALLS, SINCE, PAGER].map((line) =>
      start(["sh", "-c", line], env)
    );
    for (const s of session) {
      assert((await s.err.next(30_000))!.startsWith("[murmur] watching ses_"));
    }
    assertEquals((await mur(["stop", "@1"], { MURMUR_HOME: cap.home })).code, 0);
    const [states, tools, since, pager]: Ran[] = await Promise.all(session.map((s) => s.result));

    assertEquals([states.code, states.stdout], [
      0,
      `${weather} TASK_STATE_COMPLETED\n${fail} TASK_STATE_FAILED\n${talk} TASK_STATE_COMPLETED\n`,
    ]);
    assertEquals([tools.code, tools.stdout], [0, "bash exit 0\n"]);

    assertEquals(since.code, 1); // the capsule exited: a lost connection (docs/watch.md)
    assert(wire.length > 130, `only ${wire.length} events`);
    assertEquals(since.stdout, rendered(wire.filter((e) => e.id > 120)));
    assert(since.stdout.startsWith("word word"), since.stdout.slice(0, 80));

    assertEquals(pager.code, 0);
    assert(pager.stdout.includes("\x1b[32m[completed]\x1b[0m"), pager.stdout.slice(0, 300));
    assert(pager.stdout.includes("\x1b[31m[failed]\x1b[0m"), pager.stdout.slice(0, 300));
    // deno-lint-ignore no-control-regex
    assertEquals(pager.stdout.replace(/\x1b\[\d+m/g, ""), rendered(wire));
  } finally {
    await cap.close();
    await Deno.remove(bin, { recursive: true }).catch(() => {});
  }
});
