/**
 * The capsule's lifecycle decisions in one place (docs/running.md; docs/hooks.md
 * "Detached shells"): what `lifecycle.task_acceptance` (none | single | queue) with `after_task`
 * (exit | sleep) means for the door, the worker, the session's status and a detached command.
 * Every reader asks these predicates, so the combination is decided here and only here;
 * tests/session/lifecycle_table_test.ts walks every combination as a table.
 */
import type { AfterTask, TaskAcceptance } from "../manifest/types.ts";
import type { BackgroundResult } from "../tools/background.ts";

/** The two settings every decision here reads. */
export interface LifecycleMode {
  taskAcceptance: TaskAcceptance;
  afterTask: AfterTask;
}

/** Does the door take tasks at all (`task_acceptance` is not `none`)? */
export function takesTasks(lc: LifecycleMode): boolean {
  return lc.taskAcceptance !== "none";
}

/** Does the capsule stay up between tasks (queue + sleep)? */
export function sleepsBetweenTasks(lc: LifecycleMode): boolean {
  return lc.taskAcceptance === "queue" && lc.afterTask === "sleep";
}

/** Does the capsule run more than one door task (queue, with either after_task)? */
export function runsAQueue(lc: LifecycleMode): boolean {
  return lc.taskAcceptance === "queue";
}

/**
 * May the door take one more task? none takes none, single takes the first, queue keeps at most
 * `queueDepth` waiting (`waiting` counts the door's tasks waiting, not the running one nor the
 * one a free worker is about to start: src/session/admission.ts counts them).
 */
export function hasRoomFor(
  lc: LifecycleMode & { queueDepth: number },
  s: { acceptedAny: boolean; waiting: () => number },
): boolean {
  switch (lc.taskAcceptance) {
    case "none":
      return false;
    case "single":
      return !s.acceptedAny;
    case "queue":
      return s.waiting() < lc.queueDepth;
  }
}

/**
 * Does a door task's ending decide `mur run`'s status (src/session/session_status.ts)? Never on a
 * capsule that sleeps (stopped or not); otherwise when the capsule ends after it (single; queue +
 * exit with nothing else queued) or while the session is closing or stopped. The launch task
 * always decides: the caller asks this only for the others.
 */
export function doorTaskDecides(
  lc: LifecycleMode,
  s: { closing: boolean; stopped: boolean; queueEmpty: () => boolean },
): boolean {
  if (sleepsBetweenTasks(lc)) return false;
  if (s.closing || s.stopped) return true;
  if (!runsAQueue(lc)) return true;
  return s.queueEmpty();
}

/**
 * What becomes of a detached command's result (docs/hooks.md "Detached shells"): `delivered`
 * under queue + sleep (the capsule is alive when the command ends); `while_queued` under queue +
 * exit (delivered only while the capsule still has tasks to run); `lost` under single or none (the
 * session ends with the task that started it). The model is told exactly this, never more.
 */
export function backgroundResult(lc: LifecycleMode): BackgroundResult {
  if (!runsAQueue(lc)) return "lost";
  return sleepsBetweenTasks(lc) ? "delivered" : "while_queued";
}

/** What the session's worker sees each time it looks for work. */
export interface WorkerState {
  lifecycle: LifecycleMode;
  /** SIGTERM / SIGINT or the end sequence began: nothing new starts. */
  closing: boolean;
  /** murmur.StopSession was called: queued tasks never start. */
  stopped: boolean;
  /** The worker has run at least one task. */
  ranAny: boolean;
  /** A queued task is there to start (never while stopped). */
  hasNext: boolean;
  /** The last bounded wait for a first task ended with no new task at all. */
  waitedInVain: boolean;
}

/**
 * The worker's next step: `run` the next queued task, `sleep` until something happens (queue +
 * sleep: no bound), `wait` a bounded time for a first task (`lifecycle.idle_timeout`), or `end`.
 */
export type WorkerStep = "run" | "sleep" | "wait" | "end";

/**
 * The one table of the worker (src/session/session.ts `#work`): single and none end after their
 * task (what they queued for themselves is delivered by the end sequence, not here); queue + exit
 * runs until its queue is empty; queue + sleep sleeps between tasks until stopped or closed.
 */
export function next(s: WorkerState): WorkerStep {
  if (s.closing) return "end";
  if (s.ranAny && !runsAQueue(s.lifecycle)) return "end";
  if (s.hasNext) return "run";
  if (!takesTasks(s.lifecycle)) return "end";
  if (sleepsBetweenTasks(s.lifecycle)) return "sleep";
  if (s.ranAny || s.stopped || s.waitedInVain) return "end";
  return "wait";
}
