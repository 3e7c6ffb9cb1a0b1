/**
 * The staging phase on real `mur run` processes (docs/hooks.md "on-stage"): an on-stage hook runs
 * once per launch before the trace exists; its write-manifests answer makes a tool callable in
 * the same launch; a failing one stops the launch with E-RUN-051 on stderr, a non-zero exit, no
 * readiness line (no door), no running record, no trace, and its diagnostics in
 * logs/bootstrap.log. `mur run -v` says the skills; MURMUR.md lists tools and skills.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { spawnRun } from "../run/helpers.ts";
import { finishedWithin, streamTask } from "../session/helpers.ts";
import { artifactFrames, readTrace, SKILL_ARTIFACTS, skillFiles } from "./helpers.ts";

const SHOUT = JSON.stringify({
  write_manifests: [{
    binary_name: "shout",
    content: "description: Upper-case the input\ncommand: [tr, a-z, A-Z]\n",
  }],
});

/** A hook under hooks: that appends whether trace.jsonl exists yet, then answers `answer`. */
function probeHook(answer: string): string {
  return `#!/bin/sh
cat >/dev/null
if [ -e "$MURMUR_WORKDIR/trace.jsonl" ]; then echo trace >>"$MURMUR_WORKDIR/probe"; else echo no-trace >>"$MURMUR_WORKDIR/probe"; fi
cat <<'ANSWER'
${answer}
ANSWER
`;
}

async function sessionDirs(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(`${dir}/workdir`)) out.push(`${dir}/workdir/${e.name}`);
  } catch { /* no workdir at all */ }
  return out;
}

async function entries(path: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(path)) out.push(e.name);
  } catch { /* not there */ }
  return out;
}

Deno.test("on-stage write-manifests: the tool is callable in the same launch; the hook ran once, before the trace", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "stager",
      version: "0.1.0",
      lifecycle: { task_acceptance: "single" },
      hooks: [{
        name: "probe",
        binding: "on-stage",
        commit_policy: "write-manifests",
        command: ["./probe.sh"],
      }],
    },
    files: { "probe.sh": probeHook(SHOUT) },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "toolu_1", name: "shout", input: { say: "quiet" } } }] },
          { steps: [{ text: "shouted" }] },
        ],
      }],
    },
  });
  try {
    const events = await streamTask(cap, "shout it");
    const fin = await finishedWithin(cap);
    assert.equal(fin.code, 0, fin.stderr);
    const dir = cap.ready.workdir;
    const [frame] = artifactFrames(events);
    assert.equal(frame.toolName, "shout");
    assert.equal(frame.fenceSource, "tool:shout");
    assert.equal(frame.isError, false);
    assert.equal(frame.exitCode, 0);
    assert.equal(
      frame.content,
      `<untrusted-content source=tool:shout>\n{"SAY":"QUIET"}\n</untrusted-content>`,
    );
    const trace = await readTrace(dir);
    const call = trace.find((e) => e.event_type === "tool_call")!;
    assert.equal(call.tool_name, "shout");
    assert.equal(call.status, "ok");
    assert.ok(
      (trace.find((e) => e.event_type === "session_start")!.tools_declared as string[])
        .includes("shout"),
    );
    // Once per launch, and before trace.jsonl existed.
    assert.equal(await Deno.readTextFile(`${dir}/probe`), "no-trace\n");
    assert.equal(
      await Deno.readTextFile(`${dir}/tools/shout/murmur.yaml`),
      "description: Upper-case the input\ncommand: [tr, a-z, A-Z]\n",
    );
    const log = await Deno.readTextFile(`${dir}/logs/bootstrap.log`);
    assert.match(log, /staging: on-stage hook probe wrote tools\/shout\/murmur\.yaml/);
    const md = await Deno.readTextFile(`${dir}/MURMUR.md`);
    assert.match(
      md,
      /- \*\*shout\*\* \(tool, written at staging: untrusted\) — Upper-case the input/,
    );
  } finally {
    await cap.close();
  }
});

Deno.test("a failing on-stage hook stops the launch: E-RUN-051, exit 1, no door, no record, no trace, bootstrap.log", async () => {
  const run = await spawnRun({
    manifest: {
      name: "broken",
      version: "0.1.0",
      hooks: [{ name: "gate", binding: "on-stage", command: ["./gate.sh"] }],
    },
    files: { "gate.sh": "#!/bin/sh\ncat >/dev/null\necho 'registry unreachable' >&2\nexit 3\n" },
    args: ["--task", "never runs"],
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 1, end.stderr);
    assert.equal(end.stdout, "", "no readiness line: the door never bound");
    assert.match(
      end.stderr,
      /^error\[E-RUN-051\]: on-stage hook gate failed: it exited with status 3; the launch stops\n {2}hint: see \S+\/logs\/bootstrap\.log and \S+\/logs\/hook-gate\.log\n$/m,
    );
    assert.deepEqual(await entries(`${run.home}/running`), [], "no running record");
    const [session] = await sessionDirs(run.dir);
    assert.deepEqual(await entries(session).then((e) => e.includes("trace.jsonl")), false);
    const log = await Deno.readTextFile(`${session}/logs/bootstrap.log`);
    assert.match(
      log,
      /staging: on-stage hook gate failed: it exited with status 3; the launch stops/,
    );
    const hookLog = await Deno.readTextFile(`${session}/logs/hook-gate.log`);
    assert.match(hookLog, /stderr: registry unreachable/);
  } finally {
    await run.close();
  }
});

