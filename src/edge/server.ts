/**
 * `mur edge`'s HTTP server (docs/edge.md): every session in one Redis, each under
 * `/sessions/<session id>/`, in both of the door's bindings — JSON-RPC at `…/` and the HTTP+JSON
 * routes (`…/tasks/<id>`, `…/murmur/session:watch`, …) — and the live page at `…/ui`, with the
 * door's own checks (rpc_checks.ts, rest/checks.ts: body cap, envelope, A2A-Version, method,
 * scope, params) and the same token gate (gate.ts) under the session's key derived from
 * MURMUR_CLUSTER_KEY. A call reaches its method through the edge's table (handlers.ts): reads are
 * served here from the session's mirror (mirrors.ts) and its tasks in Redis; writes go to the
 * capsule's door (forward.ts). The edge holds no state a restart loses: a client that reconnects
 * to any edge with Last-Event-ID resumes where it was.
 */
import type { RedisClient } from "../cluster/client.ts";
import { DoorAuth, type Grant, sessionTokenKey } from "../door/auth.ts";
import { doorMethods } from "../door/card.ts";
import { Gate } from "../door/gate.ts";
import type { Binding } from "../door/handlers.ts";
import { RpcError, rpcError, rpcErrorBody, rpcResult } from "../door/jsonrpc.ts";
import { methodNotFound } from "../door/method_not_found.ts";
import { bare, json, JSON_HEADERS, through } from "../door/responses.ts";
import { restChecks, restRefusal, type RestRequest } from "../door/rest/checks.ts";
import { restError } from "../door/rest/errors.ts";
import { isRestPath } from "../door/rest/routes.ts";
import { rpcChecks, type RpcRequest } from "../door/rpc_checks.ts";
import { restBinding } from "../door/server.ts";
import { ConnectionFault } from "../events/view.ts";
import { UI_STATUS_PATH } from "../ui/routes.ts";
import { forward, type Forwarded, forwardGet } from "./forward.ts";
import { callEdge, type EdgeSession, isEdgeMethod } from "./handlers.ts";
import { Mirrors } from "./mirrors.ts";
import { edgePageFile, serveEdgePage } from "./page.ts";
import {
  cardFor,
  filesAt,
  filesPrefixes,
  pageWithHistory,
  readMeta,
  readTask,
  readTaskRows,
  type SessionMeta,
} from "./session_facts.ts";
import { listRows } from "../door/methods.ts";
import { historyLengthOf } from "../door/history_length.ts";
import { StreamReader } from "./stream_reader.ts";
import { listenError } from "./listen_error.ts";

export interface EdgeOptions {
  redis: RedisClient;
  bind: string;
  port: number;
  heartbeatMs: number;
  /** The operator's shared MURMUR_CLUSTER_KEY, to verify authenticated sessions' tokens. */
  clusterKey: string | null;
  warn(line: string): void;
}

export interface Edge {
  port: number;
  shutdown(): Promise<void>;
}

/** A request for one session, past the session's lookup. */
interface SessionRequest {
  req: Request;
  url: URL;
  /** The path under `/sessions/<id>`. */
  rest: string;
  session: EdgeSession;
}

const problem = (status: number, error: string, message: string) =>
  json(status, JSON.stringify({ error, message }));

/**
 * The edge's routes over its reader, mirror cache and gates: a request for a session is looked up
 * (`#forSession`), admitted by the session's gate, and answered by the method table (`#dispatch`,
 * handlers.ts) in either binding (`#admitted`).
 */
class EdgeRoutes {
  readonly reader: StreamReader;
  readonly mirrors: Mirrors;
  readonly #o: EdgeOptions;
  readonly #gates = new Map<string, Gate>();
  /** The port served (set once listening): the host of a request without a Host header. */
  port = 0;

  constructor(o: EdgeOptions) {
    this.#o = o;
    this.reader = new StreamReader(o.redis, o.warn);
    this.mirrors = new Mirrors(this.reader, o.warn);
  }

