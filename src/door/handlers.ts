/**
 * The door's methods as a table: method name → handler (README "The door"). The table's
 * type is `Record<RpcMethod, Handler>`, so a method added to `DOOR_METHODS` (src/a2a/methods.ts)
 * without a handler here does not compile. Both bindings reach a method through this table: a
 * binding (JSON-RPC in rpc_checks.ts, HTTP+JSON in rest/) only decodes the request into
 * `params`, and encodes what the handler answers: a unary result through `call.binding`, a
 * stream's events with or without the JSON-RPC envelope (`stream.id` null), a thrown RpcError in
 * its own error form.
 */
import type { DoorMethod, PushMethod } from "../a2a/methods.ts";
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
} from "./push_methods.ts";
import { sendStreaming, type StreamRequest, subscribeToTask, watchSession } from "./streams.ts";

/**
 * Every method a door can serve: the scoped ones, and the extended card of an authenticated door.
 */
export type RpcMethod = DoorMethod | PushMethod | "GetExtendedAgentCard";

/** How a binding answers a unary method's result. */
export interface Binding {
  result(value: unknown): Response;
}

/** One call that passed every check (rpc_checks.ts, rest/checks.ts). */
export interface RpcCall {
  ctx: CallContext;
  /**
   * The request's id (null on HTTP+JSON), params and what a stream needs (headers, heartbeat,
   * stderr).
   */
  stream: StreamRequest;
  binding: Binding;
}

export type Handler = (call: RpcCall) => Response | Promise<Response>;

/** A unary method: its result in one body of the caller's binding. */
function unary(
  method: (ctx: CallContext, params: Record<string, unknown>, headers: Headers) => unknown,
): Handler {
  return async ({ ctx, stream, binding }) =>
    binding.result(await method(ctx, stream.params, stream.headers));
}

export const HANDLERS: Record<RpcMethod, Handler> = {
  SendMessage: unary(sendMessage),
  SendStreamingMessage: ({ ctx, stream }) => sendStreaming(ctx, stream),
  SubscribeToTask: ({ ctx, stream }) => subscribeToTask(ctx, stream),
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

/** The handler of `method`, or null when no door serves it. */
export function handlerOf(method: string): Handler | null {
  return Object.hasOwn(HANDLERS, method) ? HANDLERS[method as RpcMethod] : null;
}
