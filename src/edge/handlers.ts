/**
 * The edge's methods as a table, like the door's (src/door/handlers.ts): method name → handler,
 * typed `Record<RpcMethod, EdgeHandler>` so a method the door serves cannot be missing here.
 * Both bindings reach a method through this table (server.ts decodes a JSON-RPC or an HTTP+JSON
 * request into `params`); a handler reads the session through `EdgeSession` (the mirror of its
 * stream, its tasks and meta in Redis) or forwards the call to the capsule's own door.
 */
import type { Task } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import type { Binding, RpcMethod } from "../door/handlers.ts";
import { invalidParams, taskNotFound, unsupported } from "../door/jsonrpc.ts";
import { type ParamsOf, parseParams } from "../a2a/spec.ts";
import type { listRows } from "../door/methods.ts";
import { historyLengthOf } from "../door/history_length.ts";
import { pollLog } from "../door/poll.ts";
import {
  activates,
  lastEventId,
  noTaskToSubscribe,
  sseResponse,
  taskEnded,
} from "../door/sse_response.ts";
import { DOOR_URI, STREAM_URI } from "../events/frames.ts";
import { openView } from "../events/view.ts";
import type { SessionMirror } from "./mirror.ts";
import { cardFor, filesAt, type SessionMeta } from "./session_facts.ts";
import type { WireRebase } from "../events/wire.ts";

/** A cursor the mirror has not reached yet: it may still be on its way from the capsule. */
const CATCH_UP_MS = 1000;

/** What a handler knows of the session it serves (server.ts builds one per request). */
export interface EdgeSession {
  id: string;
  meta: SessionMeta;
  /** This edge's URL for the session (`http://<host>/sessions/<id>`). */
  base: string;
  /** The session's mirror, once its first read was tried. */
  mirror(): Promise<SessionMirror>;
  /** The task as GetTask answers it, `historyLength` as GetTask reads it. */
  task(id: string, historyLength?: number): Promise<Task | undefined>;
  /** ListTasks' answer to `params` (listRows, then each task's history). */
  listTasks(params: Record<string, unknown>): Promise<ReturnType<typeof listRows>>;
}

export interface EdgeCall<M extends RpcMethod = RpcMethod> {
  session: EdgeSession;
  /** The JSON-RPC request id; null on HTTP+JSON (bare stream events). */
  id: string | number | null;
  /** The params as src/a2a/spec.ts read them for this method (as the door reads them). */
  params: ParamsOf<M>;
  /** The params as the request carried them. */
  raw: Record<string, unknown>;
  headers: Headers;
  binding: Binding;
  heartbeatMs: number;
  warn(line: string): void;
  /** The same request, sent to the capsule's door, its answer streamed back (forward.ts). */
  forward(): Promise<Response>;
}

export type EdgeHandler<M extends RpcMethod = RpcMethod> = (call: EdgeCall<M>) => Promise<Response>;

/** The replay's cursor, once the mirror has caught up with it (or CATCH_UP_MS passed). */
async function cursorOf(m: SessionMirror, headers: Headers): Promise<number | undefined> {
  const id = lastEventId(headers);
  const deadline = Date.now() + CATCH_UP_MS;
  // waitAfter wakes at every event: wait again until the cursor is reached or time is up.
  while (id !== undefined && id > m.log.lastId && !m.log.closed && Date.now() < deadline) {
    await m.log.waitAfter(m.log.lastId, deadline - Date.now());
  }
  return id;
}

/** A method the capsule's door answers: its params are the door's to read (and refuse). */
const forwarded = (c: { forward(): Promise<Response> }) => c.forward();

/** The stream's published files named through this edge (docs/protocol.md "Files and data"). */
function rebaseOf(c: EdgeCall): WireRebase {
  return { key: c.session.base, rewrite: filesAt(c.session.meta.door, c.session.base) };
}

