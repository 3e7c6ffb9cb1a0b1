/**
 * The door's methods as a table: method name → handler (README "The door"). The table's
 * type is `Record<RpcMethod, Handler>`, so a method added to `DOOR_METHODS` (src/a2a/methods.ts)
 * without a handler here does not compile. Unary methods answer one JSON-RPC body; the three
 * stream methods answer an SSE response (streams.ts).
 */
import type { DoorMethod, PushMethod } from "../a2a/methods.ts";
import { rpcResult } from "./jsonrpc.ts";
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
import { json } from "./responses.ts";
import { sendStreaming, type StreamRequest, subscribeToTask, watchSession } from "./streams.ts";

/**
 * Every method a door can serve: the scoped ones, and the extended card of an authenticated door.
 */
export type RpcMethod = DoorMethod | PushMethod | "GetExtendedAgentCard";

/** One call that passed every check (rpc_checks.ts). */
export interface RpcCall {
  ctx: CallContext;
  /** The request's id, params and what a stream needs (headers, heartbeat, stderr). */
  stream: StreamRequest;
}

export type Handler = (call: RpcCall) => Response | Promise<Response>;

/** A unary method: its result in one JSON-RPC body. */
function unary(
  method: (ctx: CallContext, params: Record<string, unknown>, headers: Headers) => unknown,
): Handler {
  return async ({ ctx, stream }) =>
    json(200, rpcResult(stream.id, await method(ctx, stream.params, stream.headers)));
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
