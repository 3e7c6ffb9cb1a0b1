/**
 * Every manifest error a user can meet: code and exact message (the message is what
 * `error[E-MAN-00N]: …` prints, so the key path and the rule must be in it).
 */
import { BASE, loadError } from "./helpers.ts";

type Case = [yaml: string, message: string];

async function each(t: Deno.TestContext, code: string, cases: Case[]) {
  for (const [yaml, message] of cases) {
    await t.step(message, async () => {
      await loadError(yaml, code, message);
    });
  }
}

const SCOPE_LIST =
  "SendMessage, SendStreamingMessage, SubscribeToTask, GetTask, ListTasks, CancelTask, murmur.WatchSession, murmur.StopSession";

Deno.test("E-MAN-001: a missing required key is named by its path", async (t) => {
  await each(t, "E-MAN-001", [
    ['version: "1"\n', "missing required key 'name'"],
    ["name: t\n", "missing required key 'version'"],
    ['name:\nversion: "1"\n', "missing required key 'name'"],
    [
      `${BASE}inference:\n  driver: anthropic\n`,
      "missing required key 'inference.model': driver 'anthropic' needs a model name",
    ],
    [
      `${BASE}inference:\n  driver: openai\n`,
      "missing required key 'inference.model': driver 'openai' needs a model name",
    ],
    [
      `${BASE}inference:\n  driver: openai-compatible\n  endpoint: http://127.0.0.1:11434/v1\n`,
      "missing required key 'inference.model': driver 'openai-compatible' needs a model name",
    ],
    [
      `${BASE}inference:\n  driver: openai-compatible\n  model: llama3\n`,
      "missing required key 'inference.endpoint': driver 'openai-compatible' needs the provider's base URL (e.g. http://localhost:11434/v1)",
    ],
    [
      `${BASE}inference:\n  transport: process\n`,
      "missing required key 'inference.driver': transport process needs claude-code or codex",
    ],
    [
      `${BASE}inference:\n  model: claude-haiku-4-5\n`,
      "missing required key 'inference.driver': inference.model is set, so name the provider driver (anthropic, openai, openai-compatible)",
    ],
    [
      `${BASE}tools:\n  - builtin: request-input\n  - name: w\n    description: d\n`,
      "missing required key 'tools[1].command'",
    ],
    [
      `${BASE}tools:\n  - name: w\n    command: [./w.sh]\n`,
      "missing required key 'tools[0].description'",
    ],
    [
      `${BASE}tools:\n  - description: d\n    command: [./w.sh]\n`,
      "missing required key 'tools[0].name': a tool entry is {builtin: request-input}, {builtin: publish} or a command tool",
    ],
    [
      `${BASE}hooks:\n  - name: h\n    binding: on-task-end\n`,
      "missing required key 'hooks[0].command'",
    ],
    [
      `${BASE}hooks:\n  - binding: on-task-end\n    command: [x]\n`,
      "missing required key 'hooks[0].name'",
    ],
    [
      `${BASE}lifecycle:\n  keep_working:\n    limit: 2\n`,
      "missing required key 'lifecycle.keep_working.message'",
    ],
    [
      `${BASE}lifecycle:\n  done_check:\n    limit: 2\n`,
      "missing required key 'lifecycle.done_check.command'",
    ],
    [
      `${BASE}network:\n  authentication:\n    credentials:\n      watcher: {}\n`,
      "missing required key 'network.authentication.credentials.watcher.scopes'",
    ],
  ]);
});

