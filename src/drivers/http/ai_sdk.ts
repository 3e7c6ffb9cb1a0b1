/**
 * One model call through the AI SDK, mapped to driver parts. The SDK's own retries are off
 * (`maxRetries: 0`, no `streamRetries`): the driver retries around this call so every attempt is
 * seen and reported. The first error part ends the call: the SDK would go on reading after a
 * malformed chunk, but a response with a hole in it cannot be acted on.
 */
import { streamText } from "ai";
import type { DriverPart, ToolCall, TurnRequest } from "../types.ts";
import { toModelMessages, toToolSet } from "./conversation.ts";
import { type CallFailure, classifyFailure, CUT_STREAM } from "./failure.ts";
import { formatSecs, IdleWatch } from "./idle.ts";
import type { ProviderAdapter } from "./provider.ts";

// The SDK logs its call warnings (e.g. an option a model does not support) to the console; mur's
// stderr is for diagnostics of its own, so they are silenced.
(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS = false;

export interface CallSettings {
  adapter: ProviderAdapter;
  model: string;
  endpoint?: string;
  apiKey?: string;
  fetch: typeof fetch;
  idleTimeoutSecs: number;
}

/** How one call ended, when it did not finish: the retry loop decides what follows. */
export type CallEnd =
  | { kind: "finished" }
  | { kind: "aborted" }
  | { kind: "failed"; failure: CallFailure };

// Why long: one generator over the AI SDK's stream parts; each part kind is a few lines of one
// switch that shares the call's state (text open, tool input, usage).
export async function* callOnce(
  s: CallSettings,
  req: TurnRequest,
  signal: AbortSignal,
): AsyncGenerator<DriverPart, CallEnd> {
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(signal.reason);
  signal.addEventListener("abort", onAbort);
  const idle = new IdleWatch(s.idleTimeoutSecs * 1000, () => ctrl.abort(new Error("stalled")));
  const stallFailure = (): CallEnd => ({
    kind: "failed",
    failure: {
      cause: "driver_error",
      retryable: false,
      message: `the model stream stalled for ${formatSecs(s.idleTimeoutSecs)} s ` +
        `(inference.idle_timeout_secs) and was abandoned`,
    },
  });
  const failed = (error: unknown): CallEnd => ({
    kind: "failed",
    failure: classifyFailure(error, s.adapter.driver, s.adapter.keyEnv),
  });
  try {
    idle.touch();
    const model = s.adapter.model({
      model: s.model,
      endpoint: s.endpoint,
      apiKey: s.apiKey,
      fetch: idle.wrap(s.fetch),
    });
    const result = streamText({
      model,
      system: req.system,
      messages: toModelMessages(req.messages, { markToolErrors: s.adapter.marksToolErrors }),
      tools: req.tools.length > 0 ? toToolSet(req.tools) : undefined,
      maxOutputTokens: req.maxTokens,
      maxRetries: 0,
      abortSignal: ctrl.signal,
      providerOptions: s.adapter.providerOptions,
      // Errors arrive as parts of the stream and are handled there; the default prints them.
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta":
          if (part.text !== "") yield { type: "text-delta", text: part.text };
          break;
        case "reasoning-delta":
          // Anthropic closes a thinking block with an empty delta carrying its signature.
          if (part.text !== "") yield { type: "reasoning-delta", text: part.text };
          break;
        case "tool-input-start":
          yield { type: "tool-input-start", id: part.id, toolName: part.toolName };
          break;
        case "tool-input-delta":
          if (part.delta !== "") yield { type: "tool-input-delta", id: part.id, delta: part.delta };
          break;
        case "tool-call":
          yield { type: "tool-call", call: toolCallOf(part.toolCallId, part.toolName, part.input) };
          break;
        case "error":
          if (signal.aborted) return { kind: "aborted" };
          if (idle.stalled) return stallFailure();
          return failed(part.error);
        case "abort":
          if (idle.stalled) return stallFailure();
          return { kind: "aborted" };
        case "finish": {
          if (part.finishReason === "error") {
            // An error part comes first and ends the call; this is the belt to that brace.
            return {
              kind: "failed",
              failure: {
                cause: "driver_error",
                retryable: false,
                message: "the provider ended the stream with an error",
              },
            };
          }
          if (part.finishReason === "interrupted") {
            // The SDK saw the body end without the provider's end-of-message event.
            return { kind: "failed", failure: CUT_STREAM };
          }
          const raw = part.rawFinishReason;
          const u = part.totalUsage;
          if (u.inputTokens !== undefined || u.outputTokens !== undefined) {
            yield {
              type: "usage",
              inputTokens: u.inputTokens ?? 0,
              outputTokens: u.outputTokens ?? 0,
            };
          }
          yield {
            type: "finish",
            stopReason: raw ?? s.adapter.stopReasonWithoutRaw ?? "",
            maxTokensCut: part.finishReason === "length",
          };
          return { kind: "finished" };
        }
        default:
          // text-start/-end, reasoning-start/-end, tool-input-end, start, start-step,
          // finish-step, custom, source, raw: nothing the loop acts on.
          break;
      }
    }
    // The SDK always closes with `finish`, `error` or `abort`; reaching here means neither.
    if (signal.aborted) return { kind: "aborted" };
    if (idle.stalled) return stallFailure();
    return {
      kind: "failed",
      failure: {
        cause: "driver_error",
        retryable: true,
        message: "the model stream ended without a finish",
      },
    };
  } catch (error) {
    if (signal.aborted) return { kind: "aborted" };
    if (idle.stalled) return stallFailure();
    return failed(error);
  } finally {
    idle.stop();
    signal.removeEventListener("abort", onAbort);
    // Ends the HTTP request when the call stopped early (an error part, or the consumer left).
    ctrl.abort();
  }
}

/**
 * The SDK parses the input; a call it could not match or parse (`invalid`) still reaches the
 * loop, which refuses it to the model with its own message. Input that is not a JSON object
 * becomes `{}`.
 */
function toolCallOf(id: string, name: string, input: unknown): ToolCall {
  let value = input;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      value = {};
    }
  }
  const obj = value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
  return { id, name, input: obj };
}
