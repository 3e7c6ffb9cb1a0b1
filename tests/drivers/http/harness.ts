/** Shared setup for the http driver tests: a fake provider, a driver pointed at it, bounded reads. */
import type { InferenceConfig } from "../../../src/manifest/types.ts";
import type {
  ConversationMessage,
  Driver,
  DriverPart,
  ToolSpec,
  TurnRequest,
} from "../../../src/drivers/types.ts";
import { createHttpDriver, type HttpDriverOptions } from "../../../src/drivers/http/mod.ts";
import {
  type FakeProvider,
  type FakeProviderKind,
  startFakeProvider,
} from "../../../scripts/fakes/server.ts";
import type { FakeTurn } from "../../../scripts/fakes/plan.ts";

export type HttpDriverName = "anthropic" | "openai" | "openai-compatible";

export const FAKE_OF: Record<HttpDriverName, FakeProviderKind> = {
  "anthropic": "anthropic",
  "openai": "openai-responses",
  "openai-compatible": "openai-chat",
};

export const MODEL_OF: Record<HttpDriverName, string> = {
  "anthropic": "claude-haiku-4-5",
  "openai": "gpt-5-mini",
  "openai-compatible": "llama3.2",
};

export const KEY = "sk-test-fake-key-0123456789";

export const WEATHER: ToolSpec = {
  name: "weather",
  description: "Current weather for a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string", description: "City name" } },
    required: ["city"],
  },
};

export function config(
  driver: HttpDriverName,
  endpoint: string,
  over: Partial<InferenceConfig> = {},
): InferenceConfig {
  return {
    transport: "http",
    driver,
    model: MODEL_OF[driver],
    endpoint,
    apiKey: KEY,
    maxTurns: 10,
    maxTokens: 1024,
    systemPromptSource: "none",
    idleTimeoutSecs: 10,
    ...over,
  };
}

export function request(over: Partial<TurnRequest> = {}): TurnRequest {
  const messages: ConversationMessage[] = [{ role: "user", content: "What is the weather?" }];
  return {
    system: "You are terse.",
    messages,
    tools: [WEATHER],
    maxTokens: 1024,
    task: { id: "tsk_test", contextId: "ctx_test", text: "What is the weather?" },
    turn: 1,
    ...over,
  };
}

/** Fast retries, so tests of the retry path take milliseconds. */
export const FAST_RETRY: HttpDriverOptions = {
  retry: { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 20 },
};

export interface Rig {
  fake: FakeProvider;
  driver: Driver;
}

/** Start a fake with these turns and a driver on it; always `close()` in a finally. */
export function rig(
  name: HttpDriverName,
  turns: FakeTurn[],
  opts: { cfg?: Partial<InferenceConfig>; driver?: HttpDriverOptions; fakeKey?: string } = {},
): Rig & { close(): Promise<void> } {
  const fake = startFakeProvider({
    kind: FAKE_OF[name],
    apiKey: "fakeKey" in opts ? opts.fakeKey : KEY,
    turns,
  });
  const driver = createHttpDriver(config(name, fake.baseURL, opts.cfg), {
    ...FAST_RETRY,
    ...opts.driver,
  });
  return {
    fake,
    driver,
    async close() {
      await driver.close?.();
      await fake.close();
    },
  };
}

/** Every part of one turn, failing the test if it takes longer than `ms`. */
export async function collect(
  driver: Driver,
  req: TurnRequest,
  ms = 10_000,
  signal?: AbortSignal,
): Promise<DriverPart[]> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), ms);
  const both = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
  const parts: DriverPart[] = [];
  try {
    for await (const p of driver.turn(req, both)) parts.push(p);
  } finally {
    clearTimeout(timer);
  }
  if (deadline.signal.aborted) throw new Error(`turn did not end within ${ms} ms`);
  return parts;
}

export function kinds(parts: DriverPart[]): string[] {
  return parts.map((p) => p.type);
}

export function textOf(parts: DriverPart[]): string {
  return parts.map((p) => p.type === "text-delta" ? p.text : "").join("");
}

export function thinkingOf(parts: DriverPart[]): string {
  return parts.map((p) => p.type === "reasoning-delta" ? p.text : "").join("");
}

export function only<T extends DriverPart["type"]>(
  parts: DriverPart[],
  type: T,
): Extract<DriverPart, { type: T }>[] {
  return parts.filter((p): p is Extract<DriverPart, { type: T }> => p.type === type);
}

export const FENCED = "<untrusted-content source=tool:weather>\nsunny, 21 °C\n</untrusted-content>";
export const REFUSED = "tool 'weather' is not declared in manifest allowlist";

/** A request after one tool-calling turn: two calls, one answered, one refused. */
export function requestAfterToolCall(): TurnRequest {
  return request({
    system: "You are terse.\nAnswer in one line.",
    maxTokens: 777,
    turn: 2,
    messages: [
      { role: "user", content: "What is the weather in Paris?" },
      {
        role: "assistant",
        text: "Let me check.",
        reasoning: "The user wants the weather.",
        toolCalls: [
          { id: "call_1", name: "weather", input: { city: "Paris" } },
          { id: "call_2", name: "weather", input: { city: "Oslo" } },
        ],
      },
      {
        role: "tool",
        results: [
          { toolCallId: "call_1", toolName: "weather", content: FENCED, isError: false },
          { toolCallId: "call_2", toolName: "weather", content: REFUSED, isError: true },
        ],
      },
    ],
  });
}