Deno.test("E-MAN-003: inference values", async (t) => {
  await each(t, "E-MAN-003", [
    [
      `${BASE}inference:\n  driver: foo\n`,
      "inference.driver: 'foo' is not one of scripted, anthropic, openai, openai-compatible (transport http)",
    ],
    [
      `${BASE}inference:\n  driver: claude-code\n`,
      "inference.driver: 'claude-code' is not one of scripted, anthropic, openai, openai-compatible (transport http); 'claude-code' runs under transport process",
    ],
    [
      `${BASE}inference:\n  transport: process\n  driver: anthropic\n`,
      "inference.driver: 'anthropic' is not one of claude-code, codex (transport process); 'anthropic' runs under transport http",
    ],
    [
      `${BASE}inference:\n  transport: grpc\n`,
      "inference.transport: 'grpc' is not one of http, process",
    ],
    [`${BASE}inference:\n  max_turns: 0\n`, "inference.max_turns: must be an integer > 0"],
    [`${BASE}inference:\n  max_turns: -3\n`, "inference.max_turns: must be an integer > 0"],
    [`${BASE}inference:\n  max_turns: 2.5\n`, "inference.max_turns: must be an integer > 0"],
    [`${BASE}inference:\n  max_turns: ten\n`, "inference.max_turns: must be an integer > 0"],
    [`${BASE}inference:\n  max_tokens: 0\n`, "inference.max_tokens: must be an integer > 0"],
    [
      `${BASE}inference:\n  max_session_tokens: 0\n`,
      "inference.max_session_tokens: must be an integer > 0",
    ],
    [
      `${BASE}inference:\n  idle_timeout_secs: 0\n`,
      "inference.idle_timeout_secs: must be a number of seconds > 0",
    ],
    [
      `${BASE}inference:\n  system_prompt: hi\n  system_prompt_file: p.md\n`,
      "inference.system_prompt_file: cannot be set together with inference.system_prompt; keep one",
    ],
    [
      `${BASE}inference:\n  driver: anthropic\n  model: m\n  endpoint: api.anthropic.com\n`,
      "inference.endpoint: 'api.anthropic.com' is not an http:// or https:// URL",
    ],
    [
      `${BASE}inference:\n  transport: process\n  driver: codex\n  env: [OPENAI_API_KEY, 1BAD]\n`,
      "inference.env[1]: '1BAD' must be NAME or NAME=value",
    ],
    [`${BASE}inference:\n  model: 7\n  driver: openai\n`, "inference.model: must be a string"],
    [`${BASE}inference: scripted\n`, "inference: must be a mapping of keys"],
  ]);
});

Deno.test("E-MAN-003: top-level, lifecycle and context values", async (t) => {
  await each(t, "E-MAN-003", [
    [
      "name: Hello World\nversion: '1'\n",
      "name: 'Hello World' must be letters, digits, '.', '_' or '-', starting with a letter or digit",
    ],
    ["name: t\nversion: 1.0\n", 'version: must be a string; quote it, e.g. version: "0.1.0"'],
    [`${BASE}lifecycle: 5\n`, "lifecycle: must be a mapping of keys"],
    [
      `${BASE}lifecycle:\n  task_acceptance: many\n`,
      "lifecycle.task_acceptance: 'many' is not one of none, single, queue",
    ],
    [
      `${BASE}lifecycle:\n  after_task: linger\n`,
      "lifecycle.after_task: 'linger' is not one of exit, sleep",
    ],
    [
      `${BASE}lifecycle:\n  conversation: 3\n`,
      "lifecycle.conversation: 3 is not one of stateless, threaded",
    ],
    [`${BASE}lifecycle:\n  queue_depth: 0\n`, "lifecycle.queue_depth: must be an integer > 0"],
    [
      `${BASE}lifecycle:\n  max_task_reopens: -1\n`,
      "lifecycle.max_task_reopens: must be an integer >= 0",
    ],
    [
      `${BASE}lifecycle:\n  shell_grace_secs: -1\n`,
      "lifecycle.shell_grace_secs: must be a number of seconds >= 0",
    ],
    [
      `${BASE}lifecycle:\n  input_timeout_secs: 0\n`,
      "lifecycle.input_timeout_secs: must be a number of seconds > 0",
    ],
    [
      `${BASE}lifecycle:\n  delegation_deadline_secs: 0\n`,
      "lifecycle.delegation_deadline_secs: must be a number of seconds > 0",
    ],
    [
      `${BASE}capabilities:\n  spawn:\n    allow: [kids/helper, other/helper.yaml]\n`,
      "capabilities.spawn.allow: 'other/helper.yaml' and 'kids/helper' both name a capsule 'helper'; the model names a child by that name, so it must be unique",
    ],
    [
      `${BASE}lifecycle:\n  keep_working:\n    message: go\n    limit: -1\n`,
      "lifecycle.keep_working.limit: must be an integer >= 0",
    ],
    [
      `${BASE}lifecycle:\n  done_check:\n    command: [deno, test]\n`,
      "lifecycle.done_check.command: must be one shell command line (a string)",
    ],
    [`${BASE}context:\n  max_tokens: 0\n`, "context.max_tokens: must be an integer > 0"],
    [
      `${BASE}context:\n  seed_budget: 1.5\n`,
      "context.seed_budget: must be a fraction between 0 and 1",
    ],
    [
      `${BASE}context:\n  seed_overflow_margin: -0.1\n`,
      "context.seed_overflow_margin: must be a fraction >= 0",
    ],
    [
      `${BASE}context:\n  compaction_threshold: 0\n`,
      "context.compaction_threshold: must be a fraction > 0 and <= 1",
    ],
  ]);
});

