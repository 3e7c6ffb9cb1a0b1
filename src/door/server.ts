/**
 * The door: A2A v1.0 over Deno.serve, in two bindings (docs/door.md, docs/protocol.md):
 * JSON-RPC and HTTP+JSON. Routes: the card and the live page before the token gate, then
 * attachments, `/ui/status`, HTTP+JSON routes (rest/) and JSON-RPC calls. A call passes its
 * binding's checks (rpc_checks.ts, rest/checks.ts: body cap, parsing, version, method, scope) in
 * docs/protocol.md "Refusals" order and reaches its handler through the one method table (handlers.ts); the
 * binding only decodes params and encodes the answer. No handler waits on the agent loop.
 */
import type { A2aCallRecord } from "../a2a/call_record.ts";
import { observedCall } from "./call_observer.ts";
import { errorMessage, MurError } from "../errors.ts";
import { ConnectionFault } from "../events/view.ts";
import type { Session } from "../session/session.ts";
import { ApprovalToken } from "./approval_token.ts";
import { DoorAuth, type FormationDoor, type Grant } from "./auth.ts";
import { buildCards, doorMethods } from "./card.ts";
import { Gate } from "./gate.ts";
import { type Binding, callMethod, isRpcMethod } from "./handlers.ts";
import { RpcError, rpcError, rpcErrorBody, rpcResult } from "./jsonrpc.ts";
import { methodNotFound } from "./method_not_found.ts";
import { type CallContext, taskFor } from "./call_context.ts";
import { SeenMessages } from "./retries.ts";
import { bare, json, JSON_HEADERS, through } from "./responses.ts";
import { claimedOrigin, honouredTrust, peerNotAccepted, refusesPeer } from "./peer_tasks.ts";
import { rpcChecks, type RpcRequest } from "./rpc_checks.ts";
import type { PushNotifications } from "../push/push.ts";
import { restChecks, restRefusal, type RestRequest } from "./rest/checks.ts";
import { restError } from "./rest/errors.ts";
import { isRestPath } from "./rest/routes.ts";
import { pageFile, servePage, UI_STATUS_PATH, uiStatus } from "../ui/routes.ts";
import { publishedFile } from "./files.ts";
import { runningDir } from "../home/running_records.ts";
import { murLine } from "../invocation.ts";

export { BODY_CAP_BYTES } from "./body.ts";

/**
 * The card is built once per session and names its port, so a cache may keep it a while but
 * must revalidate: a new session behind the same port serves a new card (new ETag).
 */
export const CARD_CACHE_CONTROL = "public, max-age=300, must-revalidate";

/** `If-None-Match`: `*` or a list of (possibly weak) tags, compared weakly (RFC 9110 §13.1.2). */
export function matchesEtag(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === "*") return true;
  const strip = (t: string) => t.trim().replace(/^W\//, "");
  return header.split(",").some((t) => strip(t) === strip(etag));
}

/**
 * HTTP+JSON answers a unary result as the bare ProtoJSON object (A2A v1.0 §11.4), labelled
 * `application/a2a+json` when the request's Accept names it (the SDK clients do), else plain
 * `application/json`, which every JSON client takes (curl and the conformance kit accept any type,
 * and the kit requires `application/json`).
 */
export function restBinding(req: Request): Binding {
  const a2a = /application\/a2a\+json/i.test(req.headers.get("accept") ?? "");
  const headers = { "content-type": a2a ? "application/a2a+json" : "application/json" };
  return { result: (value) => new Response(JSON.stringify(value ?? {}), { headers }) };
}

export interface DoorOptions {
  session: Session;
  bind: string;
  port: number;
  tools: string[];
  streamsText: boolean;
  heartbeatMs: number;
  warn(line: string): void;
  /** A formation member's door: it also takes the formation's edge tokens (src/door/auth.ts). */
  formation?: FormationDoor;
  /** Requests wait for this before they are handled (the launch is being registered). */
  ready?: Promise<void>;
  /** Push notifications, when the manifest turns them on (src/push/push.ts). */
  push?: PushNotifications | null;
  /** The token key (a cluster's session key, src/door/auth.ts); absent: a random one. */
  tokenKey?: Uint8Array;
  /** Told of every method call (an `a2a.server` span each, src/door/call_observer.ts). */
  onA2a?: (r: A2aCallRecord) => void;
}

export interface Door {
  /** `localhost:<port>` */
  address: string;
  /** The public card and, on an authenticated door, the extended one, as served. */
  cards: { public: string; extended: string | null };
  port: number;
  tokens: Record<string, string> | null;
  /** A public door of a capsule with `approvals:`: the operator's token for answering one. */
  approvalToken: string | null;
  shutdown(): Promise<void>;
}

/** The card as served: its body, the extended card's value, and the validators a cache checks. */
interface ServedCards {
  publicBody: string;
  extendedValue: unknown;
  etag: string;
  modified: string;
}

/**
 * The door: routes in order (card, live page, gate, attachments, `/ui/status`, HTTP+JSON,
 * JSON-RPC), bound before the card is built, since the card names the port it was given.
 */
