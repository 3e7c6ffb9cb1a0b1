/**
 * Steering a running task (docs/approvals.md "Steering"): a message naming a WORKING task and
 * carrying the steer extension's marker (src/door/steer_message.ts) waits on the task until its
 * next turn boundary, where the model reads it as a user message before its next call: before
 * the next inference turn, or, when the model stopped, as one more turn (a continuation). Each
 * steer taken writes the `steer_taken` line and frame; one the task ends without reading is
 * settled "not taken" with why.
 */
import type { Continuation } from "./continuation.ts";
import type { LoopDeps, TaskRun } from "./task_run.ts";
import type { TaskRecord } from "./task_record.ts";

export type SteerOutcome =
  | { taken: true; turn: number }
  | { taken: false; why: string };

export interface PendingSteer {
  messageId: string;
  text: string;
  settle(outcome: SteerOutcome): void;
}

/** Queues a steer on a running task; the promise settles when it is read or cannot be. */
export function queueSteer(
  task: TaskRecord,
  messageId: string,
  text: string,
): Promise<SteerOutcome> {
  return new Promise((resolve) => {
    (task.steers ??= []).push({ messageId, text, settle: resolve });
  });
}

/** What the model reads: each steer as the person wrote it, marked as arriving mid-task. */
function steerContent(steers: PendingSteer[]): string {
  const body = steers.map((s) => s.text).join("\n\n");
  return `[steer] The person who gave you this task sent this while you were working; take it into account from now on:\n\n${body}`;
}

/**
 * Takes every waiting steer into the conversation before turn `turn` (1-based) and says so on
 * the trace and the stream. Returns whether any was taken.
 */
export function takeSteers(d: LoopDeps, run: TaskRun, turn: number, parent: string): boolean {
  const content = takeInto(d, run, turn, parent);
  if (content === null) return false;
  run.messages.push({ role: "user", content });
  return true;
}

function takeInto(d: LoopDeps, run: TaskRun, turn: number, parent: string): string | null {
  const { task } = run;
  const steers = task.steers;
  if (!steers || steers.length === 0) return null;
  task.steers = [];
  for (const s of steers) {
    d.trace.write("steer_taken", parent, {
      task_id: task.id,
      message_id: s.messageId,
      turn: turn - 1,
      text_bytes: new TextEncoder().encode(s.text).length,
    });
    d.registry.frame(task, { frame: "steer-taken", messageId: s.messageId, turn });
    s.settle({ taken: true, turn });
  }
  return steerContent(steers);
}

/** The model stopped while a steer waited: one more turn with it, while turns remain. */
export function steerAfterStop(d: LoopDeps): Continuation {
  return {
    next(run, _reply, parent) {
      const c = run.counters;
      if (c.turns >= d.manifest.inference.maxTurns || run.task.abort.signal.aborted) {
        return Promise.resolve(null);
      }
      return Promise.resolve(takeInto(d, run, c.turns + 1, parent));
    },
  };
}

/** The task ended (or its attempt did) with steers unread: each is told it was not taken. */
export function dropSteers(task: TaskRecord, why: string): void {
  const steers = task.steers;
  if (!steers || steers.length === 0) return;
  task.steers = [];
  for (const s of steers) s.settle({ taken: false, why });
}