Deno.test("E-MAN-003: observability", async (t) => {
  await each(t, "E-MAN-003", [
    [
      `${BASE}observability:\n  otel_endpoint: localhost:4318\n`,
      "observability.otel_endpoint: 'localhost:4318' is not an http:// or https:// URL",
    ],
    [
      `${BASE}observability:\n  otel_endpoint: grpc://collector:4317\n`,
      "observability.otel_endpoint: 'grpc://collector:4317' is not an http:// or https:// URL",
    ],
    [
      `${BASE}observability:\n  otel_content: yes please\n`,
      "observability.otel_content: must be true or false",
    ],
  ]);
});

Deno.test("E-MAN-003: network and capabilities", async (t) => {
  const port = "network.internal_port: must be a port number between 1 and 65535";
  await each(t, "E-MAN-003", [
    [`${BASE}network:\n  internal_port: 0\n`, port],
    [`${BASE}network:\n  internal_port: 65536\n`, port],
    [`${BASE}network:\n  internal_port: http\n`, port],
    [
      `${BASE}network:\n  retried_sends: sometimes\n`,
      "network.retried_sends: 'sometimes' is not one of replay, new_task",
    ],
    [
      `${BASE}network:\n  authentication:\n    scheme: basic\n`,
      "network.authentication.scheme: 'basic' is not one of bearer",
    ],
    [
      `${BASE}network:\n  authentication:\n    credentials:\n      watcher:\n        scopes: [GetTask, Foo]\n`,
      `network.authentication.credentials.watcher.scopes[1]: 'Foo' is not a method name; scopes are ${SCOPE_LIST}`,
    ],
    [
      `${BASE}network:\n  authentication:\n    credentials:\n      watcher:\n        scopes: [stream/watch]\n`,
      `network.authentication.credentials.watcher.scopes[0]: 'stream/watch' is not a method name; scopes are ${SCOPE_LIST}`,
    ],
    [
      `${BASE}network:\n  authentication:\n    credentials:\n      operator:\n        scopes: [GetTask]\n`,
      "network.authentication.credentials.operator: 'operator' is reserved: the runtime always mints it with every scope; choose another name",
    ],
    [
      `${BASE}network:\n  authentication:\n    credentials: [watcher]\n`,
      "network.authentication.credentials: must be a mapping of credential name to {scopes: [...]}",
    ],
    [
      `${BASE}capabilities:\n  shell:\n    allow: [/bin/bash]\n`,
      "capabilities.shell.allow[0]: '/bin/bash' is not a bare binary name (no '/', no spaces); it is looked up on PATH",
    ],
    [
      `${BASE}capabilities:\n  shell:\n    allow: [git, "git log"]\n`,
      "capabilities.shell.allow[1]: 'git log' is not a bare binary name (no '/', no spaces); it is looked up on PATH",
    ],
    [
      `${BASE}capabilities:\n  shell:\n    allow: [git, bash, git]\n`,
      "capabilities.shell.allow[2]: 'git' is listed twice (also [0])",
    ],
    [
      `${BASE}capabilities:\n  filesystem:\n    read_only: [docs, /etc]\n`,
      "capabilities.filesystem.read_only[1]: '/etc' must be a workdir-relative path",
    ],
    [
      `${BASE}capabilities:\n  filesystem:\n    read_only: [../secrets]\n`,
      "capabilities.filesystem.read_only[0]: '../secrets' must stay inside the workdir (no '..')",
    ],
    [
      `${BASE}capabilities:\n  filesystem:\n    read_only: [docs/../../x]\n`,
      "capabilities.filesystem.read_only[0]: 'docs/../../x' must stay inside the workdir (no '..')",
    ],
  ]);
});

