/**
 * The behaviour every http driver shares, run against each driver's own fake provider: the same
 * plan rendered in three wire formats must come out as the same driver parts.
 */
import assert from "node:assert/strict";
import {
  collect,
  type HttpDriverName,
  KEY,
  kinds,
  only,
  request,
  rig,
  textOf,
  thinkingOf,
} from "./harness.ts";

export interface StopWords {
  /** The provider's verbatim stop reason for a plain answer, a tool call and the token cap. */
  endTurn: string;
  toolUse: string;
  maxTokens: string;
}

export function driverScenarios(name: HttpDriverName, stop: StopWords): void {
  const t = (what: string, fn: () => Promise<void>) => Deno.test(`${name}: ${what}`, fn);

  t("streams text deltas, then usage, then the provider's stop reason", async () => {
    const r = rig(name, [{
      steps: [{ text: "Sunny " }, { text: "in " }, { text: "Paris." }],
      usage: { input: 321, output: 45 },
    }]);
    try {
      const parts = await collect(r.driver, request());
      assert.deepEqual(only(parts, "text-delta").map((p) => p.text), ["Sunny ", "in ", "Paris."]);
      assert.deepEqual(kinds(parts).slice(-2), ["usage", "finish"]);
      assert.deepEqual(only(parts, "usage"), [{
        type: "usage",
        inputTokens: 321,
        outputTokens: 45,
      }]);
      assert.deepEqual(parts.at(-1), {
        type: "finish",
        stopReason: stop.endTurn,
        maxTokensCut: false,
      });
      assert.equal(r.fake.requests.length, 1);
    } finally {
      await r.close();
    }
  });

  t("streams reasoning as reasoning deltas, before the text", async () => {
    const r = rig(name, [{
      steps: [{ thinking: "The user wants " }, { thinking: "the weather." }, { text: "Sunny." }],
    }]);
    try {
      const parts = await collect(r.driver, request());
      assert.equal(thinkingOf(parts), "The user wants the weather.");
      assert.equal(textOf(parts), "Sunny.");
      const firstText = kinds(parts).indexOf("text-delta");
      const lastThinking = kinds(parts).lastIndexOf("reasoning-delta");
      assert.ok(lastThinking < firstText, kinds(parts).join(","));
    } finally {
      await r.close();
    }
  });

  t("streams a tool call: start, input in several deltas, the complete call", async () => {
    const input = { city: "Paris", units: "metric", note: "naïve café ☕" };
    const r = rig(name, [{
      steps: [
        { text: "Let me check. " },
        { toolCall: { id: "call_w1", name: "weather", input, chunks: 4 } },
      ],
    }]);
    try {
      const parts = await collect(r.driver, request());
      const started = only(parts, "tool-input-start");
      assert.deepEqual(started, [{ type: "tool-input-start", id: "call_w1", toolName: "weather" }]);
      const deltas = only(parts, "tool-input-delta");
      assert.ok(deltas.length >= 2, `expected several input deltas, got ${deltas.length}`);
      assert.ok(deltas.every((d) => d.id === "call_w1"));
      assert.deepEqual(JSON.parse(deltas.map((d) => d.delta).join("")), input);
      assert.deepEqual(only(parts, "tool-call"), [{
        type: "tool-call",
        call: { id: "call_w1", name: "weather", input },
      }]);
      const k = kinds(parts);
      assert.ok(k.indexOf("tool-input-start") < k.indexOf("tool-input-delta"));
      assert.ok(k.lastIndexOf("tool-input-delta") < k.indexOf("tool-call"));
      assert.deepEqual(parts.at(-1), {
        type: "finish",
        stopReason: stop.toolUse,
        maxTokensCut: false,
      });
    } finally {
      await r.close();
    }
  });

  t("a call to a tool the capsule did not declare still reaches the loop", async () => {
    const r = rig(name, [{
      steps: [{ toolCall: { id: "call_x", name: "no-such-tool", input: { a: 1 } } }],
    }]);
    try {
      const parts = await collect(r.driver, request());
      assert.deepEqual(only(parts, "tool-call").map((p) => p.call), [
        { id: "call_x", name: "no-such-tool", input: { a: 1 } },
      ]);
      assert.equal(parts.at(-1)?.type, "finish");
    } finally {
      await r.close();
    }
  });

  t("a turn cut at max_tokens keeps its text and says so", async () => {
    const r = rig(name, [{ steps: [{ text: "The answer is lo" }], stop: "max_tokens" }]);
    try {
      const parts = await collect(r.driver, request({ maxTokens: 5 }));
      assert.equal(textOf(parts), "The answer is lo");
      assert.deepEqual(parts.at(-1), {
        type: "finish",
        stopReason: stop.maxTokens,
        maxTokensCut: true,
      });
    } finally {
      await r.close();
    }
  });

  t("401: credential_rejected naming the status, never the key, not retried", async () => {
    const r = rig(name, [{ steps: [{ text: "never" }] }], { fakeKey: "the-right-key" });
    try {
      const parts = await collect(r.driver, request());
      assert.deepEqual(kinds(parts), ["error"]);
      const [err] = only(parts, "error");
      assert.equal(err.cause, "credential_rejected");
      assert.equal(err.status, 401);
      assert.match(err.message, /HTTP 401/);
      assert.ok(!err.message.includes(KEY), err.message);
      assert.ok(
        !err.message.includes(KEY.slice(-4)),
        `message repeats part of the key: ${err.message}`,
      );
      assert.equal(r.fake.requests.length, 1);
    } finally {
      await r.close();
    }
  });

  t("429 then success: one retry part, then the answer", async () => {
    const r = rig(name, [
      { steps: [], fault: { kind: "status", status: 429, retryAfterSecs: 0 } },
      { steps: [{ text: "Sunny." }] },
    ]);
    try {
      const parts = await collect(r.driver, request());
      assert.deepEqual(kinds(parts), ["retry", "text-delta", "usage", "finish"]);
      const [retry] = only(parts, "retry");
      assert.equal(retry.attempt, 1);
      assert.match(retry.reason, /HTTP 429/);
      assert.equal(r.fake.requests.length, 2);
    } finally {
      await r.close();
    }
  });

  t("5xx on every attempt: retries until the budget is spent, then a driver_error", async () => {
    const down = { steps: [], fault: { kind: "status" as const, status: 503 } };
    const r = rig(name, [down, down, down], {
      driver: { retry: { maxRetries: 2, baseDelayMs: 5 } },
    });
    try {
      const parts = await collect(r.driver, request());
      assert.deepEqual(kinds(parts), ["retry", "retry", "error"]);
      assert.deepEqual(only(parts, "retry").map((p) => p.attempt), [1, 2]);
      const [err] = only(parts, "error");
      assert.equal(err.cause, "driver_error");
      assert.equal(err.status, 503);
      assert.match(err.message, /HTTP 503/);
      assert.match(err.message, /gave up after 2 retries/);
      assert.equal(r.fake.requests.length, 3);
    } finally {
      await r.close();
    }
  });

  t("a stream cut before any output is retried transparently", async () => {
    const r = rig(name, [
      { steps: [{ text: "lost" }], fault: { kind: "cut", afterEvents: 1 } },
      { steps: [{ text: "Sunny." }] },
    ]);
    try {
      const parts = await collect(r.driver, request());
      assert.deepEqual(kinds(parts), ["retry", "text-delta", "usage", "finish"]);
      assert.match(only(parts, "retry")[0].reason, /cut off/);
      assert.equal(textOf(parts), "Sunny.");
      assert.equal(r.fake.requests.length, 2);
    } finally {
      await r.close();
    }
  });

  t("a stream cut after text was streamed fails rather than repeat the text", async () => {
    const r = rig(name, [
      {
        steps: ["It ", "is ", "sunny ", "in ", "Paris ", "today."].map((text) => ({ text })),
        // Mid-text on every wire: after 2 (Anthropic), 4 (Chat) or 1 (Responses) text deltas.
        fault: { kind: "cut", afterEvents: 5 },
      },
      { steps: [{ text: "never asked for" }] },
    ]);
    try {
      const parts = await collect(r.driver, request());
      const text = textOf(parts);
      const full = "It is sunny in Paris today.";
      assert.ok(text.length > 0 && text.length < full.length && full.startsWith(text), text);
      assert.equal(parts.at(-1)?.type, "error");
      assert.equal(only(parts, "retry").length, 0);
      const [err] = only(parts, "error");
      assert.equal(err.cause, "driver_error");
      assert.match(err.message, /cut off/);
      assert.match(err.message, /not retried/);
      assert.equal(r.fake.requests.length, 1);
    } finally {
      await r.close();
    }
  });

  t("a malformed chunk fails the turn as malformed_response", async () => {
    const r = rig(name, [
      {
        steps: [{ text: "Sunny " }, { text: "in Paris." }],
        fault: { kind: "malformed", afterEvents: 3 },
      },
    ]);
    try {
      const parts = await collect(r.driver, request());
      assert.equal(parts.at(-1)?.type, "error");
      const [err] = only(parts, "error");
      assert.equal(err.cause, "malformed_response");
      assert.match(err.message, /not valid JSON/);
      assert.equal(only(parts, "finish").length, 0);
      assert.equal(r.fake.requests.length, 1);
    } finally {
      await r.close();
    }
  });

  t("a stream silent beyond idle_timeout_secs fails with the stall named", async () => {
    const r = rig(name, [
      {
        steps: [{ text: "Sunny " }, { text: "in Paris." }],
        fault: { kind: "stall", afterEvents: 4 },
      },
    ], { cfg: { idleTimeoutSecs: 0.3 } });
    try {
      // The stalled stream never sends again: only the idle timeout can end the turn.
      const parts = await collect(r.driver, request(), 30_000);
      assert.equal(parts.at(-1)?.type, "error");
      const [err] = only(parts, "error");
      assert.equal(err.cause, "driver_error");
      assert.match(err.message, /model stream stalled for 0\.3 s/);
      assert.equal(r.fake.requests.length, 1);
    } finally {
      await r.close();
    }
  });

  t("a slow but live stream is not a stall", async () => {
    const r = rig(name, [{
      steps: [{ text: "a" }, { delayMs: 200 }, { text: "b" }, { delayMs: 200 }, { text: "c" }],
    }], { cfg: { idleTimeoutSecs: 3 } });
    try {
      const parts = await collect(r.driver, request(), 5_000);
      assert.equal(textOf(parts), "abc");
      assert.equal(parts.at(-1)?.type, "finish");
    } finally {
      await r.close();
    }
  });

  t("aborting the signal ends the turn with no further part", async () => {
    const r = rig(name, [{
      // A minute's pause: a turn that ends at all in this test ended by the abort.
      steps: [{ text: "first " }, { delayMs: 60_000 }, { text: "never" }],
    }]);
    try {
      const ctrl = new AbortController();
      const parts = [];
      for await (const p of r.driver.turn(request(), ctrl.signal)) {
        parts.push(p);
        if (p.type === "text-delta") ctrl.abort();
      }
      assert.deepEqual(kinds(parts), ["text-delta"]);
    } finally {
      await r.close();
    }
  });
}
