/**
 * How `mur run` ends (docs/running.md): the session's status, and which tasks decide
 * it. The first deciding task that does not complete sets it; a runtime error or a fault sets
 * `failed` whatever the tasks did.
 */
import type { LifecycleConfig } from "../manifest/types.ts";
import { doorTaskDecides } from "./lifecycle.ts";
import type { ExitStatus } from "./task_run.ts";
import type { TaskRecord } from "./task_record.ts";

/** `mur run`'s status line and exit code (docs/running.md). */
export type SessionStatus =
  | "ok"
  | "failed"
  | "max_turns_reached"
  | "spend_ceiling_reached"
  | "canceled";

export function sessionStatusOf(exit: ExitStatus): SessionStatus {
  switch (exit) {
    case "ok":
    // A task that ended without an answer said so to its caller: it is not the session's failure.
    case "no_answer":
      return "ok";
    case "max_turns_reached":
      return "max_turns_reached";
    case "spend_ceiling_reached":
      return "spend_ceiling_reached";
    case "canceled":
      return "canceled";
    default:
      return "failed";
  }
}

/**
 * Does this task's ending decide the status? The launch task always does; a door task when
 * lifecycle.ts `doorTaskDecides` says so.
 */
export function decides(
  task: TaskRecord,
  lc: LifecycleConfig,
  s: { closing: boolean; stopped: boolean; queueEmpty: () => boolean },
): boolean {
  return task.source === "task_md" || doorTaskDecides(lc, s);
}

/** The status so far, and the deciding task that set it (E-RUN-040 names it). */
export class Verdict {
  status: SessionStatus = "ok";
  /** The task whose ending set a status other than ok (null while ok, or for a runtime error). */
  decidedBy: TaskRecord | null = null;

  /** Only the first deciding ending other than ok counts. */
  decide(status: SessionStatus, deciding: boolean, task: TaskRecord | null = null): void {
    if (deciding && this.status === "ok" && status !== "ok") {
      this.status = status;
      this.decidedBy = task;
    }
  }
}
