/**
 * The method-not-found error a door or an edge answers for a method it does not have, naming
 * the 1.0 method when the caller used A2A 0.3's name for it (`message/send` is `SendMessage`): a
 * client written for 0.3 is told what to change rather than only "Method not found"
 * (docs/protocol.md "Refusals", check 7). The message still starts "Method not found" for clients
 * that match it.
 */
import { type RpcError, rpcError } from "./jsonrpc.ts";

/** A2A 0.3's JSON-RPC method names and the 1.0 method each became. */
export const V03_METHODS: Readonly<Record<string, string>> = {
  "message/send": "SendMessage",
  "message/stream": "SendStreamingMessage",
  "tasks/get": "GetTask",
  "tasks/list": "ListTasks",
  "tasks/cancel": "CancelTask",
  "tasks/resubscribe": "SubscribeToTask",
  "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
  "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
  "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
};

export function methodNotFound(method: string): RpcError {
  const v10 = Object.hasOwn(V03_METHODS, method) ? V03_METHODS[method] : undefined;
  return rpcError(
    "methodNotFound",
    v10
      ? `Method not found: '${method}' is A2A 0.3's name; this door speaks A2A 1.0, where it is '${v10}'`
      : "Method not found",
  );
}
