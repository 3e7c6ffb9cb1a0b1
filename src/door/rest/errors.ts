/**
 * The HTTP+JSON binding's error form (A2A v1.0 §11.6, docs/protocol.md "HTTP+JSON"): a
 * `google.rpc.Status` body `{"error": {code, status, message, details}}` whose `code` is the HTTP
 * status. Every refusal is made once, as the RpcError the JSON-RPC binding answers, and rendered
 * here: the HTTP status and canonical status name come from its JSON-RPC code (§5.4's table), and
 * its `data` (the ErrorInfo of an A2A error) becomes `details`.
 */
import { RPC_ERRORS, type RpcErrorName } from "../../diagnostics.ts";
import type { RpcError } from "../jsonrpc.ts";

/** Error bodies are plain JSON (google.rpc.Status is not an A2A object; the kit reads `application/json`). */
export const REST_ERROR_HEADERS = { "content-type": "application/json" };

/** Each error of the registry → HTTP status and google.rpc.Code name (A2A v1.0 §5.4). */
const STATUS_BY_NAME: Record<RpcErrorName, readonly [number, string]> = {
  taskNotFound: [404, "NOT_FOUND"],
  taskNotCancelable: [400, "FAILED_PRECONDITION"],
  pushNotificationNotSupported: [400, "FAILED_PRECONDITION"],
  unsupportedOperation: [400, "FAILED_PRECONDITION"],
  contentTypeNotSupported: [400, "INVALID_ARGUMENT"],
  versionNotSupported: [400, "FAILED_PRECONDITION"],
  parseError: [400, "INVALID_ARGUMENT"],
  invalidRequest: [400, "INVALID_ARGUMENT"],
  methodNotFound: [404, "NOT_FOUND"],
  invalidParams: [400, "INVALID_ARGUMENT"],
  internalError: [500, "INTERNAL"],
};

/** The same, by JSON-RPC code. */
const STATUS_OF = new Map<number, readonly [number, string]>(
  (Object.keys(STATUS_BY_NAME) as RpcErrorName[]).map((
    n,
  ) => [RPC_ERRORS[n].code, STATUS_BY_NAME[n]]),
);

/** Canonical names for statuses the binding answers outside the table (405, 413, 415, 401, 403). */
const NAME_OF_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  405: "UNIMPLEMENTED",
  413: "RESOURCE_EXHAUSTED",
  415: "INVALID_ARGUMENT",
  500: "INTERNAL",
};

/**
 * ErrorInfo for a params refusal: the reason the @a2a-js/sdk client reads as RequestMalformedError
 * (its own server writes the same).
 */
const INVALID_PARAMS_INFO = {
  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
  reason: "INVALID_PARAMS",
  domain: "a2a-protocol.org",
};

/** A Status body with `code` = `status`. */
export function statusResponse(
  status: number,
  message: string,
  details: unknown[] = [],
  headers: Record<string, string> = {},
): Response {
  const error = {
    code: status,
    status: NAME_OF_STATUS[status] ?? "UNKNOWN",
    message,
    details,
  };
  return new Response(JSON.stringify({ error }), {
    status,
    headers: { ...REST_ERROR_HEADERS, ...headers },
  });
}

/**
 * The RpcError in the REST form. `status` overrides the table: a request body whose media type is
 * not JSON is 415, HTTP's own answer for it (the part-level ContentTypeNotSupported stays 400).
 */
export function restError(e: RpcError, status?: number): Response {
  const [httpStatus, name] = STATUS_OF.get(e.code) ?? [500, "INTERNAL"];
  const code = status ?? httpStatus;
  const details = e.data ?? (e.code === RPC_ERRORS.invalidParams.code ? [INVALID_PARAMS_INFO] : []);
  const error = {
    code,
    status: status ? NAME_OF_STATUS[status] ?? name : name,
    message: e.message,
    details,
  };
  return new Response(JSON.stringify({ error }), { status: code, headers: REST_ERROR_HEADERS });
}