Deno.test("an on-stage hook that writes a manifest mur cannot use stops the launch naming the file", async () => {
  const bad = JSON.stringify({
    write_manifests: [{ binary_name: "oops", content: "description: no command here\n" }],
  });
  const run = await spawnRun({
    manifest: {
      name: "badwrite",
      version: "0.1.0",
      hooks: [{
        name: "w",
        binding: "on-stage",
        commit_policy: "write-manifests",
        command: ["./w.sh"],
      }],
    },
    files: { "w.sh": probeHook(bad) },
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 1, end.stderr);
    assert.equal(end.stdout, "");
    assert.match(
      end.stderr,
      /error\[E-RUN-051\]: the tool manifest tools\/oops\/murmur\.yaml in the workdir cannot be used: error\[E-MAN-001\]: tools\/oops\/murmur\.yaml: missing required key 'command'/,
    );
    assert.deepEqual(await entries(`${run.home}/running`), []);
  } finally {
    await run.close();
  }
});

Deno.test("write_manifests from an on-stage hook whose commit_policy is none is discarded loudly", async () => {
  const run = await spawnRun({
    manifest: {
      name: "nopolicy",
      version: "0.1.0",
      hooks: [{ name: "w", binding: "on-stage", command: ["./w.sh"] }],
      inference: { driver: "scripted", script: "script.yaml" },
    },
    files: {
      "w.sh": probeHook(SHOUT),
      "script.yaml": "tasks:\n  - turns:\n      - steps: [{ tool_call: { name: shout } }]\n" +
        "      - steps: [{ text: done }]\n",
    },
    args: ["--task", "shout"],
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    assert.match(
      end.stderr,
      /\[murmur\] hook w answered write-manifests on on-stage, but only an on-stage hook with commit_policy: write-manifests can write tool manifests, and this one's commit_policy is none; the answer is discarded/,
    );
    const [session] = await sessionDirs(run.dir);
    const trace = await readTrace(session);
    const call = trace.find((e) => e.event_type === "tool_call")!;
    assert.equal(call.status, "error", "shout was never written, so it is not declared");
    assert.deepEqual(await entries(`${session}/tools`), []);
  } finally {
    await run.close();
  }
});

Deno.test("mur run -v prints a skills: line; MURMUR.md has Installed Tools and Installed Skills", async () => {
  const run = await spawnRun({
    manifest: {
      name: "verbose",
      version: "0.1.0",
      lifecycle: { task_acceptance: "none" },
      artifacts: SKILL_ARTIFACTS,
    },
    files: skillFiles(),
    args: ["-v", "--task", "hello"],
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    assert.ok(
      end.stdout.split("\n").includes("skills: style-guide, release-notes (runtime)"),
      end.stdout,
    );
    const [session] = await sessionDirs(run.dir);
    const md = await Deno.readTextFile(`${session}/MURMUR.md`);
    const skills = md.slice(md.indexOf("## Installed Skills"), md.indexOf("## Calling a Tool"));
    assert.match(skills, /- \*\*style-guide\*\* \(v1\.2\.0, skill\) — House style\n/);
    assert.match(
      skills,
      /- \*\*release-notes\*\* \(skill, appeared at runtime: untrusted\) — Release notes\n/,
    );
    assert.ok(md.indexOf("## Installed Tools") < md.indexOf("## Installed Skills"));
    assert.ok(md.indexOf("## Checkpointing") < md.indexOf("## Managing Artifacts at Runtime"));
    assert.equal(
      await Deno.readTextFile(`${session}/tools/style-guide/skill.md`),
      skillFiles()["artifacts/guide/skill.md"],
    );
  } finally {
    await run.close();
  }
});

Deno.test("an on-stage hook may not write a manifest under a declared tool's name, nor a bad name", async (t) => {
  for (
    const [name, why] of [
      ["sh", "binary_name 'sh' is the name of a tool or skill the capsule declares"],
      ["../x", "binary_name '../x' is not a tool name (1 to 64 letters, digits, '_' or '-')"],
    ]
  ) {
    await t.step(name, async () => {
      const answer = JSON.stringify({
        write_manifests: [{ binary_name: name, content: "description: d\ncommand: [true]\n" }],
      });
      const run = await spawnRun({
        manifest: {
          name: "taken",
          version: "0.1.0",
          capabilities: { shell: { allow: ["sh"] } },
          hooks: [{
            name: "w",
            binding: "on-stage",
            commit_policy: "write-manifests",
            command: ["./w.sh"],
          }],
        },
        files: { "w.sh": probeHook(answer) },
      });
      try {
        const end = await run.end(60_000);
        assert.equal(end.code, 1, end.stderr);
        assert.equal(end.stdout, "");
        assert.ok(
          end.stderr.includes(
            `error[E-RUN-051]: on-stage hook w answered write_manifests, but ${why}; the launch stops`,
          ),
          end.stderr,
        );
        const [session] = await sessionDirs(run.dir);
        assert.deepEqual(await entries(`${session}/tools`), []);
      } finally {
        await run.close();
      }
    });
  }
});
