/**
 * `mur edge`'s HTTP server (README "Beyond one machine"): every session in one Redis, each under
 * `/sessions/<session id>/`, answered with the capsule door's own checks (rpc_checks.ts: body cap,
 * envelope, A2A-Version, method, scope, params) and the same token gate (gate.ts) under the
 * session's key derived from MURMUR_CLUSTER_KEY. Reads are served here, from a mirror of the
 * session's stream (mirror.ts) and its tasks hash; writes go to the capsule's door (forward.ts).
 * The edge holds no state a restart loses: a client that reconnects to any edge with
 * Last-Event-ID resumes where it was.
 */
import { isTerminal } from "../a2a/types.ts";
import type { RedisConn, RedisTarget } from "../cluster/redis.ts";
import { RedisConn as Conn } from "../cluster/redis.ts";
import { DoorAuth, sessionTokenKey } from "../door/auth.ts";
import { doorMethods } from "../door/card.ts";
import { Gate } from "../door/gate.ts";
import type { RpcMethod } from "../door/handlers.ts";
import {
  type Envelope,
  invalidParams,
  RpcError,
  rpcError,
  rpcErrorBody,
  rpcResult,
  taskNotFound,
  unsupported,
} from "../door/jsonrpc.ts";
import { listRows } from "../door/methods.ts";
import { pollLog } from "../door/poll.ts";
import { bare, json, JSON_HEADERS, through } from "../door/responses.ts";
import { rpcChecks, type RpcRequest } from "../door/rpc_checks.ts";
import { activates, lastEventId } from "../door/streams.ts";
import { DOOR_URI, STREAM_URI } from "../events/frames.ts";
import { ConnectionFault, openView } from "../events/view.ts";
import { forward, forwardGet } from "./forward.ts";
import { SessionMirror } from "./mirror.ts";
import { cardFor, readMeta, readTask, readTaskRows, type SessionMeta } from "./session_facts.ts";

/** A cursor the mirror has not reached yet: it may still be on its way from the capsule. */
const CATCH_UP_MS = 1000;
/** A mirror no connection has used for this long stops following its session. */
const IDLE_MS = 60_000;

