/**
 * Unknown keys are a warning (W-SEC-019), never an error, at every level (docs/manifest.md
 * "Warnings at load").
 */
import assert from "node:assert/strict";
import { BASE, load } from "./helpers.ts";

const w = (key: string) => `warning[W-SEC-019]: murmur.yaml: unknown key '${key}' is ignored`;

Deno.test("unknown keys at every level are warned about by key path and ignored", async () => {
  const { manifest, warnings } = await load(
    `${BASE}foo: 1\n` +
      `inference:\n  driver: scripted\n  temperature: 0.2\n  compaction:\n    threshold: 0.5\n` +
      `lifecycle:\n  bar: true\n  keep_working:\n    message: go\n    tone: firm\n` +
      `network:\n  authentication:\n    credentials:\n      watcher:\n        scopes: [GetTask]\n` +
      `        note: read only\n` +
      `capabilities:\n  plan:\n    submit: true\n  shell:\n    allow: [git]\n` +
      `    strip_env: ["AWS_*"]\n` +
      `tools:\n  - builtin: request-input\n` +
      `  - name: w\n    description: d\n    command: [echo]\n    colour: red\n` +
      `    input_schema: {type: object, additionalProperties: false, x-extension: 1}\n` +
      `hooks:\n  - name: h\n    binding: on-task-end\n    command: [x]\n    timeout: 5\n`,
  );
  assert.deepEqual(
    [...warnings].sort(),
    [
      w("foo"),
      w("inference.temperature"),
      w("inference.compaction"),
      w("lifecycle.bar"),
      w("lifecycle.keep_working.tone"),
      w("network.authentication.credentials.watcher.note"),
      w("capabilities.plan"),
      w("capabilities.shell.strip_env"),
      w("tools[1].colour"),
      w("hooks[0].timeout"),
    ].sort(),
  );
  // The rest of the manifest is read as if the unknown keys were not there.
  assert.deepEqual(manifest.lifecycle.keepWorking, { limit: 1, message: "go" });
  assert.deepEqual(manifest.capabilities.shell.allow, ["git"]);
  assert.deepEqual(manifest.network.authentication?.credentials, [
    { name: "watcher", scopes: ["GetTask"] },
  ]);
  // input_schema is free JSON Schema: its keys are the tool's business, not unknown keys.
  const tool = manifest.tools[1];
  assert.ok(tool.kind === "command");
  assert.deepEqual(tool.inputSchema, {
    type: "object",
    additionalProperties: false,
    "x-extension": 1,
  });
  assert.equal(manifest.hooks[0].name, "h");
});

Deno.test("a known manifest warns about nothing", async () => {
  const { warnings } = await load(
    `${BASE}inference:\n  driver: scripted\nlifecycle:\n  task_acceptance: queue\n`,
  );
  assert.deepEqual(warnings, []);
});

Deno.test("an unknown key does not hide a real error elsewhere", async () => {
  await assert.rejects(
    () => load(`${BASE}foo: 1\ninference:\n  max_turns: 0\n`),
    /inference\.max_turns: must be an integer > 0/,
  );
});
