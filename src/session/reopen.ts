/**
 * After an attempt: does the task get another one? One decision for both sources of a reopen
 * (docs/hooks.md: Reopen, `lifecycle.done_check`):
 *
 *   completed attempt → done check (its own `limit`) → on-task-end hooks (`max_task_reopens`)
 *
 * A failed done check with budget left reopens at once; out of budget it fails the attempt and
 * the on-task-end hooks still have their say. Every reopen is written the same way: a
 * `task_reopened` line, a WORKING status carrying the reopen ordinal, and the feedback as the
 * next user message. The turn budget (`inference.max_turns`) bounds both.
 */
import { fence } from "../tools/fence.ts";
import { runDoneCheck } from "./done_check.ts";
import { recordWorking } from "./facts.ts";
import {
  type AttemptEnd,
  exitOf,
  type ExitStatus,
  failedEnd,
  type LoopDeps,
  type TaskRun,
} from "./task_run.ts";

export type AfterAttempt =
  | { again: true }
  | { again: false; end: AttemptEnd; exitStatus: ExitStatus };

interface Reopen {
  /** `done_check`, or the hook that asked. */
  source: string;
  /** The `task_reopened` line's reason. */
  reason: string;
  /** The WORKING status message. */
  status: string;
  /** The next user message, after `Reopen <n> — `. */
  feedback: string;
}

/** One task's reopens: counts across its attempts. */
export class Reopens {
  #doneChecks = 0;

  constructor(private readonly d: LoopDeps, private readonly run: TaskRun) {}

  /** `end` is the attempt's (a cancel already applied). */
  async decide(end: AttemptEnd): Promise<AfterAttempt> {
    const { task } = this.run;
    let exitStatus = exitOf(end);
    const dc = this.d.manifest.lifecycle.doneCheck;
    if (dc && end.kind === "completed") {
      const check = await runDoneCheck(
        dc.command,
        this.d.workdir.root,
        task.abort.signal,
        this.d.containment,
      );
      this.d.trace.write("done_check", this.run.taskEvt, {
        task_id: task.id,
        command: dc.command,
        exit_code: check.exitCode,
        passed: check.passed,
        duration_ms: check.durationMs,
        output_bytes: check.outputBytes,
        ...(check.note ? { note: check.note } : {}),
      });
      if (task.abort.signal.aborted) {
        end = { kind: "canceled" };
        exitStatus = "canceled";
      } else if (!check.passed) {
        const how = check.note ?? `it exited with status ${check.exitCode}`;
        if (this.#doneChecks < dc.limit && this.#turnsLeft()) {
          this.#doneChecks++;
          this.#reopen({
            source: "done_check",
            reason: `done check \`${dc.command}\` failed: ${how}`,
            status: `done check failed, reopened ${this.#doneChecks} of ${dc.limit}`,
            feedback: `the done check failed\n\n` +
              `The command \`${dc.command}\` must pass before this task is done, and ${how}. ` +
              `Its output:\n` + fence("tool:done_check", check.output),
          });
          return { again: true };
        }
        const message =
          `done check failed: \`${dc.command}\` ${how}, after ${this.#doneChecks} of ${dc.limit} reopen(s) allowed by lifecycle.done_check.limit`;
        this.#failed("done_check", message);
        end = failedEnd(message);
        exitStatus = "failed";
      }
    }
    const decision = await this.d.hooks.taskEnd({
      task_id: task.id,
      context_id: task.contextId,
      exit_status: exitStatus,
      reopen_count: this.run.reopenCount,
      turns: this.run.counters.turns,
      result: end.kind === "completed" ? (end.reply ?? "") : (end.message ?? ""),
    });
    // A canceled task and a spent session cannot run another attempt.
    if (!decision.reopen || exitStatus === "canceled" || end.kind === "spend") {
      return { again: false, end, exitStatus };
    }
    if (task.abort.signal.aborted) {
      return { again: false, end: { kind: "canceled" }, exitStatus: "canceled" };
    }
    const { hook, feedback } = decision.reopen;
    const limit = this.d.manifest.lifecycle.maxTaskReopens;
    const hookReopens = this.run.reopenCount - this.#doneChecks;
    if (hookReopens >= limit || !this.#turnsLeft()) {
      const maxTurns = this.d.manifest.inference.maxTurns;
      const which = hookReopens >= limit
        ? `task reopen budget exhausted: hook ${hook} still wanted a reopen after ${hookReopens} of ${limit} allowed by lifecycle.max_task_reopens`
        : `task turn budget exhausted: hook ${hook} still wanted a reopen, but the task has used all ${maxTurns} turns of inference.max_turns`;
      this.#failed("reopen_budget_exhausted", which);
      return { again: false, end: failedEnd(which), exitStatus: "reopen_budget_exhausted" };
    }
    this.#reopen({
      source: hook,
      reason: feedback,
      status: `reopened by hook ${hook}`,
      feedback: `from hook ${hook}\n\n${feedback}`,
    });
    return { again: true };
  }

  #turnsLeft(): boolean {
    return this.run.counters.turns < this.d.manifest.inference.maxTurns;
  }

  #reopen(r: Reopen): void {
    const { run } = this;
    run.reopenCount++;
    recordWorking(this.d, run.task, {
      line: "task_reopened",
      parent: run.taskEvt,
      fields: {
        task_id: run.task.id,
        hook_name: r.source,
        reason: r.reason,
        reopen_number: run.reopenCount,
        attempt_context: "continued",
        turns_remaining: this.d.manifest.inference.maxTurns - run.counters.turns,
      },
      status: r.status,
      annotation: { reopen: run.reopenCount },
    });
    run.messages.push({ role: "user", content: `Reopen ${run.reopenCount} — ${r.feedback}` });
  }

  #failed(cause: string, reason: string): void {
    this.d.trace.write("task_failed", this.run.taskEvt, {
      task_id: this.run.task.id,
      cause,
      reason: reason.slice(0, 2000),
    });
  }
}
