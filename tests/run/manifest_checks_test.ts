/**
 * Mistakes caught at load, not at the model's first call, as `mur run` prints them: a misspelt
 * section or key whose real one is absent is an error (E-MAN-004), one beside its real one gets
 * "did you mean", a capsule with no inference block says it runs the scripted model, a
 * shell binary or a tool's or hook's program missing from PATH is named, a policy hook that
 * cannot see shell calls is named, and every manifest error is reported at once.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { writeCapsule } from "../helpers/capsule.ts";
import { runMur } from "../cli/helpers.ts";

async function run(yaml: string, extra: string[] = []) {
  const dir = await writeCapsule({ manifest: {} });
  try {
    await Deno.writeTextFile(`${dir}/murmur.yaml`, yaml);
    return await runMur(["run", "--manifest", dir, "--task", "hello", ...extra], {
      MURMUR_HOME: `${dir}/home`,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const lines = (stderr: string, code: string) =>
  stderr.split("\n").filter((l) => l.startsWith(`warning[${code}]`));

Deno.test("a misspelt section is an error when the real one is absent: a provider config never runs scripted", async () => {
  const r = await run(`name: typo
version: "1"
inferance:
  driver: anthropic
  model: claude-haiku-4-5
lifecycel:
  after_task: exit
`);
  assertEquals(r.code, 1, r.stderr);
  assertEquals(r.stdout, "", "no session started");
  const errors = r.stderr.split("\n").filter((l) => l.startsWith("error["));
  assertEquals(errors, [
    "error[E-MAN-004]: murmur.yaml: 'inferance' is not a section mur knows, and 'inference' is missing: did you mean 'inference'? (a misspelt section would be ignored, leaving 'inference' at its defaults)",
    "error[E-MAN-004]: murmur.yaml: 'lifecycel' is not a section mur knows, and 'lifecycle' is missing: did you mean 'lifecycle'? (a misspelt section would be ignored, leaving 'lifecycle' at its defaults)",
  ]);
  assert.match(r.stderr, /\n {2}hint: fix the manifest at .*murmur\.yaml\n$/);
  assertEquals(
    lines(r.stderr, "W-MAN-001"),
    [],
    "nothing says the scripted model runs: nothing runs",
  );
});

Deno.test("a misspelt inference.driver is an error when there is no driver: the model keys never run scripted", async () => {
  const r = await run(`name: typo
version: "1"
inference:
  drivr: anthropic
  model: claude-haiku-4-5
`);
  assertEquals(r.code, 1, r.stderr);
  assertEquals(r.stdout, "");
  assertEquals(r.stderr.split("\n").filter((l) => l.startsWith("error[")), [
    "error[E-MAN-004]: murmur.yaml: 'inference.drivr' is not a key mur knows, and 'inference.driver' is missing: did you mean 'inference.driver'? (a misspelt key would be ignored, leaving 'inference.driver' at its default)",
  ]);
});

Deno.test("a near-miss inside a known section is an error too: a misspelt script or shell list never runs on the defaults", async () => {
  const r = await run(`name: typo
version: "1"
inference:
  driver: scripted
  scirpt: script.yaml
capabilities:
  shell:
    allw: [bash]
`);
  assertEquals(r.code, 1, r.stderr);
  assertEquals(r.stdout, "", "no session started");
  assertEquals(r.stderr.split("\n").filter((l) => l.startsWith("error[")), [
    "error[E-MAN-004]: murmur.yaml: 'inference.scirpt' is not a key mur knows, and 'inference.script' is missing: did you mean 'inference.script'? (a misspelt key would be ignored, leaving 'inference.script' at its default)",
    "error[E-MAN-004]: murmur.yaml: 'capabilities.shell.allw' is not a key mur knows, and 'capabilities.shell.allow' is missing: did you mean 'capabilities.shell.allow'? (a misspelt key would be ignored, leaving 'capabilities.shell.allow' at its default)",
  ]);
});

Deno.test("a near-miss beside its real section or key is a warning and the session runs", async () => {
  const r = await run(`name: typo
version: "1"
inference:
  driver: scripted
inferance:
  driver: anthropic
lifecycle:
  after_task: exit
  after_tasks: exit
`);
  assertEquals(
    lines(r.stderr, "W-SEC-019").sort(),
    [
      "warning[W-SEC-019]: murmur.yaml: unknown key 'inferance' is ignored; did you mean 'inference'?",
      "warning[W-SEC-019]: murmur.yaml: unknown key 'lifecycle.after_tasks' is ignored; did you mean 'after_task'?",
    ].sort(),
  );
  assert.doesNotMatch(r.stderr, /error\[/);
  assert.match(r.stdout, /\nstatus: ok\n$/);
});

Deno.test("an unknown top-level key far from every section stays a warning", async () => {
  const r = await run(`name: far
version: "1"
inference:
  driver: scripted
x-notes: mine
`);
  assertEquals(lines(r.stderr, "W-SEC-019"), [
    "warning[W-SEC-019]: murmur.yaml: unknown key 'x-notes' is ignored",
  ]);
  assert.match(r.stdout, /\nstatus: ok\n$/);
});

Deno.test("a shell binary, a tool's program and a hook's program not on PATH are named at load", async () => {
  const r = await run(`name: missing
version: "1"
inference:
  driver: scripted
capabilities:
  shell:
    allow: [sh, no-such-binary-zz]
tools:
  - name: weather
    description: weather
    command: [no-such-tool-zz, --city]
hooks:
  - name: gate
    binding: on-task-end
    command: [no-such-hook-zz]
  - name: fine
    binding: on-task-end
    command: "echo {}"
`);
  assertEquals(lines(r.stderr, "W-MAN-002"), [
    "warning[W-MAN-002]: murmur.yaml: capabilities.shell.allow[1]: 'no-such-binary-zz' is not on PATH, so every call of the no-such-binary-zz tool will fail; install it or drop it from the list",
    "warning[W-MAN-002]: murmur.yaml: tools[0].command: the program 'no-such-tool-zz' is not on PATH, so every call of it will fail; install it or give its path (relative to the manifest's folder)",
    "warning[W-MAN-002]: murmur.yaml: hooks[0].command: the program 'no-such-hook-zz' is not on PATH, so every call of it will fail; install it or give its path (relative to the manifest's folder)",
  ]);
  assertEquals(lines(r.stderr, "W-MAN-001"), [], "driver: scripted is declared");
});

Deno.test("a policy hook on on-tool-call only, beside shell tools, is warned: shell calls fire on-shell", async () => {
  const yaml = (bindings: string[]) =>
    `name: guard
version: "1"
inference:
  driver: scripted
capabilities:
  shell:
    allow: [sh]
hooks:
${
      bindings.map((b, i) =>
        `  - name: guard${i}\n    binding: ${b}\n    commit_policy: deny\n    command: "echo {}"\n`
      ).join("")
    }`;
  const only = await run(yaml(["on-tool-call"]));
  assertEquals(lines(only.stderr, "W-MAN-003"), [
    "warning[W-MAN-003]: murmur.yaml: the policy hook 'guard0' on on-tool-call will not see calls of the shell tools (sh): a shell call fires on-shell only. Bind a policy hook to on-shell too to guard them",
  ]);
  const both = await run(yaml(["on-tool-call", "on-shell"]));
  assertEquals(lines(both.stderr, "W-MAN-003"), []);
});

Deno.test("every manifest error is reported at once, then the hint; nothing starts", async () => {
  const r = await run(`name: "bad name!"
version: 1
inference:
  max_turns: 0
lifecycle:
  after_task: never
hooks:
  - name: a
    binding: on-shell
    commit_policy: reopen-task
    command: [x]
`);
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  const errors = r.stderr.split("\n").filter((l) => l.startsWith("error["));
  assertEquals(errors, [
    "error[E-MAN-003]: name: 'bad name!' must be letters, digits, '.', '_' or '-', starting with a letter or digit",
    'error[E-MAN-003]: version: must be a string; quote it, e.g. version: "0.1.0"',
    "error[E-MAN-003]: inference.max_turns: must be an integer > 0",
    "error[E-MAN-003]: lifecycle.after_task: 'never' is not one of exit, sleep",
  ]);
  assert.match(r.stderr, /\n {2}hint: fix the manifest at .*murmur\.yaml\n$/);
});