export interface EdgeOptions {
  target: RedisTarget;
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

interface Call {
  req: Request;
  env: Envelope;
  bytes: Uint8Array;
  sessionId: string;
  meta: SessionMeta;
  /** This edge's URL for the session (`http://<host>/sessions/<id>`). */
  base: string;
}

type EdgeHandler = (call: Call) => Promise<Response>;

export function startEdge(o: EdgeOptions): Edge {
  const mirrors = new Map<string, SessionMirror>();
  let cmd: RedisConn | null = null;
  const redis = async (): Promise<RedisConn> => {
    if (cmd === null || cmd.broken) cmd = await Conn.connect(o.target);
    return cmd;
  };
  const mirrorOf = async (sessionId: string): Promise<SessionMirror> => {
    let m = mirrors.get(sessionId);
    if (!m || m.log.closed) {
      m = new SessionMirror({ target: o.target, sessionId, warn: o.warn });
      mirrors.set(sessionId, m);
    }
    await m.ready;
    return m;
  };
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, m] of mirrors) {
      if (m.log.subscriptionCount > 0) m.idleSince = now;
      else if (now - m.idleSince > IDLE_MS || m.log.closed) {
        m.stop();
        mirrors.delete(id);
      }
    }
  }, 5000);

  /** The replay's cursor, once the mirror has caught up with it (or CATCH_UP_MS passed). */
  const cursorOf = async (m: SessionMirror, headers: Headers): Promise<number | undefined> => {
    const id = lastEventId(headers);
    const deadline = Date.now() + CATCH_UP_MS;
    // waitAfter wakes at every event: wait again until the cursor is reached or time is up.
    while (id !== undefined && id > m.log.lastId && !m.log.closed && Date.now() < deadline) {
      await m.log.waitAfter(m.log.lastId, deadline - Date.now());
    }
    return id;
  };

  const sse = (body: ReadableStream<Uint8Array>, ext: string[]) => {
    const headers = new Headers({
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "connection": "keep-alive",
    });
    if (ext.length) headers.set("A2A-Extensions", ext.join(", "));
    return new Response(body, { headers });
  };

  const forwarded: EdgeHandler = (c) => forward(c.meta.door, c.req, c.bytes, c.env.id);

  const HANDLERS: Record<RpcMethod, EdgeHandler> = {
    SendMessage: forwarded,
    SendStreamingMessage: forwarded,
    CancelTask: forwarded,
    "murmur.StopSession": forwarded,
    // Push configs live in the capsule, which sends the notifications (src/push/).
    CreateTaskPushNotificationConfig: forwarded,
    GetTaskPushNotificationConfig: forwarded,
    ListTaskPushNotificationConfigs: forwarded,
    DeleteTaskPushNotificationConfig: forwarded,
    "murmur.WatchSession": async (c) => {
      const m = await mirrorOf(c.sessionId);
      const body = openView({
        kind: "watch",
        log: m.log,
        requestId: c.env.id,
        activated: true,
        heartbeatMs: o.heartbeatMs,
        conversationMode: c.meta.conversationMode,
        lastEventId: await cursorOf(m, c.req.headers),
        warn: o.warn,
      });
      return sse(body, [DOOR_URI, STREAM_URI]);
    },
    SubscribeToTask: async (c) => {
      const id = c.env.params.id;
      if (typeof id !== "string" || id === "") {
        throw invalidParams("Invalid params: SubscribeToTask requires an id");
      }
      if (!c.meta.acceptsTasks) {
        throw unsupported(
          "this capsule takes no tasks (lifecycle.task_acceptance is none), so there is no task to subscribe to",
        );
      }
      const m = await mirrorOf(c.sessionId);
      const requested = await cursorOf(m, c.req.headers);
      // Events after this mark reach the connection by replay: none is lost while the task is
      // read from Redis (the capsule's door subscribes before it reads; this is the same rule).
      const mark = m.log.lastId;
      const task = await readTask(await redis(), c.sessionId, id);
      if (!task) throw taskNotFound(id);
      const ended = isTerminal(task.status.state) ? task.status.state : undefined;
      const streamState = m.stateOf(id);
      if (ended || (streamState && isTerminal(streamState) && requested === undefined)) {
        const state = ended ?? streamState!;
        throw unsupported(`task ${id} has ended in ${state}; read it with GetTask`, {
          taskId: id,
          state,
        });
      }
      const activated = activates(c.req.headers);
      const body = openView({
        kind: "subscribe",
        log: m.log,
        requestId: c.env.id,
        activated,
        heartbeatMs: o.heartbeatMs,
        taskId: id,
        probe: m.probe(task),
        opening: { task },
        lastEventId: requested ?? mark,
        warn: o.warn,
      });
      return sse(body, activated ? [STREAM_URI] : []);
    },
    GetTask: async (c) => {
      const id = c.env.params.id;
      if (typeof id !== "string" || id === "") throw invalidParams("GetTask requires an id");
      const task = await readTask(await redis(), c.sessionId, id);
      if (!task) throw taskNotFound(id);
      return json(200, rpcResult(c.env.id, task));
    },
    ListTasks: async (c) => {
      const rows = await readTaskRows(await redis(), c.sessionId);
      return json(200, rpcResult(c.env.id, listRows(rows, c.env.params)));
    },
    "murmur.PollSession": async (c) => {
      const m = await mirrorOf(c.sessionId);
      return json(200, rpcResult(c.env.id, await pollLog(m.log, c.env.params)));
    },
    GetExtendedAgentCard: (c) => {
      if (c.meta.extendedCard === null) {
        throw unsupported("this agent serves no extended agent card");
      }
      return Promise.resolve(json(200, rpcResult(c.env.id, cardFor(c.meta.extendedCard, c.base))));
    },
  };

  const gates = new Map<string, Gate>();
  const gateOf = async (sessionId: string, meta: SessionMeta): Promise<Gate | Response> => {
    if (meta.auth === "none") return new Gate(null, meta.name);
    if (meta.auth === "unverifiable" || o.clusterKey === null) {
      return json(
        503,
        JSON.stringify({
          error: "tokens_not_verifiable",
          message: meta.auth === "unverifiable"
            ? "this session's capsule mints its tokens under a key of its own (no MURMUR_CLUSTER_KEY): call its own door"
            : "this edge has no MURMUR_CLUSTER_KEY, so it cannot verify this session's tokens",
        }),
      );
    }
    let g = gates.get(sessionId);
    if (!g) {
      const auth = await DoorAuth.verifying(await sessionTokenKey(o.clusterKey, sessionId));
      gates.set(sessionId, g = new Gate(auth, meta.name));
    }
    return g;
  };

  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (url.pathname === "/healthz" && req.method === "GET") {
      try {
        await (await redis()).must(["PING"]);
        return json(200, JSON.stringify({ ok: true }));
      } catch (e) {
        return json(503, JSON.stringify({ ok: false, error: (e as Error).message }));
      }
    }
    const route = /^\/sessions\/(ses_[0-9a-f]{32})(\/.*)$/.exec(url.pathname);
    if (!route) return bare(404);
    const [, sessionId, rest] = route;
    let meta: SessionMeta | null;
    try {
      meta = await readMeta(await redis(), sessionId);
    } catch (e) {
      return json(
        503,
        JSON.stringify({ error: "redis_unavailable", message: (e as Error).message }),
      );
    }
    if (meta === null) {
      return json(
        404,
        JSON.stringify({
          error: "no_such_session",
          message:
            `${sessionId} is not published in this edge's Redis (never published, or ended and expired)`,
        }),
      );
    }
    const host = req.headers.get("host") ?? `${o.bind}:${port}`;
    const base = `http://${host}/sessions/${sessionId}`;
    if (rest === "/.well-known/agent-card.json" && req.method === "GET" && !url.search) {
      return new Response(JSON.stringify(cardFor(meta.card, base)), {
        headers: { ...JSON_HEADERS, "cache-control": "no-cache" },
      });
    }
    const gate = await gateOf(sessionId, meta);
    if (gate instanceof Response) return gate;
    const admitted = await gate.admit(req);
    if (admitted instanceof Response) return admitted;
    if (rest.startsWith("/attachments/")) {
      // An artifact frame's image (docs/protocol.md "Attachments"): the bytes are the capsule's.
      if (req.method !== "GET") return bare(405, { allow: "GET" });
      const refused = gate.require(admitted.grant, "GetTask");
      if (refused) return refused;
      return await forwardGet(meta.door, rest + url.search, req);
    }
    const call: RpcRequest = {
      req,
      url: new URL(rest + url.search, url.origin),
      grant: admitted.grant,
    };
    const checks = rpcChecks(new Set(doorMethods(meta.auth !== "none", meta.push)), gate);
    const refused = await through(call, checks);
    if (refused) return refused;
    const env = call.env!;
    const handler = Object.hasOwn(HANDLERS, env.method) ? HANDLERS[env.method as RpcMethod] : null;
    if (!handler) {
      return json(200, rpcErrorBody(env.id, rpcError("methodNotFound", "Method not found")));
    }
    try {
      return await handler({ req, env, bytes: call.bytes!, sessionId, meta, base });
    } catch (e) {
      if (e instanceof RpcError) return json(200, rpcErrorBody(env.id, e));
      o.warn(`edge: ${env.method} failed: ${e instanceof Error ? e.message : e}`);
      return json(
        200,
        rpcErrorBody(
          env.id,
          rpcError("internalError", "internal error: the request could not be handled"),
        ),
      );
    }
  };

  const server = Deno.serve({
    hostname: o.bind,
    port: o.port,
    onListen: () => {},
    onError: (e) => {
      if (!(e instanceof ConnectionFault)) o.warn(`edge: ${(e as Error).message}`);
      return bare(500);
    },
  }, handle);
  const port = server.addr.port;
  return {
    port,
    async shutdown() {
      clearInterval(sweep);
      for (const m of mirrors.values()) m.stop();
      (cmd as RedisConn | null)?.close();
      await server.shutdown();
    },
  };
}
