/**
 * Loading whole manifests: the full example (fixtures/contract), defaults, path resolution, file
 * errors.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MurError } from "../../src/errors.ts";
import { loadManifest } from "../../src/manifest/mod.ts";
import type { Manifest } from "../../src/manifest/types.ts";
import { BASE, load, withCapsule } from "./helpers.ts";

/**
 * The specification's full example manifest, kept in fixtures/contract with every key (deno fmt
 * moved only its comments).
 */
const CONTRACT = fileURLToPath(new URL("./fixtures/contract", import.meta.url));

Deno.test("the full example manifest (fixtures/contract) loads, every key read", async () => {
  const { manifest, warnings } = await loadManifest(CONTRACT, { ANTHROPIC_API_KEY: "sk-test-1" });
  const expected: Manifest = {
    name: "hello",
    version: "0.1.0",
    path: join(CONTRACT, "murmur.yaml"),
    dir: CONTRACT,
    inference: {
      transport: "http",
      driver: "scripted",
      model: "claude-haiku-4-5",
      endpoint: "https://api.anthropic.com/v1",
      apiKey: "sk-test-1",
      script: join(CONTRACT, "script.yaml"),
      maxTurns: 10,
      maxTokens: 8192,
      systemPrompt: "…",
      systemPromptSource: "manifest",
      idleTimeoutSecs: 120,
    },
    lifecycle: {
      taskAcceptance: "single",
      afterTask: "exit",
      queueDepth: 1,
      conversation: "stateless",
      maxTaskReopens: 1,
      shellGraceSecs: 10,
      inputTimeoutSecs: 600,
      keepWorking: { limit: 2, message: "Keep going until the task is fully done.", until: "DONE" },
      doneCheck: { command: "deno task test", limit: 2 },
    },
    context: {
      maxTokens: 200000,
      seedBudget: 0.10,
      seedOverflowMargin: 0.10,
      compactionThreshold: 0.98,
    },
    network: {
      internalPort: 52222,
      retriedSends: "replay",
      authentication: {
        scheme: "bearer",
        credentials: [{ name: "watcher", scopes: ["GetTask", "ListTasks", "murmur.WatchSession"] }],
      },
    },
    capabilities: { shell: { allow: ["bash", "git"] }, filesystem: { readOnly: ["docs"] } },
    observability: { otelEndpoint: "http://localhost:4318", otelContent: true },
    tools: [
      { kind: "builtin", name: "request-input" },
      {
        kind: "command",
        name: "weather",
        description: "Current weather for a city",
        inputSchema: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
        command: [join(CONTRACT, "tools/weather.sh")],
      },
    ],
    hooks: [{
      name: "review-gate",
      binding: "on-task-end",
      executionMode: "blocking",
      commitPolicy: "reopen-task",
      command: [join(CONTRACT, "hooks/review-gate.sh")],
    }],
  };
  assert.deepEqual(manifest, expected);
  // The example lists the process-only keys beside an http driver: read, then ignored aloud.
  assert.deepEqual(warnings, [
    "warning[W-SEC-019]: murmur.yaml: key 'inference.command' is ignored: only transport process runs a harness command (transport is http)",
    "warning[W-SEC-019]: murmur.yaml: key 'inference.env' is ignored: only transport process runs a harness with an environment (transport is http)",
  ]);
});

Deno.test("the contract example without ANTHROPIC_API_KEY is E-MAN-003 naming key and variable", async () => {
  await assert.rejects(
    () => loadManifest(CONTRACT, {}),
    (e: unknown) =>
      e instanceof MurError && e.code === "E-MAN-003" &&
      e.message === "inference.api_key: ${ANTHROPIC_API_KEY} is not set in the environment",
  );
});

