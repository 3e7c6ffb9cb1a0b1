/**
 * What a running session is doing, for `mur ps`'s STATUS (docs/watch.md, the `mur ps` row):
 * `needs input` when a task waits for an answer (input required), `working` when one runs or
 * waits its turn, else `idle`. Read from the door with ListTasks filtered by state (A2A v1.0
 * `status`), one page of one task each, so the answer costs the door a count, not a listing.
 */
import { callDoor } from "./door_call.ts";

export type Activity = "working" | "idle" | "needs input";

/** The session's activity, or null when its door did not answer ListTasks. */
export async function sessionActivity(
  url: string,
  token: string | undefined,
  timeoutMs = 2000,
): Promise<Activity | null> {
  const count = async (status: string): Promise<number | null> => {
    try {
      const a = await callDoor(url, "ListTasks", { status, pageSize: 1 }, token, timeoutMs);
      const total = a.ok ? (a.result as { totalSize?: unknown })?.totalSize : undefined;
      return typeof total === "number" ? total : null;
    } catch {
      return null;
    }
  };
  const [input, working, queued] = await Promise.all([
    count("TASK_STATE_INPUT_REQUIRED"),
    count("TASK_STATE_WORKING"),
    count("TASK_STATE_SUBMITTED"),
  ]);
  if (input === null || working === null || queued === null) return null;
  if (input > 0) return "needs input";
  return working + queued > 0 ? "working" : "idle";
}