export async function startDoor(o: DoorOptions): Promise<Door> {
  const manifest = o.session.manifest;
  const { auth, approver } = await doorTokens(o);
  const where = o.formation && memberTokens(o.formation, o.session.id);
  const gate = new Gate(auth, manifest.name, where);
  // Filled in once the port is known (the card names it); no request is served before.
  const cards: ServedCards = { publicBody: "", extendedValue: null, etag: "", modified: "" };
  const push = o.push ?? null;
  const served = new Set(doorMethods(auth !== null, push !== null));
  const checks = rpcChecks(served, gate);
  const rest = restChecks(served, gate);
  const ctxFor = callContexts(o, cards, push);
  const dispatch = dispatcher(o, ctxFor, approver);

  const handle = async (req: Request): Promise<Response> => {
    if (o.ready) await o.ready;
    const url = new URL(req.url);
    if (url.pathname === "/.well-known/agent-card.json" && req.method === "GET" && !url.search) {
      return cardResponse(req, cards);
    }
    // The live page holds no data: served before the token gate (src/ui/routes.ts).
    const page = pageFile(req, url);
    if (page !== null) return servePage(req, page);
    const restful = isRestPath(url.pathname);
    const admitted = await gate.admit(req, restful ? restRefusal : undefined);
    if (admitted instanceof Response) return admitted;
    if (refusesPeer(req, manifest)) return peerNotAccepted(); // after the token: peer_tasks.ts
    const grant = admitted.grant;

    if (url.pathname.startsWith("/attachments/")) {
      return attachment(req, url, gate.require(grant, "GetTask"), ctxFor(grant, req));
    }
    if (url.pathname.startsWith("/files/")) {
      return await publishedFile(req, url, grant, gate, (id) => taskFor(ctxFor(grant, req), id));
    }
    if (url.pathname === UI_STATUS_PATH) {
      return pageStatus(req, url, grant, gate.require(grant, "murmur.WatchSession"), o);
    }
    if (restful) {
      const r: RestRequest = { req, url, grant };
      return await through(r, rest) ??
        await dispatch(req, r.route!.method, null, r.params!, grant, restBinding(req));
    }
    const call: RpcRequest = { req, url, grant };
    return await through(call, checks) ??
      await dispatch(req, call.env!.method, call.env!.id, call.env!.params, grant, {
        result: (value) => json(200, rpcResult(call.env!.id, value)),
      });
  };

  const server = listen(o, handle);
  const port = server.addr.port;
  const address = `localhost:${port}`;
  const built = buildCards({
    manifest,
    sessionId: o.session.id,
    address,
    tools: o.tools,
    streamsText: o.streamsText,
    authenticated: auth !== null,
  });
  Object.assign(cards, await servedCards(built));
  return {
    address,
    cards: {
      public: cards.publicBody,
      extended: built.extended === null ? null : JSON.stringify(built.extended),
    },
    port,
    tokens: auth ? auth.tokens : null,
    approvalToken: approver?.token ?? null,
    shutdown: () => shutdown(server),
  };
}

/**
 * The door's tokens: an authenticated door's (a formation member's door always authenticates: its
 * callers present edge tokens), or, on a public door of a capsule with `approvals:`, the
 * operator's approval token (approval_token.ts): approvals are held to the operator there too.
 */
async function doorTokens(
  o: DoorOptions,
): Promise<{ auth: DoorAuth | null; approver: ApprovalToken | null }> {
  const manifest = o.session.manifest;
  if (manifest.network.authentication || o.formation) {
    const credentials = manifest.network.authentication?.credentials ?? [];
    return { auth: await DoorAuth.create(credentials, o.tokenKey, o.formation), approver: null };
  }
  return { auth: null, approver: manifest.approvals ? await ApprovalToken.mint() : null };
}

/** Streams flush what they hold (the log is closed first), then connections are dropped. */
async function shutdown(server: Deno.HttpServer<Deno.NetAddr>): Promise<void> {
  const t = setTimeout(() => server.shutdown(), 0);
  await Promise.race([server.finished, new Promise((r) => setTimeout(r, 500))]);
  clearTimeout(t);
  await server.shutdown().catch(() => {});
}

/** The public card with its ETag (a digest of the body) and Last-Modified. */
async function servedCards(built: { public: unknown; extended: unknown }): Promise<ServedCards> {
  const publicBody = JSON.stringify(built.public);
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(publicBody)),
  );
  return {
    publicBody,
    extendedValue: built.extended,
    etag: `"${[...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("")}"`,
    modified: new Date().toUTCString(),
  };
}

function cardResponse(req: Request, cards: ServedCards): Response {
  const cache = {
    "cache-control": CARD_CACHE_CONTROL,
    etag: cards.etag,
    "last-modified": cards.modified,
  };
  if (matchesEtag(req.headers.get("if-none-match"), cards.etag)) return bare(304, cache);
  return new Response(cards.publicBody, { headers: { ...JSON_HEADERS, ...cache } });
}

