/**
 * The Codex driver with the real `@openai/codex` CLI (installed into .cache/ by the test setup),
 * offline against the fake Responses endpoint (scripts/fakes/codex_endpoint.ts), configured
 * through a CODEX_HOME config.toml naming a custom provider (codex 0.169 ignores
 * OPENAI_BASE_URL). A text task, and an MCP tool call through the bridge.
 */
import assert from "node:assert/strict";
import { startCodexEndpoint } from "../../../scripts/fakes/codex_endpoint.ts";
import type { HarnessPart } from "../../../src/drivers/process/mod.ts";
import type { ToolCall } from "../../../src/drivers/types.ts";
import { collect, fenced, harnessSetup, request, resultOf, traces } from "./helpers.ts";
import { ensureCli } from "./install.ts";
import { codexHome } from "../../helpers/codex_home.ts";

async function setup() {
  const endpoint = startCodexEndpoint();
  return await harnessSetup({
    driver: "codex",
    command: await ensureCli("codex"),
    endpoint,
    env: async (home) => (await codexHome(home, endpoint.url)).env,
  });
}

Deno.test("codex cli: a text task completes with the whole answer (codex streams no deltas)", async () => {
  const s = await setup();
  try {
    const parts = await collect(s.driver, request({ system: "You are a test capsule." }), {
      timeoutMs: 60_000,
    });
    const r = resultOf(parts);
    assert.deepEqual(r.outcome, {
      status: "completed",
      text: "Hello from fake OpenAI.",
      lastSegmentStreamedText: false,
    });
    assert.ok(!parts.some((p) => p.type === "text-delta"));
    assert.ok(r.sessionId, "the thread id is the session");
    assert.equal(traces(parts, "harness_session")[0].harness_session_id, r.sessionId);
    const req = s.endpoint.requests.find((q) => q.path === "/v1/responses")!;
    assert.equal(req.headers.authorization, "Bearer sk-fake");
    assert.match(JSON.stringify(req.body?.input), /You are a test capsule\./);
    const usage = parts.find((p) => p.type === "usage") as { inputTokens: number };
    assert.equal(usage.inputTokens, 20);
  } finally {
    await s.cleanup();
  }
});

Deno.test("codex cli: an MCP tool call goes through the bridge and comes back as a fenced tool result", async () => {
  const s = await setup();
  const calls: ToolCall[] = [];
  try {
    const parts = await collect(
      s.driver,
      request({
        prompt: 'MCPTEST {"text":"yo"}',
        tools: [{
          name: "echo",
          description: "Echo the text back",
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
        }],
        dispatch: (call) => {
          calls.push(call);
          return Promise.resolve(fenced("echo", `ECHO ${call.input.text}`));
        },
      }),
      { timeoutMs: 60_000 },
    );
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].input, { text: "yo" });
    const res = parts.find((p) => p.type === "tool-result") as Extract<
      HarnessPart,
      { type: "tool-result" }
    >;
    assert.equal(res.toolName, "echo");
    assert.equal(
      res.content,
      "<untrusted-content source=tool:echo>\nECHO yo\n</untrusted-content>",
    );
    // Codex sends no call id: the bridge call is matched by name and arguments.
    assert.equal(res.fenceSource, "tool:echo");
    assert.equal(res.durationMs, 7);
    const started = parts.find((p) => p.type === "tool-input-start") as { id: string };
    assert.equal(started.id, res.toolCallId);
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "completed");
    assert.match((r.outcome as { text: string }).text, /^Tool said: /);
    assert.equal(r.turns, 2);
  } finally {
    await s.cleanup();
  }
});
