/**
 * The door: A2A v1.0 JSON-RPC over Deno.serve (contract §5, door-facts §1–§4). Routes, the token
 * gate before anything is read, the body cap, the envelope checks in the reference's order, then
 * the method. No handler waits on the agent loop.
 */
import { errorMessage, MurError } from "../errors.ts";
import { ConnectionFault } from "../events/view.ts";
import type { Session } from "../session/session.ts";
import type { Origin } from "../session/task_record.ts";
import { DoorAuth, type Grant } from "./auth.ts";
import { buildCards, doorMethods } from "./card.ts";
import {
  checkVersion,
  type Envelope,
  parseEnvelope,
  RpcError as RpcErrorClass,
  rpcErrorBody,
  rpcResult,
  unsupported,
} from "./jsonrpc.ts";
import {
  type CallContext,
  cancelTask,
  extendedCard,
  getTask,
  listTasks,
  sendMessage,
  stopSession,
} from "./methods.ts";
import { sendStreaming, subscribeToTask, watchSession } from "./streams.ts";
import { pageFile, servePage, UI_STATUS_PATH, uiStatus } from "../ui/routes.ts";

/** Request bodies over this are refused with 413 before they are read (contract §5). */
export const BODY_CAP_BYTES = 8 * 1024 * 1024;

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

export interface DoorOptions {
  session: Session;
  bind: string;
  port: number;
  tools: string[];
  streamsText: boolean;
  heartbeatMs: number;
  warn(line: string): void;
  /** Requests wait for this before they are handled (the launch is being registered). */
  ready?: Promise<void>;
}

export interface Door {
  /** `localhost:<port>` */
  address: string;
  port: number;
  tokens: Record<string, string> | null;
  shutdown(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json" };

function bare(status: number, extra: Record<string, string> = {}): Response {
  return new Response(null, { status, headers: extra });
}

function json(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...JSON_HEADERS, ...extra } });
}

