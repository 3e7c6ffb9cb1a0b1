/**
 * What every door method is called with (src/door/handlers.ts): the session, who is calling and
 * how far they are trusted, the door's retry memory and push notifications; and `taskFor`, the
 * task an id names as this caller may see it.
 */
import type { Session } from "../session/session.ts";
import type { Origin, TaskRecord } from "../session/task_record.ts";
import type { PushNotifications } from "../push/push.ts";
import type { SeenMessages } from "./retries.ts";

export interface CallContext {
  session: Session;
  origin: Origin;
  trusted: boolean;
  extendedCard: unknown | null;
  /** Who is calling, for the retry memory: the credential, or "" on a public door. */
  caller: string;
  /** The door's memory of the messages it took (retries.ts). */
  seen: SeenMessages;
  /** The session's push notifications; absent or null: push is off (push_methods.ts). */
  push?: PushNotifications | null;
  /** A formation member's edge token: the caller reaches only the tasks it started. */
  ownTasksOnly?: boolean;
  /** A public door: the caller presented the operator's approval token (approval_token.ts). */
  approvalToken?: boolean;
}

/**
 * The task `id` as this caller may see it: a formation member's edge token reaches only the tasks
 * its own messages started (docs/crews.md: tokens); any other is "not found", as if absent.
 */
export function taskFor(ctx: CallContext, id: string): TaskRecord | undefined {
  const task = ctx.session.registry.get(id);
  if (task && ctx.ownTasksOnly && ctx.seen.starterOf(task.id) !== ctx.caller) return undefined;
  return task;
}