/**
 * What each call is made with: the caller's origin, its trust (honoured only from a proven peer,
 * src/door/peer_tasks.ts), its credential.
 */
function callContexts(
  o: DoorOptions,
  cards: ServedCards,
  push: PushNotifications | null,
): (grant: Grant | null, req: Request, approves?: boolean) => CallContext {
  const seen = new SeenMessages(o.session.manifest.network.retriedSends === "replay");
  return (grant, req, approves) => {
    const origin = claimedOrigin(req);
    return {
      session: o.session,
      origin,
      trusted: honouredTrust(req, origin, grant),
      extendedCard: cards.extendedValue,
      caller: grant?.credential ?? "",
      seen,
      push,
      ownTasksOnly: grant?.member === true,
      ...(approves ? { approvalToken: true } : {}),
    };
  };
}

/**
 * One call through the method table. `id` null: the HTTP+JSON binding, whose stream events wear
 * no envelope and whose refusals are Status bodies; else the JSON-RPC request id.
 */
function dispatcher(
  o: DoorOptions,
  ctxFor: ReturnType<typeof callContexts>,
  approver: ApprovalToken | null,
) {
  return async (
    req: Request,
    method: string,
    id: string | number | null,
    params: Record<string, unknown>,
    grant: Grant | null,
    binding: Binding,
  ): Promise<Response> => {
    const refuse = (e: RpcError) => id === null ? restError(e) : json(200, rpcErrorBody(id, e));
    const approves = approver !== null && await approver.presentedBy(req);
    const ctx = ctxFor(grant, req, approves);
    const stream = { id, params, headers: req.headers, heartbeatMs: o.heartbeatMs, warn: o.warn };
    if (!isRpcMethod(method)) return refuse(methodNotFound(method));
    try {
      const call = () => callMethod(method, { ctx, stream, binding });
      return await (o.onA2a ? observedCall(method, params, o.session, o.onA2a, call) : call());
    } catch (e) {
      if (e instanceof RpcError) return refuse(e);
      o.warn(`door: ${method} failed: ${e instanceof Error ? e.stack : e}`);
      return refuse(rpcError("internalError", "internal error: the request could not be handled"));
    }
  };
}

/** `GET /attachments/<task>/<sha256>`: an image a task holds, for a caller with GetTask. */
function attachment(
  req: Request,
  url: URL,
  refused: Response | null | undefined,
  ctx: CallContext,
): Response {
  if (req.method !== "GET") return bare(405, { allow: "GET" });
  if (refused) return refused;
  const m = /^\/attachments\/([^/]+)\/([0-9a-f]{64})$/.exec(url.pathname);
  if (!m || url.search) return bare(404);
  const task = taskFor(ctx, m[1]);
  const img = task?.attachments.get(m[2]);
  if (!img) return bare(404);
  return new Response(img.data as BodyInit, {
    headers: { "content-type": img.mediaType, "content-length": String(img.data.length) },
  });
}

/** `GET /ui/status`: what the live page shows, for a caller with murmur.WatchSession. */
function pageStatus(
  req: Request,
  url: URL,
  grant: Grant | null,
  refused: Response | null | undefined,
  o: DoorOptions,
): Response {
  if (req.method !== "GET") return bare(405, { allow: "GET" });
  if (refused) return refused;
  const caller = { credential: grant?.credential ?? null, scopes: grant?.scopes ?? null };
  const body = uiStatus(o.session, url, caller, o.heartbeatMs);
  return json(200, JSON.stringify(body), { "cache-control": "no-store" });
}

/** Deno.serve on the door's address; a port in use is E-RUN-010. */
function listen(
  o: DoorOptions,
  handle: (req: Request) => Promise<Response>,
): Deno.HttpServer<Deno.NetAddr> {
  try {
    return Deno.serve({
      hostname: o.bind,
      port: o.port,
      onListen: () => {},
      onError: (e) => {
        // A stream view that faulted has said so on stderr already (events/view.ts).
        if (!(e instanceof ConnectionFault)) o.warn(`door: ${errorMessage(e)}`);
        return bare(500);
      },
    }, handle);
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) {
      throw new MurError(
        "E-RUN-010",
        `the door could not listen on ${o.bind}:${o.port}: the port is already in use`,
        "choose another network.internal_port or --port, or 0 for an OS-assigned port",
      );
    }
    throw new MurError(
      "E-RUN-010",
      `the door could not listen on ${o.bind}:${o.port}: ${errorMessage(e)}`,
    );
  }
}

/**
 * Where a formation member's door says its token is, in a 401: the launcher started it, so the
 * user never saw its readiness line; its running record holds the operator token.
 */
function memberTokens(f: FormationDoor, sessionId: string): string {
  return `this door is member '${f.member}' of formation ${f.formationId}: its operator token is tokens.operator in its running record, ${runningDir()}/${sessionId}.json (\`${
    murLine("ps")
  }\` lists the formation's members; \`${murLine("watch", sessionId)}\` presents the token itself)`;
}
