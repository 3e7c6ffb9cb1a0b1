import assert from "node:assert/strict";
import { driverScenarios } from "./scenarios.ts";
import { collect, FENCED, KEY, REFUSED, requestAfterToolCall, rig, WEATHER } from "./harness.ts";

driverScenarios("openai-compatible", {
  endTurn: "stop",
  toolUse: "tool_calls",
  maxTokens: "length",
});

Deno.test("openai-compatible: the Chat Completions request carries model, system, tools, max_tokens, history", async () => {
  const r = rig("openai-compatible", [{ steps: [{ text: "Sunny." }] }]);
  try {
    await collect(r.driver, requestAfterToolCall());
    assert.equal(r.fake.requests.length, 1);
    const { path, headers, body } = r.fake.requests[0];
    assert.equal(path, "/v1/chat/completions");
    assert.equal(headers["authorization"], `Bearer ${KEY}`);
    assert.ok(body);
    assert.equal(body.model, "llama3.2");
    assert.equal(body.max_tokens, 777);
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.deepEqual(body.tools, [{
      type: "function",
      function: {
        name: "weather",
        description: WEATHER.description,
        parameters: WEATHER.inputSchema,
      },
    }]);
    assert.deepEqual(body.messages, [
      { role: "system", content: "You are terse.\nAnswer in one line." },
      { role: "user", content: "What is the weather in Paris?" },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Paris"}' },
          },
          {
            id: "call_2",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: FENCED },
      { role: "tool", tool_call_id: "call_2", content: REFUSED },
    ]);
  } finally {
    await r.close();
  }
});

Deno.test("openai-compatible: a keyless local server gets no Authorization header", async () => {
  const r = rig("openai-compatible", [{ steps: [{ text: "hi" }] }], {
    cfg: { apiKey: undefined },
    fakeKey: undefined,
  });
  try {
    const parts = await collect(r.driver, requestAfterToolCall());
    assert.equal(parts.at(-1)?.type, "finish");
    assert.equal(r.fake.requests[0].headers["authorization"], undefined);
  } finally {
    await r.close();
  }
});

Deno.test("openai-compatible: a stream without finish_reason is a cut stream", async () => {
  const r = rig("openai-compatible", [
    { steps: [{ text: "lost" }], fault: { kind: "end", afterEvents: 1 } },
    { steps: [{ text: "Sunny " }, { text: "in Paris." }], fault: { kind: "end", afterEvents: 3 } },
  ]);
  try {
    const parts = await collect(r.driver, requestAfterToolCall());
    // Before any output: retried. After text: failed, the text kept as it was streamed.
    assert.deepEqual(parts.map((p) => p.type), ["retry", "text-delta", "text-delta", "error"]);
    const err = parts.at(-1);
    assert.ok(err?.type === "error" && /end-of-message/.test(err.message), JSON.stringify(err));
    assert.equal(r.fake.requests.length, 2);
  } finally {
    await r.close();
  }
});
