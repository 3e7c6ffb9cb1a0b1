/**
 * The door's JSON-RPC methods in the card's order (docs/door.md). Each is also the
 * scope a credential needs to call it, except the ones `SCOPE_OF` names: the manifest, the token
 * gate and the card read these lists.
 */
export const DOOR_METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "SubscribeToTask",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "murmur.WatchSession",
  "murmur.StopSession",
  "murmur.PollSession",
] as const;

export type DoorMethod = (typeof DOOR_METHODS)[number];

/**
 * A2A's push-notification methods (docs/push.md): served when the manifest turns
 * push on (`network.push_notifications.enabled`), answered PushNotificationNotSupported otherwise.
 */
export const PUSH_METHODS = [
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
] as const;

export type PushMethod = (typeof PUSH_METHODS)[number];

export function isPushMethod(method: string): method is PushMethod {
  return (PUSH_METHODS as readonly string[]).includes(method);
}

/**
 * Methods reached by another method's scope: a long poll reads what a watch reads, and a push
 * config is a subscription to a task's events delivered by POST.
 */
const SCOPE_OF: Partial<Record<DoorMethod | PushMethod, DoorMethod>> = {
  "murmur.PollSession": "murmur.WatchSession",
  CreateTaskPushNotificationConfig: "SubscribeToTask",
  GetTaskPushNotificationConfig: "SubscribeToTask",
  ListTaskPushNotificationConfigs: "SubscribeToTask",
  DeleteTaskPushNotificationConfig: "SubscribeToTask",
};

/** The scope a credential needs to call `method`. */
export function scopeOf(method: DoorMethod | PushMethod): DoorMethod {
  return SCOPE_OF[method] ?? (method as DoorMethod);
}

/** The scopes a credential can hold (docs/door.md: tokens and scopes; docs/manifest.md "network"). */
export const SCOPES: readonly DoorMethod[] = DOOR_METHODS.filter((m) => !(m in SCOPE_OF));
