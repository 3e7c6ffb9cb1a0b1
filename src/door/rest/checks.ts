/**
 * An HTTP+JSON request's way to its handler (docs/protocol.md "HTTP+JSON"), as steps in the same
 * order as the JSON-RPC door's (rpc_checks.ts), each answering in the REST error form
 * (errors.ts): the route (404, 405), the body's media type (415), the body cap (413), UTF-8 and
 * JSON (400, same depth limit), `A2A-Version`, the method (a push method or the extended card of a
 * public door is refused as on JSON-RPC), the caller's scope (403), then the params from path,
 * query and body. The token gate ran before (server.ts), in this binding's form.
 */
import { BODY_CAP_BYTES, readCapped } from "../body.ts";
import type { Grant } from "../auth.ts";
import type { Gate, RefusalForm } from "../gate.ts";
import {
  a2aError,
  checkVersionValue,
  invalidParams,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  RpcError,
  rpcError,
} from "../jsonrpc.ts";
import type { Step } from "../responses.ts";
import { scopeNeeded, unserved } from "../rpc_checks.ts";
import { restError, statusResponse } from "./errors.ts";
import { matchRoute, paramsOf, type RestRoute } from "./routes.ts";

export interface RestRequest {
  readonly req: Request;
  readonly url: URL;
  readonly grant: Grant | null;
  /** Filled in by the steps as the request passes them. */
  route?: RestRoute;
  body?: Record<string, unknown>;
  params?: Record<string, unknown>;
}

/** The token gate's refusals as google.rpc.Status bodies (same status and headers). */
export const restRefusal: RefusalForm = (status, error, message, headers) =>
  statusResponse(status, message, [{
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason: error.toUpperCase(),
    domain: "murmur.nexus",
  }], headers);

const route: Step<RestRequest> = (r) => {
  const m = matchRoute(r.req.method, r.url.pathname);
  if ("notFound" in m) {
    return statusResponse(
      404,
      `no HTTP+JSON route ${r.req.method} ${r.url.pathname}; the routes are in docs/door.md`,
    );
  }
  if ("allow" in m) {
    return statusResponse(
      405,
      `${r.url.pathname} answers ${m.allow}, not ${r.req.method}`,
      [],
      { allow: m.allow },
    );
  }
  if (!("method" in m)) return restError(m);
  r.route = m;
};

/** `application/json` or `application/a2a+json`, with any parameters (charset). */
function jsonMediaType(ctype: string): boolean {
  const media = ctype.split(";", 1)[0].trim().toLowerCase();
  return media === "application/json" || media === "application/a2a+json";
}

const unsupportedMedia = (ctype: string | null) =>
  restError(
    a2aError(
      "contentTypeNotSupported",
      ctype === null
        ? "the request has a body but no Content-Type; send it as application/a2a+json or application/json"
        : `Content-Type ${
          JSON.stringify(ctype)
        } is not supported; send application/a2a+json or application/json`,
    ),
    415,
  );

const tooLarge = () =>
  statusResponse(
    413,
    `this door reads request bodies of at most ${BODY_CAP_BYTES} bytes (8 MiB); send a smaller message`,
  );
const cut = () => statusResponse(400, "the request body ended before its announced length");

const body: Step<RestRequest> = async (r) => {
  r.body = {};
  if (!r.route!.body) {
    // A route without a body (GET, DELETE) takes none: one declared is refused before it is read
    // (Deno.serve hands a GET handler no body to read, and one left unread would let the
    // connection end under a stream whenever the client stops sending it).
    const length = r.req.headers.get("content-length");
    if (length !== null && Number(length) > BODY_CAP_BYTES) return tooLarge();
    if ((length !== null && length.trim() !== "0") || r.req.headers.has("transfer-encoding")) {
      return restError(
        invalidParams(`Invalid params: ${r.req.method} ${r.url.pathname} takes no request body`),
      );
    }
    return;
  }
  const ctype = r.req.headers.get("content-type");
  if (ctype !== null && !jsonMediaType(ctype)) return unsupportedMedia(ctype);
  const bytes = await readCapped(r.req);
  if (bytes === "too-large") return tooLarge();
  if (bytes === "cut") return cut();
  if (bytes.length === 0) return;
  if (ctype === null) return unsupportedMedia(null);
  let value: unknown;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new Error("nested too deep");
    value = JSON.parse(text);
  } catch {
    return restError(rpcError("parseError", "Invalid JSON payload"));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return restError(invalidParams("Invalid params: the request body must be a JSON object"));
  }
  r.body = value as Record<string, unknown>;
};

/**
 * `A2A-Version`: the header, or when there is none the query parameter of that name (A2A v1.0
 * §3.6.1 lets a client put it there; a browser's EventSource can set no header).
 */
const version: Step<RestRequest> = ({ req, url }) => {
  const fromQuery = url.searchParams.getAll("A2A-Version");
  const raw = req.headers.get("a2a-version") ??
    (fromQuery.length ? fromQuery.join(", ") : null);
  const refused = checkVersionValue(raw);
  if (refused) return restError(refused);
};

function known(methods: ReadonlySet<string>): Step<RestRequest> {
  return ({ route }) => methods.has(route!.method) ? undefined : restError(unserved(route!.method));
}

function scope(gate: Gate): Step<RestRequest> {
  return ({ route, grant }) => {
    const needed = scopeNeeded(route!.method);
    return needed === null ? undefined : gate.require(grant, needed, restRefusal);
  };
}

const params: Step<RestRequest> = (r) => {
  const p = paramsOf(r.route!, r.url.searchParams, r.body!);
  if (p instanceof RpcError) return restError(p);
  r.params = p;
};

/** The steps in order, for a door serving `methods` behind `gate`. */
export function restChecks(methods: ReadonlySet<string>, gate: Gate): Step<RestRequest>[] {
  return [route, body, version, known(methods), scope(gate), params];
}
