/**
 * The door's JSON-RPC methods in the card's order (README "The door"). They are also the scopes a
 * credential can hold, so the manifest, the token gate and the card read this one list.
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
] as const;

export type DoorMethod = (typeof DOOR_METHODS)[number];
