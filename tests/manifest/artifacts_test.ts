/**
 * `artifacts:` (docs/manifest.md "artifacts"): what loads, and every refusal with its code and
 * exact message (the key path, or the artifact's own file and key). The folders are real files in
 * a temp capsule; the loader is the one `mur run` calls.
 */
import assert from "node:assert/strict";
import { BASE, load, loadError } from "./helpers.ts";

const SKILL = { "s/skill.md": "# Use tabs\n\nAlways tabs.\n" };
const TOOL = {
  "t/murmur.yaml":
    "description: Count\ninput_schema: { type: object, required: [text] }\ncommand: [./run.sh]\n",
  "t/run.sh": "#!/bin/sh\necho ok\n",
};
const HOOK = {
  "h/murmur.yaml": "binding: on-task-end\ncommit_policy: reopen-task\ncommand: [./hook.sh]\n",
  "h/hook.sh": "#!/bin/sh\necho {}\n",
};

const art = (entries: string) => `${BASE}artifacts:\n${entries}`;

Deno.test("a skill, a packaged tool and a hook artifact load into skills, tools and hooks", async () => {
  const { manifest: m } = await load(
    art(
      "  - { name: tabs, version: '2', runtime: skill, source: s }\n" +
        "  - { name: count, version: '1.0.0', source: t, local_source: true, config: { unit: words, n: 2 } }\n" +
        "  - { name: gate, runtime: hook, source: h, local_source: true, config: { strict: true } }\n",
    ),
    {},
    { ...SKILL, ...TOOL, ...HOOK },
  );
  assert.deepEqual(
    m.skills?.map((s) => [s.name, s.version, s.description, s.text, s.promptBound]),
    [
      ["tabs", "2", "Use tabs", SKILL["s/skill.md"], false],
    ],
  );
  const tool = m.tools.find((t) => t.name === "count");
  assert.ok(tool && tool.kind === "command");
  assert.equal(tool.description, "Count");
  assert.deepEqual(tool.inputSchema, { type: "object", required: ["text"] });
  assert.match(tool.command[0], /\/t\/run\.sh$/);
  assert.deepEqual(tool.artifact, { version: "1.0.0", origin: "operator" });
  assert.deepEqual(tool.env, { MURMUR_ARTIFACT_CONFIG: '{"unit":"words","n":2}' });
  const hook = m.hooks.find((h) => h.name === "gate");
  assert.deepEqual(
    hook && [hook.binding, hook.commitPolicy, hook.executionMode, hook.env],
    ["on-task-end", "reopen-task", "blocking", { MURMUR_ARTIFACT_CONFIG: '{"strict":true}' }],
  );
  assert.equal(m.inference.systemPromptSource, "none");
});

Deno.test("inference.system_prompt_artifact: the skill's text is the prompt and the skill is bound", async () => {
  const { manifest: m } = await load(
    `${BASE}inference: { system_prompt_artifact: tabs }\nartifacts:\n  - { name: tabs, runtime: skill, source: s }\n`,
    {},
    SKILL,
  );
  assert.equal(m.inference.systemPrompt, SKILL["s/skill.md"]);
  assert.equal(m.inference.systemPromptSource, "manifest");
  assert.equal(m.inference.systemPromptArtifact, "tabs");
  assert.equal(m.skills?.[0].promptBound, true);
});

type Case = [yaml: string, code: string, message: string, files?: Record<string, string>];

