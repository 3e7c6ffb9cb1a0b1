/**
 * The Claude Code driver with the real `@anthropic-ai/claude-code` CLI (installed into .cache/
 * by the test setup; a failed install fails these tests), offline against the fake Anthropic
 * endpoint on loopback (scripts/fakes/claude_endpoint.ts). Every run has its own HOME and
 * CLAUDE_CODE_MAX_RETRIES.
 */
import assert from "node:assert/strict";
import { RATE_LIMIT_RESETS, startClaudeEndpoint } from "../../../scripts/fakes/claude_endpoint.ts";
import {
  FileSessionStore,
  type HarnessDriver,
  type HarnessPart,
} from "../../../src/drivers/process/mod.ts";
import type { ToolCall } from "../../../src/drivers/types.ts";
import type { ToolResult } from "../../../src/tools/types.ts";
import { alive, collect, fenced, harnessSetup, request, resultOf, traces } from "./helpers.ts";
import { ensureCli } from "./install.ts";
import type { HarnessSessionStore } from "../../../src/drivers/process/sessions.ts";

interface Setup {
  driver: HarnessDriver;
  endpoint: ReturnType<typeof startClaudeEndpoint>;
  cleanup(): Promise<void>;
}

async function setup(opts: {
  oauth?: boolean;
  retries?: number;
  rateLimitHeaders?: boolean;
  inactivityMs?: number;
  store?: HarnessSessionStore;
} = {}): Promise<Setup> {
  const endpoint = startClaudeEndpoint({
    rateLimitHeaders: opts.rateLimitHeaders,
    slowDeltaMs: 150,
  });
  return await harnessSetup({
    driver: "claude-code",
    command: await ensureCli("claude-code"),
    endpoint,
    env: () => [
      `ANTHROPIC_BASE_URL=${endpoint.url}`,
      `CLAUDE_CODE_MAX_RETRIES=${opts.retries ?? 0}`,
      opts.oauth ? "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake" : "ANTHROPIC_API_KEY=sk-ant-fake",
    ],
    context: {
      sessionStore: opts.store,
      limits: { inactivityMs: opts.inactivityMs ?? 30_000, interruptGraceMs: 5_000 },
    },
  });
}

const ECHO = {
  name: "echo",
  description: "Echo the text back",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
};

function texts(parts: HarnessPart[], type: "text-delta" | "reasoning-delta"): string {
  return parts.flatMap((p) => p.type === type ? [p.text] : []).join("");
}

