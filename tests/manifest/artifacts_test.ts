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

Deno.test("artifacts: a tool's and a hook's grants load as their processes' narrowing; a hook without one is default-deny", async () => {
  const { manifest: m } = await load(
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { env: { allow: [A, B] }, filesystem: { read_only: ['./docs/', notes] } } }\n" +
        "  - { name: wide, source: t, local_source: true }\n" +
        "  - { name: gate, runtime: hook, source: h, local_source: true }\n" +
        "  - { name: open, runtime: hook, source: h, local_source: true, capabilities: { env: { allow: [C] } } }\n",
    ),
    {},
    { ...TOOL, ...HOOK },
  );
  const tool = (name: string) => m.tools.find((t) => t.name === name);
  const count = tool("count");
  assert.ok(count?.kind === "command");
  assert.deepEqual([count.hostEnv, count.readOnly], [["A", "B"], ["docs", "notes"]]);
  const wide = tool("wide");
  assert.ok(wide?.kind === "command");
  assert.deepEqual([wide.hostEnv, wide.readOnly], [undefined, undefined]);
  assert.deepEqual(m.hooks.map((h) => [h.name, h.hostEnv]), [["gate", []], ["open", ["C"]]]);
});

/** A config whose compact JSON is exactly `bytes` long, its text 3-byte characters to the end. */
function configOfBytes(bytes: number): string {
  // {"t":"…"} is 8 bytes around the text; the text is ASCII to make the rest a multiple of 3.
  const room = bytes - 8;
  const text = "x".repeat(room % 3) + "語".repeat(Math.floor(room / 3));
  return JSON.stringify({ t: text });
}

Deno.test("artifacts: config is measured in UTF-8 bytes: 65,536 bytes of multi-byte text load, 65,537 do not", async () => {
  const at = (bytes: number) =>
    art(`  - { name: count, source: t, local_source: true, config: ${configOfBytes(bytes)} }\n`);
  const exact = configOfBytes(65_536);
  assert.equal(new TextEncoder().encode(exact).length, 65_536);
  // In characters it is a third of that: a count of characters would let far more through.
  assert.ok(exact.length < 22_000);
  const { manifest: m } = await load(at(65_536), {}, TOOL);
  const tool = m.tools.find((t) => t.name === "count");
  assert.ok(tool?.kind === "command");
  assert.equal(tool.env?.MURMUR_ARTIFACT_CONFIG, exact);
  await assert.rejects(
    () => load(at(65_537), {}, TOOL),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, "E-CAP-010");
      assert.match(
        e.message,
        /^artifacts\[0\]\.config: is 65537 bytes as JSON; MURMUR_ARTIFACT_CONFIG holds at most 65536$/,
      );
      return true;
    },
  );
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
    "artifacts[0].capabilities: a skill runs no process, so it takes no capabilities",
  ],
  [
    art("  - { name: tabs, runtime: skill, source: s, capabilities: {} }\n"),
    "E-MAN-003",
    "artifacts[0].capabilities: a skill runs no process, so it takes no capabilities",
  ],
  [
    art("  - { name: count, source: t, local_source: true, capabilities: [env] }\n"),
    "E-MAN-003",
    "artifacts[0].capabilities: must be a mapping (a tool artifact's capabilities take env.allow and filesystem.read_only)",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { network: { allow: [example.com] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.network: not supported on an artifact: the network is confined capsule-wide (capabilities.network, docs/containment.md); a tool artifact's capabilities take env.allow and filesystem.read_only",
  ],
  [
    art(
      "  - { name: gate, runtime: hook, source: h, local_source: true, capabilities: { task_io: { read: true } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.task_io: not supported on an artifact: mur hands a hook its event on stdin; there is no task_io grant to read more; a hook artifact's capabilities take env.allow",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { shell: { allow: [ls] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.shell: not supported on an artifact: shell tools are the capsule's own (capabilities.shell.allow); a tool artifact's capabilities take env.allow and filesystem.read_only",
  ],
  [
    art("  - { name: count, source: t, local_source: true, capabilities: { colour: red } }\n"),
    "E-MAN-003",
    "artifacts[0].capabilities.colour: unknown key; a tool artifact's capabilities take env.allow and filesystem.read_only",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { env: { deny: [X] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.env.deny: unknown key; a tool artifact's capabilities take env.allow and filesystem.read_only",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { env: { allow: HOME } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.env.allow: must be a list of environment variable names",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { env: { allow: [OK, 'AWS_*'] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.env.allow[1]: 'AWS_*' is not an environment variable name (letters, digits and '_', not starting with a digit; no patterns)",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { env: { allow: [MURMUR_DOOR_TOKEN] } } }\n",
    ),
    "E-CAP-016",
    "artifacts[0].capabilities.env.allow[0]: 'MURMUR_DOOR_TOKEN' widens the artifact's grant beyond the capsule's: mur hands the door token to no process it spawns",
  ],
  [
    art(
      "  - { name: gate, runtime: hook, source: h, local_source: true, capabilities: { env: { allow: [HOME, OPENAI_API_KEY] } } }\n",
    ),
    "E-CAP-016",
    "artifacts[0].capabilities.env.allow[1]: 'OPENAI_API_KEY' widens the artifact's grant beyond the capsule's: mur hands no hook a credential the runtime holds (*_API_KEY, *_AUTH_TOKEN, *_OAUTH_TOKEN)",
  ],
  [
    art(
      "  - { name: gate, runtime: hook, source: h, local_source: true, capabilities: { filesystem: { read_only: [docs] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.filesystem: not supported on a hook artifact: the read-only check reads tool calls, and a hook's command is not one; a hook artifact's capabilities take env.allow",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { filesystem: { scope: src } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.filesystem.scope: not supported on an artifact: the scope is capsule-wide (capabilities.filesystem); a tool artifact's capabilities take env.allow and filesystem.read_only",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { filesystem: { read_only: [docs, ../up] } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.filesystem.read_only[1]: '../up' must stay inside the workdir (no '..')",
  ],
  [
    art(
      "  - { name: count, source: t, local_source: true, capabilities: { filesystem: { read_only: /etc } } }\n",
    ),
    "E-MAN-003",
    "artifacts[0].capabilities.filesystem.read_only: must be a list of workdir-relative subtrees",
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