const CASES: Case[] = [
  [
    art("  - { name: d, runtime: driver, source: s }\n"),
    "E-MAN-003",
    "artifacts[0].runtime: 'driver' is not supported: mur runs tool, hook, skill artifacts; mur's model drivers are built in: name one with inference.driver",
  ],
  [
    art("  - { name: w, runtime: wasm, source: s }\n"),
    "E-MAN-003",
    "artifacts[0].runtime: 'wasm' is not supported: mur runs tool, hook, skill artifacts; mur runs no WASM components: package the tool as a command (runtime: tool)",
  ],
  [
    art("  - { name: n, runtime: native, source: s }\n"),
    "E-MAN-003",
    "artifacts[0].runtime: 'native' is not supported: mur runs tool, hook, skill artifacts; mur stages no native binaries: package the program as a command tool (runtime: tool)",
  ],
  [
    art("  - { name: x, runtime: plugin, source: s }\n"),
    "E-MAN-003",
    "artifacts[0].runtime: 'plugin' is not supported: mur runs tool, hook, skill artifacts",
  ],
  [
    art("  - { name: count, version: '1' }\n"),
    "E-MAN-001",
    "missing required key 'artifacts[0].source': mur has no artifact registry: name the artifact's folder (relative to the manifest's folder) with source: and local_source: true",
  ],
  [
    art("  - { name: count, source: t }\n"),
    "E-MAN-003",
    "artifacts[0]: artifact 'count' declares 'source:' but does not declare 'local_source: true' (runtime: tool)",
  ],
  [
    art("  - { name: tabs, runtime: skill, source: s, local_source: false }\n"),
    "E-MAN-003",
    "artifacts[0]: artifact 'tabs' declares 'source:' but does not declare 'local_source: true' (runtime: skill)",
  ],
  [
    art("  - { name: tabs, runtime: skill, source: nowhere }\n"),
    "E-IO-001",
    "artifacts[0].source: skill source path not found: <dir>/nowhere",
  ],
  [
    art("  - { name: tabs, runtime: skill, source: t }\n"),
    "E-IO-001",
    "artifacts[0] (tabs): skill text not found: <dir>/t/skill.md",
    TOOL,
  ],
  [
    art("  - { name: count, source: s, local_source: true }\n"),
    "E-IO-001",
    "artifacts[0] (count): the tool's own murmur.yaml not found: <dir>/s/murmur.yaml",
    SKILL,
  ],
  [
    art("  - { name: count, source: t, local_source: true, config: [1, 2] }\n"),
    "E-CAP-010",
    "artifacts[0].config: must be a mapping of keys (it reaches the artifact as MURMUR_ARTIFACT_CONFIG, one JSON object)",
  ],
  [
    art(
      `  - { name: count, source: t, local_source: true, config: { blob: "${
        "x".repeat(65_530)
      }" } }\n`,
    ),
    "E-CAP-010",
    "artifacts[0].config: is 65541 bytes as JSON; MURMUR_ARTIFACT_CONFIG holds at most 65536",
  ],
  [
    art("  - { name: request-input, source: t, local_source: true }\n"),
    "E-CAP-013",
    "artifacts[0].name: 'request-input' is the name of a tool the runtime provides itself",
  ],
  [
    art(
      "  - { name: tabs, runtime: skill, source: s, capabilities: { shell: { allow: [ls] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities: a skill runs nothing, so it takes no capabilities",
  ],
  [
    art("  - { name: count, source: t, local_source: true, capabilities: {} }\n"),
    "E-MAN-003",
    "artifacts[0].capabilities: per-artifact capabilities are not supported: mur runs a packaged tool as a command under the capsule's own capabilities:",
  ],
  [
    art("  - { name: count, source: t, local_source: true, gateway: { endpoint: x } }\n"),
    "E-MAN-003",
    "artifacts[0].gateway: a credential gateway belongs to a driver artifact; mur's drivers are built in (inference.driver, inference.api_key)",
  ],
  [
    art("  - { name: count, source: t, local_source: true, prompt_payload: true }\n"),
    "E-MAN-003",
    "artifacts[0].prompt_payload: only a skill carries a prompt payload (its skill.md); this artifact's runtime is tool",
  ],
  [
    art("  - { name: tabs, runtime: skill, source: s, config: { a: 1 } }\n"),
    "E-MAN-003",
    "artifacts[0].config: a skill runs nothing, so it takes no config",
  ],
  [
    art("  - { name: 'two words', runtime: skill, source: s }\n"),
    "E-MAN-003",
    "artifacts[0].name: 'two words' must be 1 to 64 letters, digits, '_' or '-' (the model calls it by this name)",
  ],
  [
    `${BASE}capabilities: { shell: { allow: [ls] } }\nartifacts:\n  - { name: ls, runtime: skill, source: s }\n`,
    "E-MAN-003",
    "artifacts[0].name: 'ls' is already a shell tool from capabilities.shell.allow",
  ],
  [
    `${BASE}tools:\n  - { name: count, description: d, command: [x] }\nartifacts:\n  - { name: count, source: t, local_source: true }\n`,
    "E-MAN-003",
    "artifacts[0].name: 'count' is already declared under tools:",
  ],
  [
    `${BASE}hooks:\n  - { name: gate, binding: on-task-end, command: [x] }\nartifacts:\n  - { name: gate, runtime: hook, source: h, local_source: true }\n`,
    "E-MAN-003",
    "artifacts[0].name: 'gate' is already declared under hooks:",
  ],
  [
    art(
      "  - { name: tabs, runtime: skill, source: s }\n  - { name: tabs, runtime: skill, source: s }\n",
    ),
    "E-MAN-003",
    "artifacts[1]: 'tabs' is declared twice (also artifacts[0])",
  ],
  [
    `${BASE}inference: { system_prompt_artifact: nope }\n`,
    "E-MAN-003",
    "inference.system_prompt_artifact: 'nope' names no entry of artifacts:",
  ],
  [
    `${BASE}inference: { system_prompt_artifact: count }\nartifacts:\n  - { name: count, source: t, local_source: true }\n`,
    "E-MAN-003",
    "inference.system_prompt_artifact: 'count' is a tool artifact; only a skill's text can be the system prompt",
  ],
  [
    `${BASE}inference: { system_prompt_artifact: tabs }\nartifacts:\n  - { name: tabs, runtime: skill, source: s, prompt_payload: false }\n`,
    "E-MAN-003",
    "inference.system_prompt_artifact: 'tabs' declares prompt_payload: false",
  ],
  [
    `${BASE}inference: { system_prompt: hi, system_prompt_artifact: tabs }\nartifacts:\n  - { name: tabs, runtime: skill, source: s }\n`,
    "E-MAN-003",
    "inference.system_prompt_artifact: cannot be set together with inference.system_prompt; keep one",
  ],
  [
    art("  - { name: count, source: t, local_source: true }\n"),
    "E-MAN-003",
    "artifacts[0] (count): t/murmur.yaml: (top level): unknown key 'colour'",
    { ...TOOL, "t/murmur.yaml": `${TOOL["t/murmur.yaml"]}colour: red\n` },
  ],
  [
    art("  - { name: count, source: t, local_source: true }\n"),
    "E-MAN-003",
    "artifacts[0] (count): t/murmur.yaml: name: 'other' is not the tool's name 'count'",
    { ...TOOL, "t/murmur.yaml": `name: other\n${TOOL["t/murmur.yaml"]}` },
  ],
  [
    art("  - { name: count, source: t, local_source: true }\n"),
    "E-IO-001",
    "artifacts[0] (count): t/murmur.yaml: command: program not found: <dir>/t/gone.sh",
    { "t/murmur.yaml": "description: d\ncommand: [./gone.sh]\n" },
  ],
  [
    art("  - { name: gate, runtime: hook, source: h, local_source: true }\n"),
    "E-MAN-003",
    "hook gate@local invalid config: commit_policy 'deny' is not valid for binding 'on-task-end'; binding 'on-task-end' honors commit_policy 'reopen-task'",
    {
      ...HOOK,
      "h/murmur.yaml": "binding: on-task-end\ncommit_policy: deny\ncommand: [./hook.sh]\n",
    },
  ],
];

Deno.test("every artifacts: refusal, with its code and message", async (t) => {
  for (const [yaml, code, message, files] of CASES) {
    await t.step(message, async () => {
      const all = { ...SKILL, ...TOOL, ...HOOK, ...files };
      let caught: unknown;
      try {
        await load(yaml, {}, all);
      } catch (e) {
        caught = e;
      }
      assert.ok(caught instanceof Error, `loaded: ${yaml}`);
      const got = caught as Error & { code: string };
      // The temp folder's path varies: compare with it written as <dir>.
      assert.equal(got.message.replace(/\/[^\s]*mur-manifest-[^/\s]*/g, "<dir>"), message);
      assert.equal(got.code, code);
    });
  }
});

Deno.test("every artifacts: refusal of one manifest is reported at once", async () => {
  await loadError(
    art(
      "  - { name: d, runtime: driver, source: s }\n  - { name: count, source: t }\n",
    ),
    "E-MAN-003",
    "artifacts[0].runtime: 'driver' is not supported: mur runs tool, hook, skill artifacts; mur's model drivers are built in: name one with inference.driver; artifacts[1]: artifact 'count' declares 'source:' but does not declare 'local_source: true' (runtime: tool)",
  );
});