Deno.test("claude cli: a text task streams, completes and reports usage", async () => {
  const s = await setup();
  try {
    const parts = await collect(s.driver, request({ system: "You are a test capsule." }));
    const r = resultOf(parts);
    assert.deepEqual(r.outcome, {
      status: "completed",
      text: "Hello from the fake server.",
      lastSegmentStreamedText: true,
    });
    assert.equal(texts(parts, "text-delta"), "Hello from the fake server.");
    const kinds = parts.filter((p) => p.type !== "trace").map((p) => p.type);
    assert.equal(kinds[0], "turn-start");
    assert.equal(kinds.filter((k) => k === "text-final").length, 1);
    const usage = parts.find((p) => p.type === "usage") as {
      inputTokens: number;
      outputTokens: number;
    };
    assert.deepEqual([usage.inputTokens, usage.outputTokens], [12, 9]);
    assert.equal(traces(parts, "harness_session")[0].auth, "api-key");
    assert.equal(traces(parts, "harness_warning").some((w) => w.code === "W-SEC-031"), true);
    // The system prompt reached the model through --system-prompt, as given (the session puts
    // the [Capsule] block first: tests/process_e2e/capsule_prompt_test.ts).
    const first = s.endpoint.requests.find((q) => q.path === "/v1/messages")!;
    const system = JSON.stringify(first.body?.system);
    assert.match(system, /You are a test capsule\./);
    assert.deepEqual(first.body?.tools ?? [], [], "no built-in tools are offered");
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: thinking streams as reasoning and opens no extra turn", async () => {
  const s = await setup();
  try {
    const parts = await collect(s.driver, request({ prompt: "THINKTEST" }));
    assert.equal(texts(parts, "reasoning-delta"), "Let me think about it.");
    assert.equal(texts(parts, "text-delta"), "Thought it through.");
    assert.equal(resultOf(parts).turns, 1);
    assert.equal(parts.filter((p) => p.type === "turn-start").length, 1);
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: a bridged tool call → tool-call-started, progress, a fenced tool result; a slow call is no inactivity", async () => {
  // The limit is far above how long the fake harness takes to start and call on a loaded
  // machine; the call outlasts it.
  const s = await setup({ inactivityMs: 8_000 });
  const calls: ToolCall[] = [];
  try {
    const parts = await collect(
      s.driver,
      request({
        prompt: 'MCPTEST {"text":"hi there"}',
        tools: [ECHO],
        dispatch: async (call: ToolCall): Promise<ToolResult> => {
          calls.push(call);
          // Longer than the inactivity limit: a request-input wait looks like this.
          await new Promise((r) => setTimeout(r, 9_000));
          return fenced("echo", `ECHO ${call.input.text}`);
        },
      }),
    );
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].input, { text: "hi there" });
    assert.match(calls[0].id, /^toolu_fake_/, "the harness's tool-use id came through _meta");
    const order = parts.filter((p) => p.type !== "trace").map((p) => p.type);
    const started = order.indexOf("tool-input-start");
    const result = order.indexOf("tool-result");
    assert.ok(started > order.indexOf("turn-start") && started < result);
    const start = parts.find((p) => p.type === "tool-input-start") as {
      id: string;
      toolName: string;
    };
    assert.deepEqual(start, { type: "tool-input-start", id: calls[0].id, toolName: "echo" });
    const progress = parts.filter((p) => p.type === "tool-input-progress") as {
      inputBytes: number;
    }[];
    assert.ok(progress.length >= 1);
    assert.equal(
      progress.at(-1)!.inputBytes,
      new TextEncoder().encode('{"text":"hi there"}').length,
    );
    const res = parts.find((p) => p.type === "tool-result") as Extract<
      HarnessPart,
      { type: "tool-result" }
    >;
    assert.deepEqual(res, {
      type: "tool-result",
      toolCallId: calls[0].id,
      toolName: "echo",
      content: "<untrusted-content source=tool:echo>\nECHO hi there\n</untrusted-content>",
      isError: false,
      fenceSource: "tool:echo",
      durationMs: 7,
    });
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "completed");
    assert.equal(r.turns, 2);
    assert.match(
      (r.outcome as { text: string }).text,
      /^Tool said: <untrusted-content source=tool:echo>/,
    );
    const starts = parts.flatMap((p) => p.type === "turn-start" ? [p.turn] : []);
    assert.deepEqual(starts, [1, 2]);
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: a refused call is an isError result with no fence source", async () => {
  const s = await setup();
  try {
    const parts = await collect(
      s.driver,
      request({
        prompt: 'MCPTEST {"text":"nope"}',
        tools: [ECHO],
        dispatch: () =>
          Promise.resolve({
            content: "tool 'echo' refused: path is read-only",
            fenceSource: null,
            isError: true,
            exitCode: null,
            truncated: false,
            durationMs: 0,
            images: [],
          }),
      }),
    );
    const res = parts.find((p) => p.type === "tool-result") as Extract<
      HarnessPart,
      { type: "tool-result" }
    >;
    assert.equal(res.isError, true);
    assert.equal(res.fenceSource, null);
    assert.match(res.content, /refused: path is read-only/);
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: unified rate-limit headers under subscription auth → quota", async () => {
  const s = await setup({ oauth: true, rateLimitHeaders: true });
  try {
    const parts = await collect(s.driver, request());
    assert.equal(traces(parts, "harness_session")[0].auth, "subscription");
    assert.equal(traces(parts, "harness_warning").some((w) => w.code === "W-SEC-031"), false);
    const q = parts.find((p) => p.type === "quota") as Extract<HarnessPart, { type: "quota" }>;
    assert.ok(q, `a quota part in ${JSON.stringify(parts.map((p) => p.type))}`);
    const five = q.windows.find((w) => w.name === "five-hour");
    assert.deepEqual(five, {
      name: "five-hour",
      used: 0.91,
      resetsAtMs: RATE_LIMIT_RESETS.fiveHour * 1000,
      windowMinutes: 300,
      state: "warning",
    });
    assert.equal(resultOf(parts).outcome.status, "completed");
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: a second task in a threaded context resumes the session and yields a suggested prompt", async () => {
  const s = await setup();
  try {
    const first = await collect(
      s.driver,
      request({ resume: "context", conversation: "threaded", prompt: "remember PINEAPPLE" }),
    );
    const sid = resultOf(first).sessionId;
    assert.ok(sid);
    const second = await collect(
      s.driver,
      request({
        task: { id: "tsk_b", contextId: "ctx_a", text: "again" },
        prompt: "again",
        resume: "context",
        conversation: "threaded",
      }),
    );
    const start = traces(second, "harness_start")[0];
    assert.equal(start.session_mode, "resume");
    assert.equal(start.harness_session_id, sid);
    assert.equal(resultOf(second).sessionId, sid);
    // The harness sent the earlier history with the new message.
    const again = s.endpoint.requests.find((q) => q.userText.includes("again"))!;
    assert.match(JSON.stringify(again.body?.messages), /PINEAPPLE/);
    const sp = second.find((p) => p.type === "suggested-prompt");
    assert.deepEqual(sp, { type: "suggested-prompt", text: "Run the test suite" });
    // It comes after the run's result was read and before the attempt's own result.
    const types = second.filter((p) => p.type !== "trace").map((p) => p.type);
    assert.ok(types.indexOf("suggested-prompt") > types.indexOf("usage"));
    assert.equal(types.at(-1), "result");
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: 429s → harness_retry traces and no other part; the failure is kind quota", async () => {
  const s = await setup({ retries: 2 });
  try {
    const parts = await collect(s.driver, request({ prompt: "FAIL429 please" }));
    const retries = traces(parts, "harness_retry");
    assert.deepEqual(retries, [
      { attempt: 1, reason: "rate_limit (429)" },
      { attempt: 2, reason: "rate_limit (429)" },
    ]);
    const visible = parts.filter((p) => p.type !== "trace" && p.type !== "usage").map((p) =>
      p.type
    );
    assert.deepEqual(visible, ["result"], "a retry writes no frame, and the error opens no turn");
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "E-RUN-033");
    assert.equal(r.outcome.kind, "quota");
    assert.match(r.outcome.message, /^the harness turn failed \(quota\): .*429/);
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: cancel mid-stream interrupts the harness → canceled, not killed", async () => {
  const s = await setup();
  const ac = new AbortController();
  try {
    const parts = await collect(s.driver, request({ prompt: "SLOWTEST" }), {
      signal: ac.signal,
      onPart: (p) => {
        if (p.type === "text-delta") ac.abort();
      },
    });
    const r = resultOf(parts);
    assert.deepEqual(r.outcome, { status: "canceled", killed: false, started: true });
    assert.deepEqual(traces(parts, "harness_interrupt")[0], {
      method: "stdin-message",
      delivered: true,
      grace_ms: 5_000,
    });
    assert.ok(!texts(parts, "text-delta").includes("tick 39"), "the stream stopped early");
    assert.ok(!parts.some((p) => p.type === "suggested-prompt"));
    assert.equal(traces(parts, "harness_exit")[0].killed, false);
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: a harness that dies mid-turn → a classified failure", async () => {
  const s = await setup();
  let pid = 0;
  try {
    const parts = await collect(s.driver, request({ prompt: "SLOWTEST" }), {
      onPart: (p) => {
        if (p.type === "trace" && p.eventType === "harness_start") pid = p.fields.pid as number;
        if (p.type === "text-delta" && pid) {
          Deno.kill(pid, "SIGKILL");
          pid = -pid;
        }
      },
    });
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "E-RUN-033");
    assert.equal(r.outcome.kind, "harness-error");
    assert.match(r.outcome.message, /the harness was killed by SIGKILL without a result/);
    assert.equal(alive(-pid), false);
  } finally {
    await s.cleanup();
  }
});

Deno.test("claude cli: resuming a session the harness no longer has is E-RUN-036, the map untouched", async () => {
  const store = await FileSessionStore.open(null);
  const gone = "99999999-8888-4777-8666-555555555555";
  await store.setContext("ctx_a", gone);
  const s = await setup({ store });
  try {
    const parts = await collect(s.driver, request({ resume: "context", conversation: "threaded" }));
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "E-RUN-036");
    assert.match(r.outcome.message, new RegExp(gone));
    assert.equal(store.getContext("ctx_a"), gone);
  } finally {
    await s.cleanup();
  }
});
