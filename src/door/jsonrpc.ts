/**
 * The JSON-RPC 2.0 envelope of the door: parsing, the checks in the documented order, and the
 * error bodies (docs/protocol.md "Refusals"). Every answer is HTTP 200 with one JSON body.
 */

import { envelope, type RpcId } from "../a2a/envelope.ts";
import { RPC_ERRORS, type RpcCode, type RpcErrorName } from "../diagnostics.ts";

export type { RpcId };

export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown[];
}

export class RpcError extends Error {
  constructor(
    readonly code: RpcCode,
    message: string,
    readonly data?: unknown[],
  ) {
    super(message);
  }
}

/** The JSON-RPC 2.0 errors: a code from the registry and a message. */
type PlainErrorName = { [K in RpcErrorName]: RpcErrorOf<K>["reason"] extends null ? K : never }[
  RpcErrorName
];
/** A2A's errors, which carry a reason. */
type A2aErrorName = Exclude<RpcErrorName, PlainErrorName>;
type RpcErrorOf<K extends RpcErrorName> = (typeof RPC_ERRORS)[K];

export function rpcError(name: PlainErrorName, message: string): RpcError {
  return new RpcError(RPC_ERRORS[name].code, message);
}

/** A2A errors carry one google.rpc.ErrorInfo in `data` (string metadata values only). */
export function a2aError(
  name: A2aErrorName,
  message: string,
  metadata: Record<string, string> = {},
): RpcError {
  const { code, reason } = RPC_ERRORS[name];
  return new RpcError(code, message, [{
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason,
    domain: "a2a-protocol.org",
    metadata,
  }]);
}

export const invalidParams = (message: string) => rpcError("invalidParams", message);

export function taskNotFound(taskId: string): RpcError {
  return a2aError("taskNotFound", "Task not found", { taskId });
}

export function unsupported(message: string, metadata: Record<string, string> = {}): RpcError {
  return a2aError("unsupportedOperation", message, metadata);
}

export function rpcResult(id: RpcId, result: unknown): string {
  return envelope(id, "result", result);
}

export function rpcErrorBody(id: RpcId, e: RpcError): string {
  const error: RpcErrorBody = { code: e.code, message: e.message };
  if (e.data) error.data = e.data;
  return envelope(id, "error", error);
}

export interface Envelope {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
}

/** A valid id is a string or an integer; anything else makes the request invalid. */
function validId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

/**
 * JSON nested deeper than this is refused as unparsable (parseError) before it is parsed: parsing a
 * deeply nested text costs time linear in its depth on the door's one thread (an 8 MiB body of
 * `[` is about 4 million levels and seconds of stall for every other client), and no A2A
 * message needs more than a few dozen. RFC 8259 §9 lets a parser limit nesting.
 */
export const MAX_JSON_DEPTH = 512;

/** Does the JSON text nest arrays and objects deeper than `limit`? One pass, strings skipped. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/**
 * Parses the body into an envelope, or returns `{id, error}` (not JSON, or not a JSON-RPC 2.0
 * request); the id is echoed when it was valid.
 */
export function parseEnvelope(body: string): Envelope | { id: RpcId; error: RpcError } {
  let value: unknown;
  try {
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) throw new Error("nested too deep");
    value = JSON.parse(body);
  } catch {
    return { id: null, error: rpcError("parseError", "Invalid JSON payload") };
  }
  const invalid = (id: RpcId) => ({
    id,
    error: rpcError("invalidRequest", "Request payload validation error"),
  });
  if (typeof value !== "object" || value === null || Array.isArray(value)) return invalid(null);
  const v = value as Record<string, unknown>;
  const id = validId(v.id) ? v.id : null;
  if (v.jsonrpc !== "2.0" || typeof v.method !== "string" || !validId(v.id)) return invalid(id);
  return {
    id: v.id,
    method: v.method,
    params: v.params as Record<string, unknown>,
  };
}

/**
 * `A2A-Version`: exactly one line, `1.0` or `1.0.<digits>` (docs/protocol.md "Refusals", check 6).
 */
export function checkVersion(headers: Headers): RpcError | null {
  return checkVersionValue(headers.get("a2a-version"));
}

/** The same check of a value as `Headers#get` gives it (lines joined with ", "), or null. */
export function checkVersionValue(raw: string | null): RpcError | null {
  // Headers joins repeated lines with ", ": two lines are two values, refused even if both 1.0.
  const values = raw === null ? [] : raw.split(",").map((s) => s.trim());
  if (values.length === 1 && /^1\.0(\.\d+)?$/.test(values[0])) return null;
  const requested = values.join(", ");
  return a2aError(
    "versionNotSupported",
    raw === null
      ? "the A2A-Version header is missing; this agent speaks 1.0: send A2A-Version: 1.0"
      : `A2A version '${requested}' is not supported; this agent speaks 1.0`,
    { requestedVersion: requested, supportedVersions: "1.0" },
  );
}

export { param } from "../a2a/proto_json.ts";
