/**
 * Every binding / commit_policy pair the valid-pairs table (docs/hooks.md "Answers and
 * policies") does not allow is refused at staging, before anything starts, with its message: as
 * `hooks:` entries and as hook artifacts (whose own murmur.yaml carries the pair), on real `mur
 * run` processes, and the table's "no binding" row (every binding; anything but deny). The table
 * is written out here on its own, not read from src/, so a change to
 * the code's table shows up as a red test.
 */
import assert from "node:assert/strict";
import { spawnRun } from "../run/helpers.ts";

/** The one policy besides `none` each binding honours (the reference runtime's table). */
const HONOURS: Record<string, string | null> = {
  "on-stage": "write-manifests",
  "on-session-start": null,
  "on-task-start": "seed-context",
  "on-inference": null,
  "on-tool-call": "deny",
  "on-shell": "deny",
  "on-compaction": "replace-context",
  "on-task-end": "reopen-task",
  "on-session-end": null,
};
const POLICIES = [
  "none",
  "write-manifests",
  "seed-context",
  "replace-context",
  "reopen-task",
  "deny",
];

interface Bad {
  binding: string;
  policy: string;
  mode?: "async";
  message: string;
}

function badCombinations(): Bad[] {
  const out: Bad[] = [];
  for (const [binding, honoured] of Object.entries(HONOURS)) {
    for (const policy of POLICIES) {
      if (policy === "none" || policy === honoured) continue;
      const honors = honoured
        ? `honors commit_policy '${honoured}'`
        : "honors only commit_policy 'none'";
      out.push({
        binding,
        policy,
        message:
          `commit_policy '${policy}' is not valid for binding '${binding}'; binding '${binding}' ${honors}`,
      });
    }
    // A committing policy needs a blocking hook; on-stage takes blocking hooks only.
    if (honoured) {
      out.push({
        binding,
        policy: honoured,
        mode: "async",
        message: binding === "on-stage"
          ? "binding 'on-stage' runs only blocking hooks (the launch waits for it); execution_mode: async is not valid for it"
          : `commit_policy '${honoured}' requires execution_mode: blocking; an async hook can only use commit_policy 'none'`,
      });
    }
  }
  out.push({
    binding: "on-stage",
    policy: "none",
    mode: "async",
    message:
      "binding 'on-stage' runs only blocking hooks (the launch waits for it); execution_mode: async is not valid for it",
  });
  // No binding: every binding. Anything but deny, and a committing policy only when blocking.
  out.push({
    binding: "",
    policy: "deny",
    message: "commit_policy 'deny' requires an explicit binding: 'on-shell' or 'on-tool-call'",
  });
  out.push({
    binding: "",
    policy: "reopen-task",
    mode: "async",
    message:
      "commit_policy 'reopen-task' requires execution_mode: blocking; an async hook can only use commit_policy 'none'",
  });
  return out;
}

const BAD = badCombinations();

Deno.test("the table: 39 invalid pairs, absent + deny, and 8 async refusals", () => {
  // 9 bindings × 5 committing policies, minus the 6 that a binding honours; then no binding.
  assert.equal(BAD.filter((b) => !b.mode).length, 40);
  assert.equal(BAD.filter((b) => b.mode).length, 8);
});

Deno.test("hooks: entries: every invalid pair is refused with its message, nothing started", async () => {
  const run = await spawnRun({
    manifest: {
      name: "pairs",
      version: "0.1.0",
      hooks: BAD.map((b, i) => ({
        name: `h${i}`,
        ...(b.binding && { binding: b.binding }),
        commit_policy: b.policy,
        ...(b.mode && { execution_mode: b.mode }),
        command: ["true"],
      })),
    },
    args: ["--task", "never"],
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 1, end.stderr);
    assert.equal(end.stdout, "");
    const lines = end.stderr.split("\n");
    BAD.forEach((b, i) => {
      const want = `error[E-MAN-003]: hooks[${i}] (h${i}): ${b.message}`;
      assert.ok(lines.includes(want), `missing: ${want}\n${end.stderr}`);
    });
    assert.equal(lines.filter((l) => l.startsWith("error[")).length, BAD.length, end.stderr);
    // Refused before the workdir: nothing of a session exists.
    await assert.rejects(Deno.stat(`${run.dir}/workdir`), Deno.errors.NotFound);
  } finally {
    await run.close();
  }
});

Deno.test("hook artifacts: every invalid pair in the artifact's own murmur.yaml is refused with its message", async () => {
  const files: Record<string, string> = {};
  BAD.forEach((b, i) => {
    files[`hooks/a${i}/murmur.yaml`] = `${
      b.binding ? `binding: ${b.binding}\n` : ""
    }commit_policy: ${b.policy}\n${
      b.mode ? `execution_mode: ${b.mode}\n` : ""
    }command: [./hook.sh]\n`;
    files[`hooks/a${i}/hook.sh`] = "#!/bin/sh\necho {}\n";
  });
  const run = await spawnRun({
    manifest: {
      name: "artpairs",
      version: "0.1.0",
      artifacts: [
        ...BAD.map((_, i) => ({
          name: `a${i}`,
          version: "2.0.0",
          runtime: "hook",
          source: `hooks/a${i}`,
          local_source: true,
        })),
      ],
    },
    files,
    args: ["--task", "never"],
  });
  try {
    const end = await run.end(60_000);
    assert.equal(end.code, 1, end.stderr);
    assert.equal(end.stdout, "");
    const lines = end.stderr.split("\n");
    BAD.forEach((b, i) => {
      const want = `error[E-MAN-003]: hook a${i}@2.0.0 invalid config: ${b.message}`;
      assert.ok(lines.includes(want), `missing: ${want}\n${end.stderr}`);
    });
    assert.equal(lines.filter((l) => l.startsWith("error[")).length, BAD.length, end.stderr);
    await assert.rejects(Deno.stat(`${run.dir}/workdir`), Deno.errors.NotFound);
  } finally {
    await run.close();
  }
});
