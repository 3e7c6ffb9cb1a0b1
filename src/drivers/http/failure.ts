/**
 * What went wrong with one model call, decided once: the cause the loop reports, whether a retry
 * can help, and a message a person can act on. A credential refusal never repeats the provider's
 * body, since some providers echo part of the refused key in it.
 */
import { APICallError, JSONParseError, LoadAPIKeyError, TypeValidationError } from "ai";
import { InvalidResponseDataError, NoOutputGeneratedError } from "ai";
import type { DriverErrorCause } from "../types.ts";

export interface CallFailure {
  cause: DriverErrorCause;
  message: string;
  /** 429, 5xx, a dropped connection or stream: worth another attempt. */
  retryable: boolean;
  status?: number;
  /** The provider's `retry-after`, in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

const MAX_DETAIL = 500;

/** A body that ended without the provider's end-of-message event (a proxy or network cut). */
export const CUT_STREAM: CallFailure = {
  cause: "driver_error",
  retryable: true,
  message: "the model stream was cut off before it finished: " +
    "it ended without the provider's end-of-message event",
};

export function classifyFailure(error: unknown, driver: string, keyEnv?: string): CallFailure {
  if (APICallError.isInstance(error)) return fromApiCall(error, driver, keyEnv);
  if (JSONParseError.isInstance(error)) {
    return {
      cause: "malformed_response",
      retryable: false,
      message: `the provider sent a chunk that is not valid JSON: ${detail(error.text, 200)}`,
    };
  }
  if (
    NoOutputGeneratedError.isInstance(error) ||
    (InvalidResponseDataError.isInstance(error) && /ended without a finish/.test(error.message))
  ) {
    return CUT_STREAM;
  }
  if (TypeValidationError.isInstance(error) || InvalidResponseDataError.isInstance(error)) {
    return {
      cause: "malformed_response",
      retryable: false,
      message: `the provider sent a chunk that does not match its API's format: ${
        detail(errorText(error))
      }`,
    };
  }
  if (LoadAPIKeyError.isInstance(error)) {
    return {
      cause: "credential_rejected",
      retryable: false,
      message: `no API key for the ${driver} driver: set inference.api_key` +
        (keyEnv ? ` (or ${keyEnv})` : ""),
    };
  }
  if (isStreamProviderError(error)) {
    // The provider's own error event inside an open stream (Anthropic `overloaded_error`,
    // OpenAI `server_error`).
    const kind = error.type ? `${error.type}: ` : "";
    return {
      cause: "driver_error",
      retryable: error.isRetryable === true,
      status: error.statusCode,
      message: `the provider reported an error in the stream: ${kind}${detail(error.message)}`,
    };
  }
  // Anything else thrown while the request or its body was in flight is the network: a refused
  // connection, a reset, a body that broke off.
  return {
    cause: "driver_error",
    retryable: true,
    message: `the connection to the provider failed: ${detail(errorText(error))}`,
  };
}

function fromApiCall(e: APICallError, driver: string, keyEnv?: string): CallFailure {
  const status = e.statusCode;
  const retryAfterMs = retryAfter(e.responseHeaders);
  if (status === 401 || status === 403) {
    const where = keyEnv ? `inference.api_key (or ${keyEnv})` : "inference.api_key";
    return {
      cause: "credential_rejected",
      retryable: false,
      status,
      message: `the provider rejected the ${driver} credential (HTTP ${status}): check ${where}`,
    };
  }
  if (status === undefined || (status >= 200 && status < 300)) {
    // The request was answered, then the stream broke off (or it never connected).
    const why = errorText(e.cause ?? e);
    return {
      cause: "driver_error",
      retryable: true,
      message: status === undefined
        ? `could not reach the provider at ${originOf(e.url)}: ${detail(why)}`
        : `the model stream was cut off before it finished: ${detail(why)}`,
    };
  }
  const said = providerMessage(e.responseBody) ?? e.message;
  return {
    cause: "driver_error",
    retryable: e.isRetryable,
    status,
    retryAfterMs,
    message: `the provider answered HTTP ${status}: ${detail(said)}${
      status === 404 && driver === "openai-compatible" ? missingV1(e.url) : ""
    }`,
  };
}

/**
 * An OpenAI-compatible server's 404 for a path without `/v1` is most often an `endpoint` given
 * without it (Ollama, vLLM and llama.cpp serve the API under `/v1`); said beside the 404.
 */
function missingV1(url: string | undefined): string {
  let path = "";
  try {
    path = new URL(url ?? "").pathname;
  } catch {
    return "";
  }
  if (/(^|\/)v\d+(\/|$)/.test(path)) return "";
  const base = url!.slice(0, url!.length - path.length) + path.replace(/\/chat\/completions$/, "");
  return ` (the request went to ${url}; OpenAI-compatible servers usually serve their API under /v1: try inference.endpoint: ${
    base.replace(/\/+$/, "")
  }/v1)`;
}

interface StreamProviderErrorLike {
  name: string;
  message: string;
  type?: string;
  statusCode?: number;
  isRetryable?: boolean;
}

function isStreamProviderError(e: unknown): e is StreamProviderErrorLike {
  return e instanceof Error && e.name === "AI_StreamProviderError";
}

/** The `message` of the error body both Anthropic and OpenAI use: `{"error":{"message":…}}`. */
function providerMessage(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body);
    const m = parsed?.error?.message ?? parsed?.message;
    const type = parsed?.error?.type;
    if (typeof m === "string") return typeof type === "string" ? `${type}: ${m}` : m;
  } catch {
    // not JSON: the body itself says what happened
  }
  return body.trim() || undefined;
}

function retryAfter(headers: Record<string, string> | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0 && headers["retry-after-ms"] !== undefined) return ms;
  const value = headers["retry-after"];
  if (value === undefined) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    const inner = e.cause instanceof Error ? e.cause.message : undefined;
    return inner && inner !== e.message ? `${e.message} (${inner})` : e.message;
  }
  return String(e);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function detail(s: string, max = MAX_DETAIL): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}
