/**
 * CancelTask (docs/door.md; docs/protocol.md "One final status"): recorded CANCELED at once,
 * without waiting for the loop, and traced as `task_canceled` with the phase it was in. A queued
 * task never starts; a running one (or one the worker has taken but not yet started) has its
 * attempt aborted, and names the detached commands it leaves running.
 */
import type { Registry } from "./registry.ts";
import type { ResidueItem, TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "../trace_writer.ts";

export interface CancelContext {
  registry: Registry;
  trace: TraceWriter;
  sessionEvt: string;
  /** The task the worker holds (taken, maybe not yet started). */
  running: TaskRecord | null;
  residue(): ResidueItem[];
  /** The loop writes a canceled running task's final status (process transport). */
  holdCancelStatus: boolean;
}

/** The phase the task was canceled in, or null when it had ended (nothing changed). */
export function cancelTask(
  task: TaskRecord,
  c: CancelContext,
): "queued" | "input" | "turn" | null {
  // The task the worker has taken but not yet started (its start hooks run) is a running one.
  if (task.state === "TASK_STATE_SUBMITTED" && task !== c.running) {
    c.registry.finish(task, "TASK_STATE_CANCELED", "task canceled before it started");
    c.trace.write("task_canceled", c.sessionEvt, {
      task_id: task.id,
      phase: "queued",
      detached_work_ids: [],
    });
    return "queued";
  }
  if (
    task.state === "TASK_STATE_WORKING" || task.state === "TASK_STATE_INPUT_REQUIRED" ||
    task.state === "TASK_STATE_SUBMITTED"
  ) {
    const phase = task.state === "TASK_STATE_INPUT_REQUIRED" ? "input" : "turn";
    task.residue = c.residue();
    // A harness may have to be killed, which the final status must say (docs/protocol.md "One
    // final status"): the state is recorded now, and the loop writes the final status once the
    // attempt has ended.
    c.registry.finish(task, "TASK_STATE_CANCELED", "task canceled", undefined, {
      holdEvent: c.holdCancelStatus && task.state !== "TASK_STATE_SUBMITTED",
    });
    task.abort.abort();
    c.trace.write("task_canceled", c.sessionEvt, {
      task_id: task.id,
      phase,
      detached_work_ids: task.residue.map((r) => r.work_id),
    });
    return phase;
  }
  return null;
}