async function watchSession(c: EdgeCall<"murmur.WatchSession">): Promise<Response> {
  const m = await c.session.mirror();
  const body = openView({
    kind: "watch",
    log: m.log,
    requestId: c.id,
    activated: true,
    heartbeatMs: c.heartbeatMs,
    conversationMode: c.session.meta.conversationMode,
    lastEventId: await cursorOf(m, c.headers),
    warn: c.warn,
    rebase: rebaseOf(c),
    quietLag: true,
  });
  return sseResponse(body, [DOOR_URI, STREAM_URI]);
}

async function subscribeToTask(c: EdgeCall<"SubscribeToTask">): Promise<Response> {
  const id = c.params.id;
  if (!c.session.meta.acceptsTasks) {
    throw noTaskToSubscribe();
  }
  const m = await c.session.mirror();
  const requested = await cursorOf(m, c.headers);
  // Events after this mark reach the connection by replay: none is lost while the task is read
  // from Redis (the capsule's door subscribes before it reads; this is the same rule).
  const mark = m.log.lastId;
  const task = await c.session.task(id);
  if (!task) throw taskNotFound(id);
  const ended = isTerminal(task.status.state) ? task.status.state : undefined;
  const streamState = m.stateOf(id);
  if (ended || (streamState && isTerminal(streamState) && requested === undefined)) {
    const state = ended ?? streamState!;
    throw taskEnded(id, state);
  }
  const activated = activates(c.headers);
  const body = openView({
    kind: "subscribe",
    log: m.log,
    requestId: c.id,
    activated,
    heartbeatMs: c.heartbeatMs,
    taskId: id,
    probe: m.probe(task),
    opening: { task },
    lastEventId: requested ?? mark,
    warn: c.warn,
    rebase: rebaseOf(c),
    quietLag: true,
  });
  return sseResponse(body, activated ? [STREAM_URI] : []);
}

/** The method table: each handler takes its own method's params (a wrong one does not compile). */
export const EDGE_HANDLERS: { [M in RpcMethod]: EdgeHandler<M> } = {
  SendMessage: forwarded,
  SendStreamingMessage: forwarded,
  CancelTask: forwarded,
  "murmur.StopSession": forwarded,
  // Push configs live in the capsule, which sends the notifications (src/push/).
  CreateTaskPushNotificationConfig: forwarded,
  GetTaskPushNotificationConfig: forwarded,
  ListTaskPushNotificationConfigs: forwarded,
  DeleteTaskPushNotificationConfig: forwarded,
  "murmur.WatchSession": watchSession,
  SubscribeToTask: subscribeToTask,
  GetTask: async (c) => {
    const id = c.params.id;
    const task = await c.session.task(id, historyLengthOf(c.raw));
    if (!task) throw taskNotFound(id);
    return c.binding.result(task);
  },
  ListTasks: async (c) => c.binding.result(await c.session.listTasks(c.raw)),
  "murmur.PollSession": async (c) =>
    c.binding.result(await pollLog((await c.session.mirror()).log, c.raw)),
  GetExtendedAgentCard: (c) => {
    const ext = c.session.meta.extendedCard;
    if (ext === null) throw unsupported("this agent serves no extended agent card");
    return Promise.resolve(c.binding.result(cardFor(ext, c.session.base)));
  },
};

/** Whether an edge serves `method` (every method a door can serve). */
export function isEdgeMethod(method: string): method is RpcMethod {
  return Object.hasOwn(EDGE_HANDLERS, method);
}

/**
 * Calls `method`'s handler: a forwarded method as it came (the door reads its params), any other
 * with its params read by the door's own spec and refused as the door refuses them.
 */
export function callEdge<M extends RpcMethod>(
  method: M,
  call: Omit<EdgeCall<M>, "params">,
): Promise<Response> {
  // The table pairs each method with its handler; the compiler cannot follow the pair through M.
  const handler = EDGE_HANDLERS[method] as EdgeHandler<M>;
  if ((handler as unknown) === forwarded) return call.forward();
  const read = parseParams(method, call.raw);
  if (!read.ok) throw invalidParams(read.message);
  return handler({ ...call, params: read.params });
}
