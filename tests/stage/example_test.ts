/**
 * examples/skills as shipped (docs/manifest.md "artifacts"): `mur run --manifest examples/skills`
 * reads its operator skill, the runtime skill its on-stage hook staged, calls the packaged tool
 * (which gets its config) and the tool whose manifest the hook wrote; `-v` names the skills.
 */
import assert from "node:assert/strict";
import { runMur } from "../helpers/mur.ts";
import { readTrace } from "./helpers.ts";

const EXAMPLE = new URL("../../examples/skills", import.meta.url).pathname;

Deno.test("examples/skills runs: two skills read, the packaged tool and the staged tool called", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-skills-example-" });
  try {
    const { code, stdout, stderr } = await runMur({
      args: ["run", "--manifest", EXAMPLE, "--task", "go", "-v", "--workdir", `${tmp}/wd`],
      env: { MURMUR_HOME: `${tmp}/home`, NO_COLOR: "1" },
    }, 60_000);
    assert.equal(code, 0, stderr);
    assert.ok(stdout.split("\n").includes("skills: style-guide, release-notes (runtime)"), stdout);
    assert.ok(stdout.split("\n").includes("status: ok"), stdout);

    // --workdir: the tools folder is in the workdir, the trace in its .murmur/<session> folder.
    const sessions = [...Deno.readDirSync(`${tmp}/wd/.murmur`)].map((e) => e.name);
    assert.equal(sessions.length, 1);
    const trace = await readTrace(`${tmp}/wd/.murmur/${sessions[0]}`);
    assert.deepEqual(
      trace.filter((e) => e.event_type === "skill_call").map((e) => [e.skill_name, e.origin]),
      [["style-guide", "operator"], ["release-notes", "runtime"]],
    );
    const calls = trace.filter((e) => e.event_type === "tool_call");
    assert.deepEqual(calls.map((e) => [e.tool_name, e.status]), [["word-count", "ok"], [
      "shout",
      "ok",
    ]]);
    const result = await Deno.readTextFile(`${tmp}/wd/.murmur/${sessions[0]}/out/result.txt`);
    assert.equal(result, "Done: two skills read, two tools called.");
    const record = (await Deno.readTextFile(
      `${tmp}/wd/.murmur/${sessions[0]}/conversation/${
        trace.find((e) => e.event_type === "task_start")!.context_id
      }.jsonl`,
    )).split("\n").filter((l) => l).map((l) => JSON.parse(l));
    const results = record.filter((m) => m.role === "tool").flatMap((m) => m.results);
    const got = (name: string) =>
      results.find((r: { toolName: string }) => r.toolName === name).content;
    assert.equal(
      got("word-count"),
      '<untrusted-content source=tool:word-count>\n3 words (config: {"unit":"words"})\n\n</untrusted-content>',
    );
    assert.equal(
      got("shout"),
      '<untrusted-content source=tool:shout>\n{"TEXT":"QUIET"}\n</untrusted-content>',
    );
    assert.ok(Deno.statSync(`${tmp}/wd/tools/release-notes/skill.md`).isFile);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