Deno.test("defaults: a manifest of name and version only", async () => {
  await withCapsule(BASE, {}, async (dir) => {
    const { manifest, warnings } = await loadManifest(dir, {});
    // It says plainly that it runs the built-in scripted model.
    assert.deepEqual(warnings.map((w) => w.slice(0, w.indexOf("]") + 1)), ["warning[W-MAN-001]"]);
    const expected: Manifest = {
      name: "t",
      version: "1",
      path: join(dir, "murmur.yaml"),
      dir,
      inference: {
        transport: "http",
        driver: "scripted",
        maxTurns: 10,
        maxTokens: 8192,
        systemPromptSource: "none",
        idleTimeoutSecs: 120,
      },
      lifecycle: {
        taskAcceptance: "single",
        afterTask: "exit",
        queueDepth: 1,
        conversation: "stateless",
        maxTaskReopens: 1,
        shellGraceSecs: 10,
      },
      context: { seedBudget: 0.10, seedOverflowMargin: 0.10, compactionThreshold: 0.98 },
      network: { retriedSends: "replay" },
      capabilities: { shell: { allow: [] }, filesystem: { readOnly: [] } },
      observability: { otelContent: false },
      tools: [],
      hooks: [],
    };
    assert.deepEqual(manifest, expected);
  });
});

Deno.test("empty blocks (`lifecycle:` with nothing under it) mean the defaults", async () => {
  const { manifest } = await load(`${BASE}inference:\nlifecycle:\ncontext:\ntools:\n`);
  assert.equal(manifest.inference.driver, "scripted");
  assert.equal(manifest.lifecycle.taskAcceptance, "single");
  assert.deepEqual(manifest.tools, []);
});

Deno.test("explicit values override defaults; 0 is accepted where the contract allows it", async () => {
  const { manifest } = await load(
    `${BASE}inference:\n  max_turns: 3\n  max_tokens: 100\n  max_session_tokens: 5000\n` +
      `  idle_timeout_secs: 0.5\n` +
      `lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n` +
      `  conversation: threaded\n  max_task_reopens: 0\n  shell_grace_secs: 0\n` +
      `  keep_working:\n    message: more\n  done_check:\n    command: "true"\n` +
      `context:\n  seed_budget: 0\n  seed_overflow_margin: 0\n  compaction_threshold: 1\n` +
      `network:\n  internal_port: 65535\n  authentication: {}\n  retried_sends: new_task\n`,
  );
  assert.equal(manifest.inference.maxTurns, 3);
  assert.equal(manifest.inference.maxTokens, 100);
  assert.equal(manifest.inference.maxSessionTokens, 5000);
  assert.equal(manifest.inference.idleTimeoutSecs, 0.5);
  assert.deepEqual(manifest.lifecycle, {
    taskAcceptance: "queue",
    afterTask: "sleep",
    queueDepth: 4,
    conversation: "threaded",
    maxTaskReopens: 0,
    shellGraceSecs: 0,
    keepWorking: { limit: 1, message: "more" },
    doneCheck: { command: "true", limit: 1 },
  });
  assert.deepEqual(manifest.context, {
    seedBudget: 0,
    seedOverflowMargin: 0,
    compactionThreshold: 1,
  });
  // An authentication block with no credentials: only the operator token will exist.
  assert.deepEqual(manifest.network, {
    internalPort: 65535,
    retriedSends: "new_task",
    authentication: { scheme: "bearer", credentials: [] },
  });
});

Deno.test("credentials keep declaration order; repeated scopes collapse", async () => {
  const { manifest } = await load(
    `${BASE}network:\n  authentication:\n    scheme: bearer\n    credentials:\n` +
      `      watcher:\n        scopes: [GetTask, GetTask, murmur.WatchSession]\n` +
      `      sender:\n        scopes: [SendMessage, SendStreamingMessage, SubscribeToTask,` +
      ` ListTasks, CancelTask, murmur.StopSession]\n      nobody:\n        scopes: []\n`,
  );
  assert.deepEqual(manifest.network.authentication?.credentials, [
    { name: "watcher", scopes: ["GetTask", "murmur.WatchSession"] },
    {
      name: "sender",
      scopes: [
        "SendMessage",
        "SendStreamingMessage",
        "SubscribeToTask",
        "ListTasks",
        "CancelTask",
        "murmur.StopSession",
      ],
    },
    { name: "nobody", scopes: [] },
  ]);
});