export async function startDoor(o: DoorOptions): Promise<Door> {
  const manifest = o.session.manifest;
  const auth = manifest.network.authentication
    ? await DoorAuth.create(manifest.network.authentication.credentials)
    : null;
  const realm = manifest.name.replace(/["\\]/g, "_");
  // Filled in once the port is known (the card names it); no request is served before.
  const cards = { publicBody: "", extendedValue: null as unknown, etag: "", modified: "" };
  const methods = new Set(doorMethods(auth !== null));

  /** Token gate: null when admitted, else the refusal. */
  const gate = async (req: Request): Promise<{ grant: Grant | null } | Response> => {
    if (!auth) return { grant: null };
    const header = req.headers.get("authorization");
    if (header === null) {
      return json(
        401,
        JSON.stringify({
          error: "unauthenticated",
          message:
            "this door takes a token this capsule's runtime minted, as Authorization: Bearer <token>",
        }),
        { "www-authenticate": `Bearer realm="${realm}"` },
      );
    }
    const m = /^bearer\s+(\S+)$/i.exec(header.trim());
    const grant = m && !header.includes(",") ? await auth.verify(m[1]) : null;
    if (!grant) {
      return json(
        401,
        JSON.stringify({
          error: "invalid_token",
          message: "the Authorization header does not present a token this session minted",
        }),
        { "www-authenticate": `Bearer realm="${realm}", error="invalid_token"` },
      );
    }
    return { grant };
  };

  const forbidden = (grant: Grant, scope: string): Response =>
    json(
      403,
      JSON.stringify({
        error: "insufficient_scope",
        message: `credential '${grant.credential}' does not reach ${scope}`,
      }),
      {
        "www-authenticate": `Bearer realm="${realm}", error="insufficient_scope", scope="${scope}"`,
      },
    );

  const handle = async (req: Request): Promise<Response> => {
    if (o.ready) await o.ready;
    const url = new URL(req.url);
    if (url.pathname === "/.well-known/agent-card.json" && req.method === "GET" && !url.search) {
      const cache = {
        "cache-control": CARD_CACHE_CONTROL,
        etag: cards.etag,
        "last-modified": cards.modified,
      };
      if (matchesEtag(req.headers.get("if-none-match"), cards.etag)) return bare(304, cache);
      return new Response(cards.publicBody, { headers: { ...JSON_HEADERS, ...cache } });
    }
    // The live page holds no data: served before the token gate (src/ui/routes.ts).
    const page = pageFile(req, url);
    if (page !== null) return servePage(req, page);
    const admitted = await gate(req);
    if (admitted instanceof Response) return admitted;
    const grant = admitted.grant;

    if (url.pathname.startsWith("/attachments/")) return attachment(req, url, grant);
    if (url.pathname === UI_STATUS_PATH) return pageStatus(req, url, grant);
    if (url.pathname !== "/" || url.search || req.method !== "POST") return bare(404);
    // Media types are case-insensitive; like the reference, any line naming application/json.
    const ctype = (req.headers.get("content-type") ?? "").toLowerCase();
    if (!ctype.includes("application/json")) return bare(404);
    const declared = req.headers.get("content-length");
    if (declared !== null && Number(declared) > BODY_CAP_BYTES) return tooLarge();
    const bytes = await readCapped(req);
    if (bytes === "too-large") return tooLarge();
    // The client closed before sending the body it announced: its fault, answered, not logged.
    if (bytes === "cut") return bare(400);
    if (bytes.length === 0) return bare(404);

    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return json(200, rpcErrorBody(null, new RpcErrorClass(-32700, "Invalid JSON payload")));
    }
    const env = parseEnvelope(text);
    if ("error" in env) return json(200, rpcErrorBody(env.id, env.error));
    const versionError = checkVersion(req.headers);
    if (versionError) return json(200, rpcErrorBody(env.id, versionError));
    if (!methods.has(env.method)) {
      // A public door knows the method but serves no extended card (door-facts §2).
      const refusal = env.method === "GetExtendedAgentCard"
        ? unsupported("this agent serves no extended agent card")
        : new RpcErrorClass(-32601, "Method not found");
      return json(200, rpcErrorBody(env.id, refusal));
    }
    if (grant && env.method !== "GetExtendedAgentCard" && !grant.scopes.has(env.method)) {
      return forbidden(grant, env.method);
    }
    if (
      env.params !== undefined && (typeof env.params !== "object" || env.params === null ||
        Array.isArray(env.params))
    ) {
      return json(
        200,
        rpcErrorBody(
          env.id,
          new RpcErrorClass(-32602, "Invalid parameters: params must be an object"),
        ),
      );
    }
    return await dispatch(req, { ...env, params: env.params ?? {} });
  };

  const ctxFor = (_grant: Grant | null, req: Request): CallContext => {
    const raw = (req.headers.get("x-murmur-task-origin") ?? "").trim().toLowerCase();
    const origin: Origin = raw === "peer" || raw === "completion" ? raw : "event";
    const trust = (req.headers.get("x-murmur-task-trust") ?? "").trim().toLowerCase();
    return {
      session: o.session,
      origin,
      trusted: origin !== "event" && trust === "trusted",
      extendedCard: cards.extendedValue,
    };
  };

  const dispatch = async (req: Request, env: Envelope): Promise<Response> => {
    const ctx = ctxFor(null, req);
    const stream = {
      id: env.id,
      params: env.params,
      headers: req.headers,
      heartbeatMs: o.heartbeatMs,
      warn: o.warn,
    };
    try {
      switch (env.method) {
        case "SendMessage":
          return json(200, rpcResult(env.id, await sendMessage(ctx, env.params)));
        case "SendStreamingMessage":
          return sendStreaming(ctx, stream);
        case "SubscribeToTask":
          return subscribeToTask(ctx, stream);
        case "murmur.WatchSession":
          return watchSession(ctx, stream);
        case "GetTask":
          return json(200, rpcResult(env.id, getTask(ctx, env.params)));
        case "ListTasks":
          return json(200, rpcResult(env.id, listTasks(ctx, env.params)));
        case "CancelTask":
          return json(200, rpcResult(env.id, cancelTask(ctx, env.params)));
        case "murmur.StopSession":
          return json(200, rpcResult(env.id, stopSession(ctx)));
        case "GetExtendedAgentCard":
          return json(200, rpcResult(env.id, extendedCard(ctx)));
      }
      return json(200, rpcErrorBody(env.id, new RpcErrorClass(-32601, "Method not found")));
    } catch (e) {
      if (e instanceof RpcErrorClass) return json(200, rpcErrorBody(env.id, e));
      o.warn(`door: ${env.method} failed: ${e instanceof Error ? e.stack : e}`);
      return json(
        200,
        rpcErrorBody(
          env.id,
          new RpcErrorClass(-32603, "internal error: the request could not be handled"),
        ),
      );
    }
  };

  const attachment = (req: Request, url: URL, grant: Grant | null): Response => {
    if (req.method !== "GET") return bare(405, { allow: "GET" });
    if (grant && !grant.scopes.has("GetTask")) return forbidden(grant, "GetTask");
    const m = /^\/attachments\/([^/]+)\/([0-9a-f]{64})$/.exec(url.pathname);
    if (!m || url.search) return bare(404);
    const task = o.session.registry.get(m[1]);
    const img = task?.attachments.get(m[2]);
    if (!img) return bare(404);
    return new Response(img.data as BodyInit, {
      headers: { "content-type": img.mediaType, "content-length": String(img.data.length) },
    });
  };

  const pageStatus = (req: Request, url: URL, grant: Grant | null): Response => {
    if (req.method !== "GET") return bare(405, { allow: "GET" });
    if (grant && !grant.scopes.has("murmur.WatchSession")) {
      return forbidden(grant, "murmur.WatchSession");
    }
    const caller = { credential: grant?.credential ?? null, scopes: grant?.scopes ?? null };
    const body = uiStatus(o.session, url, caller, o.heartbeatMs);
    return json(200, JSON.stringify(body), { "cache-control": "no-store" });
  };

  const tooLarge = () =>
    json(
      413,
      JSON.stringify({
        error: "payload_too_large",
        message:
          `this door reads request bodies of at most ${BODY_CAP_BYTES} bytes (8 MiB); send a smaller message`,
      }),
    );

  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
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
  const port = server.addr.port;
  const address = `localhost:${port}`;
  const built = buildCards({
    manifest,
    sessionId: o.session.id,
    address,
    tools: o.tools,
    streamsText: o.streamsText,
  });
  const publicBody = JSON.stringify(built.public);
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(publicBody)),
  );
  Object.assign(cards, {
    publicBody,
    extendedValue: built.extended,
    etag: `"${[...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("")}"`,
    modified: new Date().toUTCString(),
  });

  return {
    address,
    port,
    tokens: auth ? auth.tokens : null,
    async shutdown() {
      // Streams flush what they hold (the log is closed first), then connections are dropped.
      const t = setTimeout(() => server.shutdown(), 0);
      await Promise.race([server.finished, new Promise((r) => setTimeout(r, 500))]);
      clearTimeout(t);
      await server.shutdown().catch(() => {});
    },
  };
}

async function readCapped(req: Request): Promise<Uint8Array | "too-large" | "cut"> {
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let n = 0;
  const reader = req.body.getReader();
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await reader.read();
    } catch {
      // The body ended before its Content-Length (or its chunked framing broke).
      return "cut";
    }
    const { done, value } = step;
    if (done) break;
    n += value.length;
    if (n > BODY_CAP_BYTES) {
      await reader.cancel().catch(() => {});
      return "too-large";
    }
    chunks.push(value);
  }
  const out = new Uint8Array(n);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}