Deno.test("E-MAN-003: tools and hooks", async (t) => {
  const tool = (name: string) => `  - name: ${name}\n    description: d\n    command: [echo]\n`;
  await each(t, "E-MAN-003", [
    [`${BASE}tools: {builtin: request-input}\n`, "tools: must be a list"],
    [
      `${BASE}tools:\n  - builtin: ask-human\n`,
      "tools[0].builtin: 'ask-human' is not one of request-input, publish",
    ],
    [
      `${BASE}tools:\n  - builtin: request-input\n    description: ask\n`,
      "tools[0]: a builtin entry takes only 'builtin' (found 'description')",
    ],
    [
      `${BASE}tools:\n${tool("weather")}${tool("clock")}${tool("weather")}`,
      "tools[2]: 'weather' is declared twice (also tools[0])",
    ],
    [
      `${BASE}tools:\n  - builtin: request-input\n  - builtin: request-input\n`,
      "tools[1]: 'request-input' is declared twice (also tools[0])",
    ],
    [
      `${BASE}capabilities:\n  shell:\n    allow: [git]\ntools:\n${tool("git")}`,
      "tools[0].name: 'git' is already a shell tool from capabilities.shell.allow",
    ],
    [
      `${BASE}tools:\n${tool("request-input")}`,
      "tools[0].name: 'request-input' is a builtin tool; declare it as {builtin: request-input}",
    ],
    [
      `${BASE}tools:\n${tool('"my tool"')}`,
      "tools[0].name: 'my tool' must be 1 to 64 letters, digits, '_' or '-' (what model providers accept)",
    ],
    [
      `${BASE}tools:\n${tool("w")}    input_schema: {type: string}\n`,
      "tools[0].input_schema.type: 'string' is not 'object' (a tool's input is one JSON object)",
    ],
    [
      `${BASE}tools:\n${tool("w")}    input_schema: [city]\n`,
      "tools[0].input_schema: must be a JSON Schema object (a mapping with type: object)",
    ],
    [
      `${BASE}tools:\n  - name: w\n    description: d\n    command: []\n`,
      "tools[0].command: must name a program: a list of strings, program first",
    ],
    [
      `${BASE}tools:\n  - name: w\n    description: d\n    command: "  "\n`,
      "tools[0].command: must name a program: a list of strings, program first",
    ],
    [
      `${BASE}tools:\n  - name: w\n    description: d\n    command: [./w.sh, 5]\n`,
      "tools[0].command[1]: must be a string",
    ],
    [
      `${BASE}tools:\n  - name: w\n    description: d\n    command: 5\n`,
      "tools[0].command: must be a list of strings (program, then arguments) or one shell line",
    ],
    [
      `${BASE}hooks:\n  - name: h\n    binding: on-finish\n    command: [x]\n`,
      "hooks[0].binding: 'on-finish' is not one of on-stage, on-session-start, on-task-start, on-inference, on-tool-call, on-shell, on-compaction, on-task-end, on-session-end, on-approval",
    ],
    [
      `${BASE}hooks:\n  - name: h\n    binding: on-task-end\n    commit_policy: veto\n    command: [x]\n`,
      "hooks[0].commit_policy: 'veto' is not one of none, write-manifests, seed-context, replace-context, reopen-task, deny",
    ],
    [
      `${BASE}hooks:\n  - name: h\n    binding: on-task-end\n    execution_mode: later\n    command: [x]\n`,
      "hooks[0].execution_mode: 'later' is not one of blocking, async",
    ],
    [
      `${BASE}hooks:\n  - name: a\n    binding: on-task-end\n    command: [x]\n  - name: a\n    binding: on-task-start\n    command: [x]\n`,
      "hooks[1]: 'a' is declared twice (also hooks[0])",
    ],
    [
      `${BASE}hooks:\n  - name: ../evil\n    binding: on-task-end\n    command: [x]\n`,
      "hooks[0].name: '../evil' must be letters, digits, '.', '_' or '-', starting with a letter or digit",
    ],
  ]);
});

Deno.test("E-MAN-003: a manifest that is not a mapping", async () => {
  await loadError(
    "- name: t\n",
    "E-MAN-003",
    "murmur.yaml: the manifest must be a mapping of keys (name, version, inference, …)",
  );
});

Deno.test("E-MAN-002: YAML syntax errors carry file, line and column", async (t) => {
  const cases: Case[] = [
    [
      `${BASE}inference:\n  driver: scripted\n    max_turns: 3\n`,
      "murmur.yaml:4:11: Nested mappings are not allowed in compact mappings",
    ],
    [
      `${BASE}name: again\n`,
      "murmur.yaml:3:1: Map keys must be unique",
    ],
    [
      `${BASE}tools: [a, b\n`,
      "murmur.yaml:4:1: Flow sequence in block collection must be sufficiently indented and end with a ]",
    ],
  ];
  for (const [yaml, message] of cases) {
    await t.step(message, async () => {
      const err = await loadError(yaml, "E-MAN-002", message);
      // The message carries the position itself; yaml's own excerpt is not repeated.
      if (err.message.includes("\n")) throw new Error("multi-line E-MAN-002 message");
    });
  }
});
