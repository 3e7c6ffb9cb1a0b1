import assert from "node:assert/strict";
import { driverScenarios } from "./scenarios.ts";
import { collect, FENCED, KEY, REFUSED, requestAfterToolCall, rig, WEATHER } from "./harness.ts";

// The Responses API has no stop reason on a completed response: its status is the provider's word.
driverScenarios("openai", {
  endTurn: "completed",
  toolUse: "completed",
  maxTokens: "max_output_tokens",
});

Deno.test("openai: the Responses request carries model, system, tools, max_output_tokens, history", async () => {
  const r = rig("openai", [{ steps: [{ text: "Sunny." }] }]);
  try {
    await collect(r.driver, requestAfterToolCall());
    assert.equal(r.fake.requests.length, 1);
    const { path, headers, body } = r.fake.requests[0];
    assert.equal(path, "/v1/responses");
    assert.equal(headers["authorization"], `Bearer ${KEY}`);
    assert.ok(body);
    assert.equal(body.model, "gpt-5-mini");
    assert.equal(body.max_output_tokens, 777);
    assert.equal(body.stream, true);
    assert.deepEqual(body.reasoning, { summary: "auto" });
    const tools = body.tools as Array<Record<string, unknown>>;
    assert.equal(tools.length, 1);
    assert.equal(tools[0].type, "function");
    assert.equal(tools[0].name, "weather");
    assert.equal(tools[0].description, WEATHER.description);
    assert.deepEqual(tools[0].parameters, WEATHER.inputSchema);
    // A reasoning model takes the system prompt as the developer message.
    assert.deepEqual(body.input, [
      { role: "developer", content: "You are terse.\nAnswer in one line." },
      { role: "user", content: [{ type: "input_text", text: "What is the weather in Paris?" }] },
      { role: "assistant", content: "Let me check." },
      { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "call_2", name: "weather", arguments: '{"city":"Oslo"}' },
      // Both results exactly as the loop passed them, the refused one too (no JSON wrapping).
      { type: "function_call_output", call_id: "call_1", output: FENCED },
      { type: "function_call_output", call_id: "call_2", output: REFUSED },
    ]);
  } finally {
    await r.close();
  }
});

Deno.test("openai: a body that ends before response.completed is a cut stream", async () => {
  const r = rig("openai", [
    { steps: [{ text: "Sunny " }, { text: "in Paris." }], fault: { kind: "end", afterEvents: 6 } },
  ]);
  try {
    const parts = await collect(r.driver, requestAfterToolCall());
    assert.equal(parts.at(-1)?.type, "error");
    const err = parts.at(-1);
    assert.ok(err?.type === "error" && /end-of-message/.test(err.message), JSON.stringify(err));
    assert.equal(r.fake.requests.length, 1);
  } finally {
    await r.close();
  }
});