  async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/healthz" && req.method === "GET") {
      try {
        await this.#o.redis.call(["PING"]);
        return json(200, JSON.stringify({ ok: true }));
      } catch (e) {
        return json(503, JSON.stringify({ ok: false, error: (e as Error).message }));
      }
    }
    // The card's interface URL has no trailing slash: a JSON-RPC client posts to it as it is.
    const route = /^\/sessions\/(ses_[0-9a-f]{32})(\/.*)?$/.exec(url.pathname);
    if (!route) return bare(404);
    return await this.#forSession(req, url, route[1], route[2] ?? "/");
  }

  /** The gate of a session's tokens, or why this edge cannot verify them. */
  async #gateOf(sessionId: string, meta: SessionMeta): Promise<Gate | Response> {
    const o = this.#o;
    if (meta.auth === "none") return new Gate(null, meta.name);
    if (meta.auth === "unverifiable" || o.clusterKey === null) {
      return problem(
        503,
        "tokens_not_verifiable",
        meta.auth === "unverifiable"
          ? "this session's capsule mints its tokens under a key of its own (no MURMUR_CLUSTER_KEY): call its own door"
          : "this edge has no MURMUR_CLUSTER_KEY, so it cannot verify this session's tokens",
      );
    }
    let g = this.#gates.get(sessionId);
    if (!g) {
      const auth = await DoorAuth.verifying(await sessionTokenKey(o.clusterKey, sessionId));
      this.#gates.set(sessionId, g = new Gate(auth, meta.name));
    }
    return g;
  }

  #sessionOf(id: string, meta: SessionMeta, base: string): EdgeSession {
    const redis = this.#o.redis;
    return {
      id,
      meta,
      base,
      mirror: () => this.mirrors.of(id),
      task: (taskId, history) => readTask(redis, id, taskId, history, filesAt(meta.door, base)),
      listTasks: async (params) => {
        const rows = await readTaskRows(redis, id, filesAt(meta.door, base));
        const page = listRows(rows, params);
        await pageWithHistory(redis, id, page, rows, historyLengthOf(params));
        return page;
      },
    };
  }

  /**
   * One call through the table. `id` null: HTTP+JSON, whose stream events wear no envelope and
   * whose refusals are Status bodies; else the JSON-RPC request id.
   */
  async #dispatch(
    s: SessionRequest,
    method: string,
    id: string | number | null,
    params: Record<string, unknown>,
    binding: Binding,
    to: Forwarded,
  ): Promise<Response> {
    const o = this.#o;
    const refuse = (e: RpcError) => id === null ? restError(e) : json(200, rpcErrorBody(id, e));
    if (!isEdgeMethod(method)) return refuse(methodNotFound(method));
    try {
      return await callEdge(method, {
        session: s.session,
        id,
        raw: params,
        headers: s.req.headers,
        binding,
        heartbeatMs: o.heartbeatMs,
        warn: o.warn,
        forward: () =>
          forward(
            s.session.meta.door,
            s.req,
            to,
            (m) => refuse(rpcError("internalError", m)),
            filesPrefixes(s.session.meta.door, s.session.base),
          ),
      });
    } catch (e) {
      if (e instanceof RpcError) return refuse(e);
      o.warn(`edge: ${method} failed: ${e instanceof Error ? e.message : e}`);
      return refuse(rpcError("internalError", "internal error: the request could not be handled"));
    }
  }

  /** Past the gate: attachments and the page's status (the capsule's), then either binding. */
  async #admitted(s: SessionRequest, gate: Gate, grant: Grant | null): Promise<Response> {
    const { req, url, rest } = s;
    const served = new Set(doorMethods(s.session.meta.auth !== "none", s.session.meta.push));
    if (rest.startsWith("/attachments/") || rest.startsWith("/files/") || rest === UI_STATUS_PATH) {
      // An artifact frame's image (docs/protocol.md "Attachments"), a published file ("Files and
      // data") and the page's status (src/ui/routes.ts) are the capsule's: forwarded after the
      // same scope check (the capsule checks the token again).
      if (req.method !== "GET") return bare(405, { allow: "GET" });
      const refused = gate.require(
        grant,
        rest === UI_STATUS_PATH ? "murmur.WatchSession" : "GetTask",
      );
      if (refused) return refused;
      return await forwardGet(s.session.meta.door, rest + url.search, req);
    }
    const at = new URL(rest + url.search, url.origin);
    if (isRestPath(rest)) {
      const r: RestRequest = { req, url: at, grant };
      const refused = await through(r, restChecks(served, gate));
      if (refused) return refused;
      const body = r.route!.body ? JSON.stringify(r.body ?? {}) : null;
      return await this.#dispatch(s, r.route!.method, null, r.params!, restBinding(req), {
        method: req.method,
        path: rest + url.search,
        body,
      });
    }
    const call: RpcRequest = { req, url: at, grant };
    const refused = await through(call, rpcChecks(served, gate));
    if (refused) return refused;
    const env = call.env!;
    return await this.#dispatch(s, env.method, env.id, env.params, {
      result: (value) => json(200, rpcResult(env.id, value)),
    }, { method: "POST", path: "/", body: call.bytes! as BodyInit });
  }

  async #forSession(req: Request, url: URL, sessionId: string, rest: string): Promise<Response> {
    let meta: SessionMeta | null;
    try {
      meta = await readMeta(this.#o.redis, sessionId);
    } catch (e) {
      return problem(503, "redis_unavailable", (e as Error).message);
    }
    if (meta === null) {
      return problem(
        404,
        "no_such_session",
        `${sessionId} is not published in this edge's Redis (never published, or ended and expired)`,
      );
    }
    const host = req.headers.get("host") ?? `${this.#o.bind}:${this.port}`;
    const basePath = `/sessions/${sessionId}`;
    const base = `http://${host}${basePath}`;
    if (rest === "/.well-known/agent-card.json" && req.method === "GET" && !url.search) {
      return new Response(JSON.stringify(cardFor(meta.card, base)), {
        headers: { ...JSON_HEADERS, "cache-control": "no-cache" },
      });
    }
    const page = edgePageFile(req, rest);
    if (page !== null) return await serveEdgePage(req, page, basePath);
    const gate = await this.#gateOf(sessionId, meta);
    if (gate instanceof Response) return gate;
    const pass = await gate.admit(req, isRestPath(rest) ? restRefusal : undefined);
    if (pass instanceof Response) return pass;
    const session = this.#sessionOf(sessionId, meta, base);
    return await this.#admitted({ req, url, rest, session }, gate, pass.grant);
  }
}

export function startEdge(o: EdgeOptions): Edge {
  const routes = new EdgeRoutes(o);
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: o.bind,
      port: o.port,
      onListen: () => {},
      onError: (e) => {
        if (!(e instanceof ConnectionFault)) o.warn(`edge: ${(e as Error).message}`);
        return bare(500);
      },
    }, (req) => routes.handle(req));
  } catch (e) {
    // Nothing is served: let go of Redis too, so `mur edge` ends with the error (E-EDGE-002).
    routes.mirrors.stopAll();
    routes.reader.stop();
    o.redis.close();
    throw listenError(o, e);
  }
  routes.port = server.addr.port;
  return {
    port: routes.port,
    async shutdown() {
      routes.mirrors.stopAll();
      routes.reader.stop();
      o.redis.close();
      await server.shutdown();
    },
  };
}
