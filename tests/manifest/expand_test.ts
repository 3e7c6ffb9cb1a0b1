/** `${NAME}` expansion in every string value, the `$${` escape, and unset variables. */
import assert from "node:assert/strict";
import { expandEnv } from "../../src/manifest/mod.ts";
import { MurError } from "../../src/errors.ts";
import { BASE, load, loadError } from "./helpers.ts";

Deno.test("set variables expand anywhere a string is: nested maps, lists, mid-text", async () => {
  const { manifest } = await load(
    `name: \${CAPSULE}\nversion: "\${MAJOR}.\${MINOR}"\n` +
      `inference:\n  driver: anthropic\n  model: \${MODEL}\n  api_key: "Bearer-\${KEY}"\n` +
      `lifecycle:\n  done_check:\n    command: "test -d \${DIR}"\n` +
      `capabilities:\n  shell:\n    allow: ["\${SHELL_BIN}"]\n` +
      `hooks:\n  - name: h\n    binding: on-task-end\n    command: ["\${PROG}", "--to=\${DIR}"]\n`,
    {
      CAPSULE: "weather-bot",
      MAJOR: "2",
      MINOR: "5",
      MODEL: "claude-haiku-4-5",
      KEY: "abc",
      DIR: "/tmp/x",
      SHELL_BIN: "bash",
      PROG: "echo",
    },
  );
  assert.equal(manifest.name, "weather-bot");
  assert.equal(manifest.version, "2.5");
  assert.equal(manifest.inference.model, "claude-haiku-4-5");
  assert.equal(manifest.inference.apiKey, "Bearer-abc");
  assert.equal(manifest.lifecycle.doneCheck?.command, "test -d /tmp/x");
  assert.deepEqual(manifest.capabilities.shell.allow, ["bash"]);
  assert.deepEqual(manifest.hooks[0].command, ["echo", "--to=/tmp/x"]);
});

Deno.test("an empty variable is set; its value is not expanded again", async () => {
  const { manifest } = await load(
    `${BASE}inference:\n  driver: anthropic\n  model: m\n  api_key: "\${EMPTY}"\n` +
      `  system_prompt: "\${NESTED}"\n`,
    { EMPTY: "", NESTED: "${OTHER}" },
  );
  assert.equal(manifest.inference.apiKey, "");
  assert.equal(manifest.inference.systemPrompt, "${OTHER}");
});

Deno.test("$${NAME} is the escape for a literal ${NAME}", async () => {
  const { manifest } = await load(
    `${BASE}lifecycle:\n  done_check:\n    command: "test -n $\${HOME} && echo \${WHO} $$ $\${"\n`,
    { WHO: "me" },
  );
  assert.equal(manifest.lifecycle.doneCheck?.command, "test -n ${HOME} && echo me $$ ${");
});

Deno.test("numbers may come from the environment", async () => {
  const { manifest } = await load(
    `${BASE}inference:\n  max_turns: \${TURNS}\n  idle_timeout_secs: \${IDLE}\n` +
      `network:\n  internal_port: \${PORT}\n`,
    { TURNS: "4", IDLE: "2.5", PORT: "52222" },
  );
  assert.equal(manifest.inference.maxTurns, 4);
  assert.equal(manifest.inference.idleTimeoutSecs, 2.5);
  assert.equal(manifest.network.internalPort, 52222);
  await loadError(
    `${BASE}inference:\n  max_turns: \${TURNS}\n`,
    "E-MAN-003",
    "inference.max_turns: must be an integer > 0",
    { TURNS: "many" },
  );
});

Deno.test("an unset variable is E-MAN-003 naming the key path and the variable", async (t) => {
  await t.step("in a map value", async () => {
    const err = await loadError(
      `${BASE}inference:\n  driver: anthropic\n  model: m\n  api_key: \${ANTHROPIC_API_KEY}\n`,
      "E-MAN-003",
      "inference.api_key: ${ANTHROPIC_API_KEY} is not set in the environment",
      { OTHER: "x" },
    );
    assert.equal(
      err.hint,
      "set ANTHROPIC_API_KEY in mur's environment, or write $${ANTHROPIC_API_KEY} for the literal text",
    );
  });
  await t.step("in a list inside a list entry", async () => {
    await loadError(
      `${BASE}hooks:\n  - name: h\n    binding: on-task-end\n    command: [x, "\${A}", "\${B}"]\n`,
      "E-MAN-003",
      "hooks[0].command[2]: ${B} is not set in the environment",
      { A: "a" },
    );
  });
  await t.step("under an unknown key it is ignored with the key", async () => {
    const { warnings } = await load(`${BASE}extras:\n  token: \${NOT_SET}\n`);
    assert.deepEqual(warnings.filter((w) => w.startsWith("warning[W-SEC-019]")), [
      "warning[W-SEC-019]: murmur.yaml: unknown key 'extras' is ignored",
    ]);
  });
});

Deno.test("a ${…} that is not a plain variable name is E-MAN-003", async (t) => {
  for (const ref of ["${HOME:-/root}", "${}", "${1X}", "${UNCLOSED"]) {
    await t.step(ref, async () => {
      await loadError(
        `${BASE}inference:\n  system_prompt: "a ${ref} b"\n`,
        "E-MAN-003",
        `inference.system_prompt: '${
          ref === "${UNCLOSED" ? "${UNCLOSED b" : ref
        }' is not a variable reference mur expands; write \${NAME} (letters, digits, _), or $\${ for a literal '\${'`,
        { HOME: "/root" },
      );
    });
  }
});

Deno.test("expandEnv leaves non-strings and keys alone", () => {
  const out = expandEnv(
    { "${K}": ["${V}", 3, true, { n: null }] },
    { K: "key", V: "value" },
    [],
  );
  assert.deepEqual(out, { "${K}": ["value", 3, true, { n: null }] });
  assert.throws(() => expandEnv({ a: ["${NOPE}"] }, {}, []), MurError);
});
