/**
 * What the session's ending writes (docs/running.md): the totals `session_end` and
 * on-session-end both carry (one record, built once), the rejection of tasks that never started,
 * and the hard end after a fault, where every task not ended is failed or rejected at once.
 */
import { isTerminal } from "../a2a/types.ts";
import type { SessionEndEvent } from "./hooks_api.ts";
import type { Registry } from "./registry.ts";
import type { SessionStatus } from "./session_status.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TaskCounters } from "./task_run.ts";
import type { TraceWriter } from "../trace_writer.ts";

/** What every task of the session used, summed as each ends. */
export class SessionTotals {
  turns = 0;
  input = 0;
  output = 0;
  tools = 0;
  shell = 0;

  add(
    t: Pick<TaskCounters, "turns" | "inputTokens" | "outputTokens" | "toolCalls" | "shellCalls">,
  ): void {
    this.turns += t.turns;
    this.input += t.inputTokens;
    this.output += t.outputTokens;
    this.tools += t.toolCalls;
    this.shell += t.shellCalls;
  }

  /** The fields of `session_end`, which on-session-end receives too. */
  record(durationMs: number, status: SessionStatus): SessionEndEvent {
    return {
      total_turns: this.turns,
      total_input_tokens: this.input,
      total_output_tokens: this.output,
      total_tool_calls: this.tools,
      total_shell_calls: this.shell,
      duration_ms: durationMs,
      exit_status: status,
    };
  }
}

/** Every queued task is rejected, stopped or ended, and traced as such. */
export function rejectQueued(
  registry: Registry,
  trace: TraceWriter,
  sessionEvt: string,
  stopped: boolean,
): void {
  const reason = stopped
    ? "task rejected: the session was stopped before this task started"
    : "task rejected: the session ended before this task started";
  for (const t of registry.queued()) {
    registry.finish(t, "TASK_STATE_REJECTED", reason);
    trace.write("task_rejected", sessionEvt, {
      task_id: t.id,
      context_id: t.contextId,
      source: t.source,
      cause: stopped ? "session_stopped" : "session_ended",
      reason,
    });
  }
}

/**
 * After a fault the task loop never came back from: a task that never started is rejected, every
 * other task not ended fails with E-RUN-050.
 */
export function endEveryTask(registry: Registry, running: TaskRecord | null): void {
  for (const t of registry.all()) {
    if (isTerminal(t.state)) continue;
    if (t.state === "TASK_STATE_SUBMITTED" && t !== running) {
      registry.finish(
        t,
        "TASK_STATE_REJECTED",
        "task rejected: the session ended before this task started",
      );
    } else {
      registry.finish(
        t,
        "TASK_STATE_FAILED",
        "error[E-RUN-050]: the session ended after an internal error",
      );
    }
  }
}
