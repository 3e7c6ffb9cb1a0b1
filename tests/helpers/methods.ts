/**
 * The door's methods as the tests expect them, written out once here (not read from src/, so a
 * method added, dropped or renamed there shows up as a failing test): the eight an operator
 * token is granted, in the card's order (docs/protocol.md), then the long poll, then A2A's
 * push-config methods (-32003 unless the manifest turns push on).
 */
export const OPERATOR_METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "SubscribeToTask",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "murmur.WatchSession",
  "murmur.StopSession",
] as const;

/** What the card's stream extension lists: the operator's eight and the long poll. */
export const CARD_METHODS = [...OPERATOR_METHODS, "murmur.PollSession"] as const;

export const PUSH_METHODS = [
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
] as const;
