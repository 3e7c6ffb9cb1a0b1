/**
 * The door's methods as a table: method name → handler (docs/door.md). The table's
 * type is `Record<RpcMethod, Handler>`, so a method added to `DOOR_METHODS` (src/a2a/methods.ts)
 * without a handler here does not compile. Both bindings reach a method through this table: a
 * binding (JSON-RPC in rpc_checks.ts, HTTP+JSON in rest/) only decodes the request into
 * `params`, and encodes what the handler answers: a unary result through `call.binding`, a
 * stream's events with or without the JSON-RPC envelope (`stream.id` null), a thrown RpcError in
 * its own error form.
 */
import type { ParamsOf, SpecMethod } from "../a2a/spec.ts";
import {
  type CallContext,
  cancelTask,
  extendedCard,
  getTask,
  listTasks,
  sendMessage,
  stopSession,
} from "./methods.ts";
import { pollSession } from "./poll.ts";
import {
  createPushConfig,
  deletePushConfig,
  getPushConfig,
  listPushConfigs,
  pushOf,
} from "./push_methods.ts";
import { parseParams } from "../a2a/spec.ts";
import { invalidParams, param, taskNotFound } from "./jsonrpc.ts";
import { routeMessage } from "./send.ts";
import {
  refuseStreamsWithoutTasks,
  sendStreaming,
  type StreamRequest,
  subscribeToTask,
  watchSession,
} from "./streams.ts";

/**
 * Every method a door can serve: the scoped ones, and the extended card of an authenticated door
 * (src/a2a/spec.ts says what each takes).
 */
export type RpcMethod = SpecMethod;

/** How a binding answers a unary method's result. */
export interface Binding {
  result(value: unknown): Response;
}

/** One call that passed every check (rpc_checks.ts, rest/checks.ts), its params read. */
export interface RpcCall<M extends RpcMethod = RpcMethod> {
  ctx: CallContext;
  /** The params as src/a2a/spec.ts read them for this method. */
  params: ParamsOf<M>;
  /**
   * The request's id (null on HTTP+JSON), params and what a stream needs (headers, heartbeat,
   * stderr).
   */
  stream: StreamRequest;
  binding: Binding;
}

export type Handler<M extends RpcMethod = RpcMethod> = (
  call: RpcCall<M>,
) => Response | Promise<Response>;

/** A unary method: its result in one body of the caller's binding. */
function unary<M extends RpcMethod>(
  method: (ctx: CallContext, params: ParamsOf<M>, headers: Headers) => unknown,
): Handler<M> {
  return async ({ ctx, params, stream, binding }) =>
    binding.result(await method(ctx, params, stream.headers));
}

/** The method table: each handler takes its own method's params (a wrong one does not compile). */
export const HANDLERS: { [M in RpcMethod]: Handler<M> } = {
  SendMessage: unary(sendMessage),
  SendStreamingMessage: ({ ctx, stream, params }) => sendStreaming(ctx, stream, params),
  SubscribeToTask: ({ ctx, stream, params }) => subscribeToTask(ctx, stream, params),
  "murmur.WatchSession": ({ ctx, stream }) => watchSession(ctx, stream),
  GetTask: unary(getTask),
  ListTasks: unary(listTasks),
  CancelTask: unary(cancelTask),
  "murmur.StopSession": unary((ctx) => stopSession(ctx)),
  "murmur.PollSession": unary(pollSession),
  GetExtendedAgentCard: unary((ctx) => extendedCard(ctx)),
  // Push (push_methods.ts): served when the manifest turns push on, else PushNotificationNotSupported.
  CreateTaskPushNotificationConfig: unary(createPushConfig),
  GetTaskPushNotificationConfig: unary(getPushConfig),
  ListTaskPushNotificationConfigs: unary(listPushConfigs),
  DeleteTaskPushNotificationConfig: unary(deletePushConfig),
};

/** Whether some door serves `method`. */
export function isRpcMethod(method: string): method is RpcMethod {
  return Object.hasOwn(HANDLERS, method);
}

/**
 * What a method answers before its params are read, or when they are refused, so that its
 * refusals come in the order docs/protocol.md "Refusals" gives: a stream from a capsule that takes
 * no tasks is refused whatever its params; a push method's task that does not exist is not found
 * before its other params are read; a message's own refusals (a raw part, a task it cannot go to)
 * come before its configuration's.
 */
const BEFORE_PARAMS: Partial<Record<RpcMethod, (ctx: CallContext) => void>> = {
  SendStreamingMessage: refuseStreamsWithoutTasks,
  CreateTaskPushNotificationConfig: (ctx) => pushOf(ctx),
  GetTaskPushNotificationConfig: (ctx) => pushOf(ctx),
  ListTaskPushNotificationConfigs: (ctx) => pushOf(ctx),
  DeleteTaskPushNotificationConfig: (ctx) => pushOf(ctx),
};

type Refused = { message: string; path: PropertyKey[] };

const ON_REFUSED: Partial<Record<RpcMethod, (ctx: CallContext, raw: unknown, r: Refused) => void>> =
  {
    SendMessage: messageFirst("SendMessage"),
    SendStreamingMessage: messageFirst("SendStreamingMessage"),
    GetTaskPushNotificationConfig: pushTaskFirst,
    ListTaskPushNotificationConfigs: pushTaskFirst,
    DeleteTaskPushNotificationConfig: pushTaskFirst,
  };

/** A configuration's refusal waits for the message's own: the message is read and routed first. */
function messageFirst(method: "SendMessage" | "SendStreamingMessage") {
  return (ctx: CallContext, raw: unknown, r: Refused) => {
    if (r.path[0] !== "configuration" || typeof raw !== "object" || raw === null) return;
    const message = parseParams(method, { message: (raw as Record<string, unknown>).message });
    if (message.ok) routeMessage(ctx, message.params.message);
  };
}

/** A push method names a task first: one that is not there is not found, whatever else is wrong. */
function pushTaskFirst(ctx: CallContext, raw: unknown, r: Refused) {
  if (r.path[0] === "taskId" || typeof raw !== "object" || raw === null) return;
  const taskId = param(raw as Record<string, unknown>, "taskId");
  if (typeof taskId === "string" && !ctx.session.registry.get(taskId)) throw taskNotFound(taskId);
}

/**
 * Calls `method`'s handler with its params read by its spec, or answers the spec's refusal as
 * invalid params (the one place a params issue becomes an RpcError, in either binding).
 */
export function callMethod<M extends RpcMethod>(
  method: M,
  call: Omit<RpcCall<M>, "params">,
): Response | Promise<Response> {
  BEFORE_PARAMS[method]?.(call.ctx);
  const read = parseParams(method, call.stream.params);
  if (!read.ok) {
    ON_REFUSED[method]?.(call.ctx, call.stream.params, read);
    throw invalidParams(read.message);
  }
  // The table pairs each method with its handler; the compiler cannot follow the pair through M.
  const handler = HANDLERS[method] as Handler<M>;
  return handler({ ...call, params: read.params });
}