Deno.test("drivers: providers and process harnesses", async (t) => {
  await t.step("anthropic with model, key and endpoint", async () => {
    const { manifest } = await load(
      `${BASE}inference:\n  driver: anthropic\n  model: claude-haiku-4-5\n  api_key: k\n`,
    );
    assert.equal(manifest.inference.driver, "anthropic");
    assert.equal(manifest.inference.model, "claude-haiku-4-5");
    assert.equal(manifest.inference.apiKey, "k");
    assert.equal(manifest.inference.endpoint, undefined);
  });
  await t.step("openai-compatible with a loopback endpoint", async () => {
    const { manifest } = await load(
      `${BASE}inference:\n  driver: openai-compatible\n  model: llama3\n` +
        `  endpoint: http://127.0.0.1:11434/v1\n`,
    );
    assert.equal(manifest.inference.endpoint, "http://127.0.0.1:11434/v1");
  });
  await t.step("claude-code: default command and env", async () => {
    const { manifest } = await load(
      `${BASE}inference:\n  transport: process\n  driver: claude-code\n`,
    );
    assert.equal(manifest.inference.transport, "process");
    assert.equal(manifest.inference.command, "claude");
    assert.deepEqual(manifest.inference.env, [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "ANTHROPIC_BASE_URL",
      "CLAUDE_CODE_OAUTH_TOKEN",
    ]);
  });
  await t.step("codex: default command and env", async () => {
    const { manifest } = await load(`${BASE}inference:\n  transport: process\n  driver: codex\n`);
    assert.equal(manifest.inference.command, "codex");
    assert.deepEqual(manifest.inference.env, ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"]);
  });
  await t.step("process: a path-like command resolves, env entries as written", async () => {
    await withCapsule(
      `${BASE}inference:\n  transport: process\n  driver: claude-code\n` +
        `  command: ./bin/fake-claude\n  env: [FOO, BAR=1]\n  model: sonnet\n` +
        `  api_key: nope\n`,
      { "bin/fake-claude": "#!/bin/sh\n" },
      async (dir) => {
        const { manifest, warnings } = await loadManifest(dir, {});
        assert.equal(manifest.inference.command, join(dir, "bin/fake-claude"));
        assert.deepEqual(manifest.inference.env, ["FOO", "BAR=1"]);
        assert.equal(manifest.inference.model, "sonnet");
        assert.equal(manifest.inference.apiKey, undefined);
        assert.deepEqual(warnings, [
          "warning[W-SEC-019]: murmur.yaml: key 'inference.api_key' is ignored: under transport process the harness gets credentials and endpoint through inference.env",
        ]);
      },
    );
  });
  await t.step("a script under a provider driver is ignored aloud", async () => {
    const { manifest, warnings } = await load(
      `${BASE}inference:\n  driver: openai\n  model: gpt-5\n  script: nowhere.yaml\n`,
    );
    assert.equal(manifest.inference.script, undefined);
    assert.deepEqual(warnings, [
      "warning[W-SEC-019]: murmur.yaml: key 'inference.script' is ignored: only driver 'scripted' reads a script (driver is 'openai')",
    ]);
  });
});

Deno.test("paths resolve against the manifest's folder", async () => {
  await withCapsule(
    `${BASE}inference:\n  script: scripts/s.yaml\n  system_prompt_file: prompts/p.md\n` +
      `capabilities:\n  filesystem:\n    read_only: [./docs/, a//b, .]\n` +
      `tools:\n` +
      `  - {name: rel, description: d, command: [./tools/rel.sh, --flag]}\n` +
      `  - {name: bare, description: d, command: [python3, -c, "print(1)"]}\n` +
      `  - {name: abs, description: d, command: [/bin/echo, hi]}\n` +
      `  - {name: line, description: d, command: "./tools/rel.sh | tr a b"}\n` +
      `hooks:\n  - name: up\n    binding: on-task-end\n    command: [../shared/gate.sh]\n`,
    {
      "scripts/s.yaml": "tasks: []\n",
      "prompts/p.md": "  You are terse.\n\n",
      "tools/rel.sh": "#!/bin/sh\necho rel\n",
      "../shared/gate.sh": "#!/bin/sh\necho '{}'\n",
    },
    async (dir) => {
      const { manifest } = await loadManifest(join(dir, "murmur.yaml"), {});
      assert.equal(manifest.inference.script, join(dir, "scripts/s.yaml"));
      // A prompt file is taken verbatim (inline prompts are trimmed).
      assert.equal(manifest.inference.systemPrompt, "  You are terse.\n\n");
      assert.equal(manifest.inference.systemPromptSource, "manifest");
      assert.deepEqual(manifest.capabilities.filesystem.readOnly, ["docs", "a/b", "."]);
      const commands = manifest.tools.map((t) => t.kind === "command" ? t.command : []);
      assert.deepEqual(commands, [
        [join(dir, "tools/rel.sh"), "--flag"],
        ["python3", "-c", "print(1)"],
        ["/bin/echo", "hi"],
        ["sh", "-c", "./tools/rel.sh | tr a b"],
      ]);
      assert.deepEqual(manifest.hooks[0].command, [join(dir, "../shared/gate.sh")]);
    },
  );
});

Deno.test("the fixture's command tool runs from its resolved path, outside the manifest folder", async () => {
  const { manifest } = await loadManifest(CONTRACT, { ANTHROPIC_API_KEY: "x" });
  const weather = manifest.tools.find((t) => t.kind === "command");
  assert.ok(weather && weather.kind === "command");
  const cwd = await Deno.makeTempDir({ prefix: "mur-manifest-" });
  try {
    const out = await new Deno.Command(weather.command[0], {
      args: weather.command.slice(1),
      cwd,
      stdin: "null",
    }).output();
    assert.equal(out.code, 0);
    assert.equal(new TextDecoder().decode(out.stdout), "sunny\n");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("inline system prompt is trimmed", async () => {
  const { manifest } = await load(`${BASE}inference:\n  system_prompt: "  Be brief.\\n"\n`);
  assert.equal(manifest.inference.systemPrompt, "Be brief.");
});

Deno.test("a tool without input_schema gets an empty object schema; type defaults to object", async () => {
  const { manifest } = await load(
    `${BASE}tools:\n  - {name: a, description: d, command: [x]}\n` +
      `  - {name: b, description: d, command: [x], input_schema: {properties: {q: {type: string}}}}\n`,
  );
  const schemas = manifest.tools.map((t) => t.kind === "command" ? t.inputSchema : {});
  assert.deepEqual(schemas, [
    { type: "object", properties: {} },
    { type: "object", properties: { q: { type: "string" } } },
  ]);
});

Deno.test("a manifest file under another name, and its folder", async () => {
  await withCapsule(BASE, { "other/capsule.yaml": "name: other\nversion: '2'\n" }, async (dir) => {
    const { manifest } = await loadManifest(join(dir, "other/capsule.yaml"), {});
    assert.equal(manifest.name, "other");
    assert.equal(manifest.dir, join(dir, "other"));
    assert.equal(manifest.path, join(dir, "other/capsule.yaml"));
  });
  await withCapsule(BASE, { "other/capsule.yaml": "name: [\n" }, async (dir) => {
    await assert.rejects(
      () => loadManifest(join(dir, "other/capsule.yaml"), {}),
      (e: unknown) =>
        e instanceof MurError && e.code === "E-MAN-002" &&
        e.message.startsWith("capsule.yaml:2:1: "),
    );
  });
});

Deno.test("E-IO-001: the manifest, a script or a program that is not there", async (t) => {
  await t.step("no such path", async () => {
    const dir = await Deno.makeTempDir({ prefix: "mur-manifest-" });
    try {
      const missing = join(dir, "nope");
      let caught: unknown;
      try {
        await loadManifest(missing, {});
      } catch (e) {
        caught = e;
      }
      assert.ok(caught instanceof MurError);
      assert.equal(caught.code, "E-IO-001");
      assert.equal(caught.message, `manifest not found: ${missing}`);
      assert.ok(caught.hint);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
  await t.step("a folder without murmur.yaml names DIR/murmur.yaml", async () => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "mur-manifest-" }));
    try {
      await assert.rejects(
        () => loadManifest(dir, {}),
        (e: unknown) =>
          e instanceof MurError && e.code === "E-IO-001" &&
          e.message === `manifest not found: ${join(dir, "murmur.yaml")}`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
  await t.step("a missing script", async () => {
    await withCapsule(`${BASE}inference:\n  script: s.yaml\n`, {}, async (dir) => {
      await assert.rejects(
        () => loadManifest(dir, {}),
        (e: unknown) =>
          e instanceof MurError && e.code === "E-IO-001" &&
          e.message === `inference.script: script not found: ${join(dir, "s.yaml")}`,
      );
    });
  });
  await t.step("a missing tool program", async () => {
    await withCapsule(
      `${BASE}tools:\n  - {name: w, description: d, command: [./tools/w.sh]}\n`,
      {},
      async (dir) => {
        await assert.rejects(
          () => loadManifest(dir, {}),
          (e: unknown) =>
            e instanceof MurError && e.code === "E-IO-001" &&
            e.message === `tools[0].command: program not found: ${join(dir, "tools/w.sh")}`,
        );
      },
    );
  });
});

Deno.test("E-RUN-009: an unreadable system_prompt_file", async () => {
  await withCapsule(`${BASE}inference:\n  system_prompt_file: prompt.md\n`, {}, async (dir) => {
    let caught: unknown;
    try {
      await loadManifest(dir, {});
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof MurError);
    assert.equal(caught.code, "E-RUN-009");
    assert.ok(
      caught.message.startsWith(
        `inference.system_prompt_file: cannot read ${join(dir, "prompt.md")}: `,
      ),
      caught.message,
    );
  });
});

Deno.test("a bare scripted driver has no script: the driver's built-in default applies", async () => {
  const { manifest } = await load(`${BASE}inference:\n  driver: scripted\n`);
  assert.equal(manifest.inference.driver, "scripted");
  assert.equal(manifest.inference.script, undefined);
});

Deno.test("every problem is reported, in document order, each as its own error line", async () => {
  await withCapsule(
    `name: t\ninference:\n  max_turns: 0\nlifecycle:\n  after_task: never\n`,
    {},
    async (dir) => {
      await assert.rejects(
        () => loadManifest(dir, {}),
        (e: unknown) =>
          e instanceof MurError && e.code === "E-MAN-001" &&
          e.format() === [
              "error[E-MAN-001]: missing required key 'version'",
              "error[E-MAN-003]: inference.max_turns: must be an integer > 0",
              "error[E-MAN-003]: lifecycle.after_task: 'never' is not one of exit, sleep",
              `  hint: fix the manifest at ${join(dir, "murmur.yaml")}`,
            ].join("\n"),
      );
    },
  );
});

Deno.test("E-MAN errors hint at the manifest file they came from", async () => {
  await withCapsule(`${BASE}inference:\n  max_turns: 0\n`, {}, async (dir) => {
    await assert.rejects(
      () => loadManifest(dir, {}),
      (e: unknown) =>
        e instanceof MurError && e.code === "E-MAN-003" &&
        e.hint === `fix the manifest at ${join(dir, "murmur.yaml")}` &&
        e.format() ===
          `error[E-MAN-003]: inference.max_turns: must be an integer > 0\n  hint: fix the manifest at ${
            join(dir, "murmur.yaml")
          }`,
    );
  });
});

Deno.test("YAML anchors and merge keys work", async () => {
  const { manifest, warnings } = await load(
    `${BASE}x-hook: &hook\n  binding: on-task-end\n  command: [./gate.sh]\n` +
      `hooks:\n  - <<: *hook\n    name: one\n  - <<: *hook\n    name: two\n    execution_mode: async\n`,
    {},
    { "gate.sh": "#!/bin/sh\necho '{}'\n" },
  );
  assert.deepEqual(manifest.hooks.map((h) => [h.name, h.binding, h.executionMode]), [
    ["one", "on-task-end", "blocking"],
    ["two", "on-task-end", "async"],
  ]);
  assert.deepEqual(warnings.filter((w) => !w.startsWith("warning[W-MAN-001]")), [
    "warning[W-SEC-019]: murmur.yaml: unknown key 'x-hook' is ignored",
  ]);
});
