/**
 * The session loop for one task (docs/hooks.md; drawn in docs/design.md):
 *
 *   task_start → seed (seed.ts) → attempt → [done check, on-task-end → reopen → attempt]* →
 *   the one final status → task_end
 *
 * An attempt is transport-blind here: an http driver's turns (http_attempt.ts) and a harness's
 * run (harness_attempt.ts) implement the same `Attempt`, write their parts through one sink
 * (turn_sink.ts) and dispatch tool calls through one pipeline (tool_pipeline.ts). The reopen
 * decision is reopen.ts; what may continue an attempt after the model stops is continuation.ts.
 */
import type { AnyDriver, ConversationMessage } from "../drivers/types.ts";
import { isHarnessDriver } from "../drivers/harness.ts";
import { IdSource } from "../ids.ts";
import { fence } from "../tools/fence.ts";
import { HandedOff } from "../crew/calls/handed_off.ts";
import { type Continuation, handedOffWork, keepWorking } from "./continuation.ts";
import { dropSteers, steerAfterStop } from "./steer.ts";
import { saveConversation } from "./conversation_record.ts";
import { HarnessAttempt } from "./harness_attempt.ts";
import { HttpAttempt } from "./http_attempt.ts";
import { Reopens } from "./reopen.ts";
import { seedContext } from "./seed.ts";
import {
  type Attempt,
  type AttemptEnd,
  type ExitStatus,
  type LoopDeps,
  TaskCounters,
  type TaskRun,
} from "./task_run.ts";
import type { TaskRecord } from "./task_record.ts";
import type { SourceError } from "../tools/source_errors.ts";
import { ToolPipeline } from "./tool_pipeline.ts";
import { TurnSink } from "./turn_sink.ts";
import { writeResult } from "./workdir.ts";

export type { DetachedShell, ExitStatus, Histories, ToolDispatcher } from "./task_run.ts";

export interface TaskOutcome {
  exitStatus: ExitStatus;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
  shellCalls: number;
  reopenCount: number;
  durationMs: number;
}

export interface TaskLoopOptions extends Omit<LoopDeps, "clock" | "ids"> {
  /** A per-turn driver, or a harness that runs whole attempts (`transport: process`). */
  driver: AnyDriver;
  clock?: () => number;
  ids?: IdSource;
}

const enc = new TextEncoder();

export class TaskLoop {
  readonly #d: LoopDeps;
  readonly #attempt: Attempt;

  constructor(o: TaskLoopOptions) {
    const clock = o.clock ?? Date.now;
    const d: LoopDeps = { ...o, clock, ids: o.ids ?? new IdSource(clock) };
    this.#d = d;
    const pipeline = new ToolPipeline(d);
    // What may continue an attempt once the model stops, in order (continuation.ts).
    const continuations: Continuation[] = [steerAfterStop(d), handedOffWork(d), keepWorking(d)];
    // The one place the transport matters: which kind of attempt the driver runs.
    this.#attempt = isHarnessDriver(o.driver)
      ? new HarnessAttempt(d, o.driver, pipeline, continuations)
      : new HttpAttempt(d, o.driver, pipeline, continuations);
  }

