/**
 * The door's JSON-RPC methods in the card's order (README "The door"). Each is also the
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

/** Methods reached by another method's scope: a long poll reads what a watch reads. */
const SCOPE_OF: Partial<Record<DoorMethod, DoorMethod>> = {
  "murmur.PollSession": "murmur.WatchSession",
};

/** The scope a credential needs to call `method`. */
export function scopeOf(method: DoorMethod): DoorMethod {
  return SCOPE_OF[method] ?? method;
}

/** The scopes a credential can hold (README "Authentication"). */
export const SCOPES: readonly DoorMethod[] = DOOR_METHODS.filter((m) => !(m in SCOPE_OF));
