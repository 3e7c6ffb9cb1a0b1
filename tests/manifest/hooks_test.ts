/**
 * Hook binding × commit_policy pairs (docs/hooks.md "Answers and policies"): every pair of the 8
 * bindings and 5 policies, valid ones load, invalid ones are E-MAN-003 with the reference's
 * wording.
 */
import assert from "node:assert/strict";
import { BASE, load, loadError } from "./helpers.ts";

const BINDINGS = [
  "on-session-start",
  "on-task-start",
  "on-inference",
  "on-tool-call",
  "on-shell",
  "on-compaction",
  "on-task-end",
  "on-session-end",
  "on-approval",
];
const POLICIES = ["none", "seed-context", "replace-context", "reopen-task", "deny"];

/** The committing policy each binding honors, written out from the reference table. */
const HONORS: Record<string, string | undefined> = {
  "on-task-start": "seed-context",
  "on-tool-call": "deny",
  "on-shell": "deny",
  "on-compaction": "replace-context",
  "on-task-end": "reopen-task",
};

function hookYaml(binding: string, policy: string, mode = "blocking"): string {
  return `${BASE}hooks:\n  - name: gate\n    binding: ${binding}\n    execution_mode: ${mode}\n` +
    `    commit_policy: ${policy}\n    command: [sh, -c, "echo {}"]\n`;
}

Deno.test("every binding/commit_policy pair: valid pairs load, others are E-MAN-003", async (t) => {
  let valid = 0;
  for (const binding of BINDINGS) {
    for (const policy of POLICIES) {
      const ok = policy === "none" || HONORS[binding] === policy;
      await t.step(`${binding} + ${policy} → ${ok ? "valid" : "invalid"}`, async () => {
        if (ok) {
          valid++;
          const { manifest } = await load(hookYaml(binding, policy));
          assert.deepEqual(manifest.hooks, [{
            name: "gate",
            binding,
            executionMode: "blocking",
            commitPolicy: policy,
            command: ["sh", "-c", "echo {}"],
          }]);
          return;
        }
        const honors = HONORS[binding]
          ? `honors commit_policy '${HONORS[binding]}'`
          : "honors only commit_policy 'none'";
        await loadError(
          hookYaml(binding, policy),
          "E-MAN-003",
          `hooks[0] (gate): commit_policy '${policy}' is not valid for binding '${binding}'; binding '${binding}' ${honors}`,
        );
      });
    }
  }
  // 9 bindings with none (on-approval among them), plus the 5 committing pairs.
  assert.equal(valid, 14);
});

Deno.test("the reference's own example message for review-gate", async () => {
  await loadError(
    `${BASE}hooks:\n  - name: ok\n    binding: on-task-start\n    command: [x]\n` +
      `  - name: review-gate\n    binding: on-task-end\n    commit_policy: replace-context\n` +
      `    command: [x]\n`,
    "E-MAN-003",
    "hooks[1] (review-gate): commit_policy 'replace-context' is not valid for binding 'on-task-end'; binding 'on-task-end' honors commit_policy 'reopen-task'",
  );
});

Deno.test("committing policies require execution_mode: blocking", async (t) => {
  for (const [binding, policy] of Object.entries(HONORS)) {
    await t.step(`${binding} + ${policy} async`, async () => {
      await loadError(
        hookYaml(binding, policy!, "async"),
        "E-MAN-003",
        `hooks[0] (gate): commit_policy '${policy}' requires execution_mode: blocking; an async hook can only use commit_policy 'none'`,
      );
    });
  }
  await t.step("async observers are fine on every binding", async () => {
    for (const binding of BINDINGS) {
      const { manifest } = await load(hookYaml(binding, "none", "async"));
      assert.equal(manifest.hooks[0].executionMode, "async");
    }
  });
});

Deno.test("hook defaults: blocking, commit_policy none; declaration order kept", async () => {
  const { manifest } = await load(
    `${BASE}hooks:\n  - name: b\n    binding: on-task-end\n    command: [x]\n` +
      `  - name: a\n    binding: on-task-end\n    command: [y]\n`,
  );
  assert.deepEqual(manifest.hooks.map((h) => [h.name, h.executionMode, h.commitPolicy]), [
    ["b", "blocking", "none"],
    ["a", "blocking", "none"],
  ]);
});

Deno.test("output: data is a blocking on-inference hook's; anywhere else E-MAN-003", async (t) => {
  const yaml = (binding: string | null, mode: string) =>
    `${BASE}hooks:\n  - name: gate\n${binding ? `    binding: ${binding}\n` : ""}` +
    `    execution_mode: ${mode}\n    output: data\n    command: [x]\n`;
  await t.step("on-inference blocking loads", async () => {
    const { manifest } = await load(yaml("on-inference", "blocking"));
    assert.equal(manifest.hooks[0].output, "data");
  });
  await t.step("output: text (the default) leaves it unset", async () => {
    const { manifest } = await load(
      `${BASE}hooks:\n  - name: gate\n    binding: on-inference\n    output: text\n    command: [x]\n`,
    );
    assert.equal(manifest.hooks[0].output, undefined);
  });
  for (const binding of BINDINGS.filter((b) => b !== "on-inference")) {
    await t.step(`${binding} → E-MAN-003`, async () => {
      await loadError(
        yaml(binding, "blocking"),
        "E-MAN-003",
        `hooks[0] (gate): output 'data' needs binding: on-inference (only a blocking on-inference hook's artifact answer is published), not '${binding}'`,
      );
    });
  }
  await t.step("unbound → E-MAN-003", async () => {
    await loadError(
      yaml(null, "blocking"),
      "E-MAN-003",
      "hooks[0] (gate): output 'data' needs binding: on-inference (only a blocking on-inference hook's artifact answer is published)",
    );
  });
  await t.step("async → E-MAN-003", async () => {
    await loadError(
      yaml("on-inference", "async"),
      "E-MAN-003",
      "hooks[0] (gate): output 'data' needs execution_mode: blocking (an async hook's answer has no task turn to join)",
    );
  });
});