  // Why long: one task from task_start to task_end, each step in the order the file header names.
  async run(task: TaskRecord): Promise<TaskOutcome> {
    const d = this.#d;
    const { manifest, trace } = d;
    const started = d.clock();
    const taskEvt = trace.write("task_start", d.sessionEventId(), {
      task_id: task.id,
      context_id: task.contextId,
      source: task.source,
      origin: task.origin,
      trust: task.trusted ? "trusted" : "untrusted",
      lane: task.lane,
      message_parts_bytes: enc.encode(task.text).length,
    });
    const counters = new TaskCounters();
    counters.lastTurnEvt = taskEvt;
    // Tool sources that are down now, and those that fail while the task runs (docs/mcp.md).
    const sourceMark = d.tools.sourceErrorMark?.() ?? [];
    noteSourceErrors(task, d.tools.sourceErrors?.(sourceMark));
    task.handedOff = new HandedOff(taskEvt, task.abort.signal);

    const threaded = manifest.lifecycle.conversation === "threaded";
    const resumed = task.contextId === d.resumedContext && task.source === "task_md";
    const history = threaded || resumed ? (d.histories.get(task.contextId) ?? []) : [];
    // Untrusted task payloads reach the model inside the untrusted fence (docs/tools.md).
    const content = task.trusted ? task.text : fence(`task:${task.origin}`, task.text);
    const seed = await seedContext(d, task, taskEvt, history);
    const messages: ConversationMessage[] = [...seed, ...history, { role: "user", content }];
    saveConversation(d.workdir.session, task.contextId, messages);

    const run: TaskRun = { task, messages, counters, taskEvt, reopenCount: 0, hookFrames: [] };
    const reopens = new Reopens(d, run);
    const sink = new TurnSink(d.registry, task);
    let end: AttemptEnd;
    let exitStatus: ExitStatus;
    for (;;) {
      run.hookFrames = [];
      end = await this.#attempt.run(run);
      if (task.abort.signal.aborted) {
        // Keeps a harness attempt's own cancel message (the harness had to be killed).
        end = end.kind === "canceled" ? end : { kind: "canceled" };
      }
      if (end.kind !== "canceled") {
        const whole = end.kind === "completed" && !end.replyStreamed ? end.reply ?? null : null;
        sink.attemptEnd(run.hookFrames, whole);
      }
      const next = await reopens.decide(end);
      if (next.again) continue;
      ({ end, exitStatus } = next);
      break;
    }

    dropSteers(task, "the task ended before its next turn");
    // Work still out when the task ends (no turn left, failed, canceled) is stopped and its
    // cancels sent before the task's end is recorded (docs/crews.md).
    task.handedOff.stopAll(end.kind === "canceled" ? "canceled" : "ended");
    await task.handedOff.drained();
    saveConversation(d.workdir.session, task.contextId, messages);
    if (threaded && exitStatus === "ok") d.histories.set(task.contextId, messages);
    noteSourceErrors(task, d.tools.sourceErrors?.(sourceMark));
    this.#finish(task, end, exitStatus, threaded);
    const durationMs = d.clock() - started;
    const outcome: TaskOutcome = {
      exitStatus,
      reopenCount: run.reopenCount,
      durationMs,
      turns: counters.turns,
      inputTokens: counters.inputTokens,
      outputTokens: counters.outputTokens,
      toolCalls: counters.toolCalls,
      shellCalls: counters.shellCalls,
    };
    trace.write("task_end", taskEvt, {
      task_id: task.id,
      exit_status: exitStatus,
      duration_ms: durationMs,
      turns: counters.turns,
      input_tokens: counters.inputTokens,
      output_tokens: counters.outputTokens,
      tool_calls: counters.toolCalls,
      shell_calls: counters.shellCalls,
      reopen_count: run.reopenCount,
    });
    return outcome;
  }

  /** Writes result.txt and the one final status. */
  #finish(task: TaskRecord, end: AttemptEnd, exitStatus: ExitStatus, threaded: boolean): void {
    const { registry, workdir, manifest } = this.#d;
    const taskFile = threaded ? task.id : undefined;
    switch (end.kind) {
      case "completed": {
        const reply = end.reply ?? "";
        const cut = end.maxTokensCut
          ? `\n\n[this answer stopped at the inference.max_tokens output cap of ${manifest.inference.maxTokens} tokens]\n`
          : "";
        writeResult(workdir, reply + cut, taskFile);
        if (exitStatus === "ok") {
          registry.finish(task, "TASK_STATE_COMPLETED", "task completed", reply);
          return;
        }
        break;
      }
      case "canceled":
        writeResult(workdir, "error: task canceled", taskFile);
        // The door already recorded CANCELED; this only covers a cancel from inside the session.
        registry.finish(task, "TASK_STATE_CANCELED", end.message ?? "task canceled");
        return;
      default:
        writeResult(workdir, end.result ?? `error: ${end.message}`, taskFile);
    }
    registry.finish(task, "TASK_STATE_FAILED", end.message ?? "task failed");
  }
}

/** GetTask's `metadata.murmur.sourceErrors` (docs/mcp.md), when there are any. */
function noteSourceErrors(task: TaskRecord, errors: SourceError[] | undefined): void {
  if (!errors?.length) return;
  // Beside those a harness reported for its own servers (src/session/harness_attempt.ts).
  const known = new Set((task.sourceErrors ?? []).map((e) => `${e.source}\n${e.message}`));
  const added = errors.filter((e) => !known.has(`${e.source}\n${e.message}`));
  task.sourceErrors = [...(task.sourceErrors ?? []), ...added];
}
