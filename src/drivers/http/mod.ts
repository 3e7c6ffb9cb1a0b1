/**
 * The http drivers (`anthropic`, `openai`, `openai-compatible`): one inference turn is one model
 * call with the capsule's tools declared and none run, streamed as driver parts.
 *
 * Retries: a 429, a 5xx (Anthropic's 529 included), a refused or dropped connection, a provider
 * error event marked retryable, or a stream cut before its end-of-message event is retried with
 * backoff, each retry reported as a `retry` part (trace only, no frame). A call is retried only
 * while nothing of it has been streamed: text, thinking and tool-call frames are written live and
 * never withdrawn, so a second attempt after them would repeat or contradict what watchers already
 * saw. Such a turn fails (`driver_error`) with a message saying the stream was cut mid-reply.
 */
import { MurError } from "../../errors.ts";
import type { InferenceConfig } from "../../manifest/types.ts";
import type { Driver, DriverPart, TurnRequest } from "../types.ts";
import { callOnce } from "./ai_sdk.ts";
import { anthropicAdapter } from "./anthropic.ts";
import { openaiAdapter } from "./openai.ts";
import { openaiCompatibleAdapter } from "./openai_compatible.ts";
import type { ProviderAdapter } from "./provider.ts";
import { backoffMs, DEFAULT_RETRY, formatDelay, type RetryPolicy, sleep } from "./retry.ts";

export interface HttpDriverOptions {
  /** Retry policy; every field optional (defaults: 4 retries, 1 s doubling to 30 s). */
  retry?: Partial<RetryPolicy>;
  /** The fetch the provider SDK calls. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Reads the default key variable when `api_key` is absent. Default `Deno.env.get`. */
  env?: (name: string) => string | undefined;
}

const ADAPTERS: Record<string, ProviderAdapter> = {
  "anthropic": anthropicAdapter,
  "openai": openaiAdapter,
  "openai-compatible": openaiCompatibleAdapter,
};

/** Build the driver; throws `E-RUN-005` when the config cannot make a call at all. */
// Why long: the driver object built in one place: its turn closure, retries and idle timeout share
// the provider adapter and settings made here.
export function createHttpDriver(cfg: InferenceConfig, opts: HttpDriverOptions = {}): Driver {
  const adapter = ADAPTERS[cfg.driver];
  if (!adapter) {
    throw new MurError("E-RUN-005", `'${cfg.driver}' is not an http model driver`);
  }
  if (!cfg.model) {
    throw new MurError(
      "E-RUN-005",
      `inference.model is required for driver ${cfg.driver}`,
      "name the provider's model id, e.g. model: claude-haiku-4-5",
    );
  }
  const endpoint = cfg.endpoint ? cfg.endpoint.replace(/\/+$/, "") : undefined;
  if (adapter.endpointRequired && !endpoint) {
    throw new MurError(
      "E-RUN-005",
      `inference.endpoint is required for driver ${cfg.driver}`,
      "give the server's OpenAI-compatible base URL, e.g. endpoint: http://localhost:11434/v1",
    );
  }
  const env = opts.env ?? ((name: string) => Deno.env.get(name));
  const apiKey = nonEmpty(cfg.apiKey) ??
    (adapter.keyEnv ? nonEmpty(env(adapter.keyEnv)) : undefined);
  if (adapter.keyRequired && !apiKey) {
    throw new MurError(
      "E-RUN-005",
      `no API key for driver ${cfg.driver}: inference.api_key is not set` +
        (adapter.keyEnv ? ` and ${adapter.keyEnv} is empty` : ""),
      `set api_key: \${${adapter.keyEnv}} in the manifest and export ${adapter.keyEnv}`,
    );
  }
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...opts.retry };
  const settings = {
    adapter,
    model: cfg.model,
    endpoint,
    apiKey,
    fetch: opts.fetch ?? globalThis.fetch,
    idleTimeoutSecs: cfg.idleTimeoutSecs,
  };

  return {
    name: cfg.driver,
    model: cfg.model,
    async *turn(req: TurnRequest, signal: AbortSignal): AsyncIterable<DriverPart> {
      for (let retry = 0;; retry++) {
        if (signal.aborted) return;
        const call = callOnce(settings, req, signal);
        let streamed = false;
        let end;
        for (;;) {
          const step = await call.next();
          if (step.done) {
            end = step.value;
            break;
          }
          const part = step.value;
          if (part.type !== "usage" && part.type !== "finish") streamed = true;
          yield part;
        }
        if (end.kind !== "failed") return;
        const f = end.failure;
        if (signal.aborted) return;
        if (f.retryable && !streamed && retry < policy.maxRetries) {
          const delay = backoffMs(policy, retry + 1, f.retryAfterMs);
          yield {
            type: "retry",
            attempt: retry + 1,
            reason: `${f.message}; retry ${retry + 1} of ${policy.maxRetries} in ${
              formatDelay(delay)
            }`,
          };
          if (!await sleep(delay, signal)) return;
          continue;
        }
        let message = f.message;
        if (f.retryable && streamed) {
          message += " (not retried: part of the reply had already been streamed)";
        } else if (f.retryable && retry > 0) {
          message += ` (gave up after ${retry} ${retry === 1 ? "retry" : "retries"})`;
        }
        yield { type: "error", cause: f.cause, message, status: f.status };
        return;
      }
    },
  };
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === "" ? undefined : s;
}
