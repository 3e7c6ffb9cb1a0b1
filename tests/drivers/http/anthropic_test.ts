import assert from "node:assert/strict";
import { driverScenarios } from "./scenarios.ts";
import { collect, FENCED, KEY, REFUSED, requestAfterToolCall, rig, WEATHER } from "./harness.ts";

driverScenarios("anthropic", { endTurn: "end_turn", toolUse: "tool_use", maxTokens: "max_tokens" });

Deno.test("anthropic: the request carries model, system, tools, max_tokens and the history", async () => {
  const r = rig("anthropic", [{ steps: [{ text: "Sunny." }] }]);
  try {
    await collect(r.driver, requestAfterToolCall());
    assert.equal(r.fake.requests.length, 1);
    const { path, headers, body } = r.fake.requests[0];
    assert.equal(path, "/v1/messages");
    assert.equal(headers["x-api-key"], KEY);
    assert.ok(headers["anthropic-version"], "anthropic-version header");
    assert.ok(body);
    assert.equal(body.model, "claude-haiku-4-5");
    assert.equal(body.max_tokens, 777);
    assert.equal(body.stream, true);
    assert.deepEqual(body.system, [{ type: "text", text: "You are terse.\nAnswer in one line." }]);
    const tools = body.tools as Array<Record<string, unknown>>;
    assert.equal(tools.length, 1);
    assert.equal(tools[0].name, "weather");
    assert.equal(tools[0].description, WEATHER.description);
    assert.deepEqual(tools[0].input_schema, WEATHER.inputSchema);
    // Reasoning is not sent back; tool results go back as the loop passed them.
    assert.deepEqual(body.messages, [
      { role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "call_1", name: "weather", input: { city: "Paris" } },
          { type: "tool_use", id: "call_2", name: "weather", input: { city: "Oslo" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: FENCED },
          { type: "tool_result", tool_use_id: "call_2", content: REFUSED, is_error: true },
        ],
      },
    ]);
  } finally {
    await r.close();
  }
});

Deno.test("anthropic: an overloaded_error event before any output is retried", async () => {
  const r = rig("anthropic", [
    { steps: [{ text: "lost" }], fault: { kind: "stream-error", afterEvents: 2 } },
    { steps: [{ text: "Sunny." }] },
  ]);
  try {
    const parts = await collect(r.driver, requestAfterToolCall());
    assert.deepEqual(parts.map((p) => p.type), ["retry", "text-delta", "usage", "finish"]);
    const retry = parts[0];
    assert.ok(
      retry.type === "retry" && /overloaded_error/.test(retry.reason),
      JSON.stringify(retry),
    );
  } finally {
    await r.close();
  }
});

Deno.test("anthropic: 529 overloaded is retried like a 5xx", async () => {
  const r = rig("anthropic", [
    { steps: [], fault: { kind: "status", status: 529 } },
    { steps: [{ text: "Sunny." }] },
  ]);
  try {
    const parts = await collect(r.driver, requestAfterToolCall());
    assert.deepEqual(parts.map((p) => p.type), ["retry", "text-delta", "usage", "finish"]);
  } finally {
    await r.close();
  }
});

Deno.test("anthropic: a body that ends before message_stop is a cut stream, and retried", async () => {
  const r = rig("anthropic", [
    { steps: [{ text: "lost" }], fault: { kind: "end", afterEvents: 2 } },
    { steps: [{ text: "Sunny." }] },
  ]);
  try {
    const parts = await collect(r.driver, requestAfterToolCall());
    assert.deepEqual(parts.map((p) => p.type), ["retry", "text-delta", "usage", "finish"]);
    const retry = parts[0];
    assert.ok(retry.type === "retry" && /end-of-message/.test(retry.reason), JSON.stringify(retry));
  } finally {
    await r.close();
  }
});
