/**
 * A JSON-RPC request's way to its handler, as steps in the order docs/protocol.md lists them (docs/protocol.md
 * "Refusals"): the route (POST / with a JSON media type, else 404), the body cap, UTF-8, the
 * envelope, `A2A-Version`, the method, the caller's scope, `params`. Each step answers the
 * request or passes it on; the handler receives only a request every step passed.
 */
import { type DoorMethod, isPushMethod, type PushMethod, scopeOf } from "../a2a/methods.ts";
import { pushNotSupported } from "./push_methods.ts";
import { methodNotFound } from "./method_not_found.ts";
import type { Grant } from "./auth.ts";
import { readCapped, tooLarge } from "./body.ts";
import type { Gate } from "./gate.ts";
import {
  checkVersion,
  type Envelope,
  parseEnvelope,
  type RpcError,
  rpcError,
  rpcErrorBody,
  unsupported,
} from "./jsonrpc.ts";
import { bare, json, type Step } from "./responses.ts";

export interface RpcRequest {
  readonly req: Request;
  readonly url: URL;
  readonly grant: Grant | null;
  /** Filled in by the steps as the request passes them. */
  bytes?: Uint8Array;
  text?: string;
  env?: Envelope;
}

/** Only `POST /` with a JSON media type is a call; anything else is not here (404). */
const route: Step<RpcRequest> = ({ req, url }) => {
  if (url.pathname !== "/" || url.search || req.method !== "POST") return bare(404);
  // Media types are case-insensitive; any line naming application/json (docs/protocol.md "Refusals").
  const ctype = (req.headers.get("content-type") ?? "").toLowerCase();
  if (!ctype.includes("application/json")) return bare(404);
};

const body: Step<RpcRequest> = async (r) => {
  const bytes = await readCapped(r.req);
  if (bytes === "too-large") return tooLarge();
  // The client closed before sending the body it announced: its fault, answered, not logged.
  if (bytes === "cut") return bare(400);
  if (bytes.length === 0) return bare(404);
  r.bytes = bytes;
};

const utf8: Step<RpcRequest> = (r) => {
  try {
    r.text = new TextDecoder("utf-8", { fatal: true }).decode(r.bytes);
  } catch {
    return json(200, rpcErrorBody(null, rpcError("parseError", "Invalid JSON payload")));
  }
};

const envelope: Step<RpcRequest> = (r) => {
  const env = parseEnvelope(r.text!);
  if ("error" in env) return json(200, rpcErrorBody(env.id, env.error));
  r.env = env;
};

const version: Step<RpcRequest> = ({ req, env }) => {
  const refused = checkVersion(req.headers);
  if (refused) return json(200, rpcErrorBody(env!.id, refused));
};

/**
 * Why a method this door does not serve is refused (both bindings): a public door knows
 * GetExtendedAgentCard but serves no card; A2A asks an agent whose card says
 * pushNotifications: false to answer every push method PushNotificationNotSupported (TCK
 * JSONRPC-SSE-002), not method-not-found.
 */
export function unserved(method: string): RpcError {
  return method === "GetExtendedAgentCard"
    ? unsupported("this agent serves no extended agent card")
    : isPushMethod(method)
    ? pushNotSupported()
    : methodNotFound(method);
}

/** A method this door serves. */
function known(methods: ReadonlySet<string>): Step<RpcRequest> {
  return ({ env }) => {
    if (methods.has(env!.method)) return;
    return json(200, rpcErrorBody(env!.id, unserved(env!.method)));
  };
}

/** The scope a call of `method` needs, or null: every caller reaches the extended card. */
export function scopeNeeded(method: string): string | null {
  return method === "GetExtendedAgentCard" ? null : scopeOf(method as DoorMethod | PushMethod);
}

/** The caller's credential reaches the method (every caller reaches the extended card). */
function scope(gate: Gate): Step<RpcRequest> {
  return ({ env, grant }) => {
    const needed = scopeNeeded(env!.method);
    return needed === null ? undefined : gate.require(grant, needed);
  };
}

const params: Step<RpcRequest> = ({ env }) => {
  const p = env!.params;
  if (p === undefined) {
    env!.params = {};
    return;
  }
  if (typeof p !== "object" || p === null || Array.isArray(p)) {
    return json(
      200,
      rpcErrorBody(
        env!.id,
        rpcError("invalidParams", "Invalid parameters: params must be an object"),
      ),
    );
  }
};

/** The steps in order, for a door serving `methods` behind `gate`. */
export function rpcChecks(methods: ReadonlySet<string>, gate: Gate): Step<RpcRequest>[] {
  return [route, body, utf8, envelope, version, known(methods), scope(gate), params];
}
