/**
 * An attempt through a harness (`inference.transport: process`). The harness runs the whole
 * attempt itself — many turns in one process — so instead of calling `Driver.turn()` per turn
 * the attempt hands the harness the newest user message and turns the `HarnessPart`s it yields
 * into exactly the events and trace lines an http attempt writes for the same work
 * (docs/process-transport.md):
 *
 * - `turn-start` → WORKING `inference turn <n>`; text / reasoning / tool-input / quota /
 *   suggested-prompt parts → the turn sink, as an http turn's parts;
 * - `tool-result` → the `artifact` frame from the harness's report (a process capsule's frame:
 *   `exitCode` null, `truncated` false, `attachments` []). The bridge's calls run through the
 *   tool pipeline without a frame, so a policy refusal shows exactly once, as the harness's
 *   failed tool call;
 * - `turn-end` → the `inference` trace line and the on-inference hook;
 * - `usage` → the task's token counters and the spend meter; `trace` → the `harness_*` line;
 * - `result` → the attempt's end (outcomeEnd below).
 *
 * When the harness ends its run and a continuation has a message (keep_working), the attempt
 * resumes the task's own harness session with it, as a reopen does.
 */
import { errorMessage } from "../errors.ts";
import type { ToolCall } from "../drivers/types.ts";
import type { AttemptOutcome, HarnessDriver, HarnessPart } from "../drivers/harness.ts";
import { withCapsuleBlock } from "../drivers/capsule_block.ts";
import type { ArtifactFrame } from "../events/frames.ts";
import type { ToolResult } from "../tools/types.ts";
import { type Continuation, continueAfterStop } from "./continuation.ts";
import { INPUT_TIMEOUT } from "./request_input.ts";
import {
  type Attempt,
  type AttemptEnd,
  failedEnd,
  type LoopDeps,
  noAnswerEnd,
  type TaskRun,
} from "./task_run.ts";
import type { CallRunner } from "./tool_pipeline.ts";
import { TurnSink } from "./turn_sink.ts";

/** The final status message of a task whose harness ignored the interrupt and was killed. */
export const KILLED_ON_CANCEL =
  "task canceled; the harness was killed and its session may not resume cleanly";

export class HarnessAttempt implements Attempt {
  constructor(
    private readonly d: LoopDeps,
    private readonly driver: HarnessDriver,
    private readonly pipeline: CallRunner,
    private readonly continuations: Continuation[],
  ) {}

  async run(run: TaskRun): Promise<AttemptEnd> {
    // The harness keeps the conversation: it gets only the newest user message (the task, or
    // the reopen feedback).
    let resumes = run.reopenCount;
    for (;;) {
      const end = await this.#segment(run, resumes);
      // `end-without-answer` during the run: a harness that went on and finished ends the same
      // way, without its reply (docs/crews.md).
      if (end.kind === "completed" && run.task.noAnswer !== undefined) {
        return noAnswerEnd(run.task.noAnswer);
      }
      if (
        end.kind !== "completed" ||
        !await continueAfterStop(this.continuations, run, end.reply ?? "", run.taskEvt)
      ) {
        return end;
      }
      // Continued: the run's hook artifacts were the stopped run's; the next run is a resume.
      run.hookFrames.length = 0;
      resumes++;
    }
  }

  /** One run of the harness; `resumes` 0 is the task's first (it may forget the session). */
  // Why long: one harness run read part by part; every part kind updates the same run counters and
  // frames in stream order (docs/protocol.md "Event order within a task"), so the switch stays
  // whole.
  async #segment(run: TaskRun, resumes: number): Promise<AttemptEnd> {
    const { manifest, registry, trace, hooks } = this.d;
    const { driver } = this;
    const { task, counters: c, taskEvt } = run;
    const last = run.messages[run.messages.length - 1];
    const threaded = manifest.lifecycle.conversation === "threaded";

    // A2A forgetSession: the context's harness session is dropped just before planning, so this
    // task's harness starts a new conversation (docs/process-transport.md).
    if (resumes === 0 && task.forgetSession) {
      const forgotten = await driver.forgetSession(task.contextId);
      trace.write("harness_session_forgotten", taskEvt, {
        task_id: task.id,
        context_id: task.contextId,
        harness_session_id: forgotten,
      });
    }

    // A request-input wait that times out ends the attempt: the harness is stopped through this
    // signal, and the attempt reports the timeout rather than a cancel.
    const local = new AbortController();
    const signal = AbortSignal.any([task.abort.signal, local.signal]);
    const sink = new TurnSink(registry, task);
    let inputTimedOut = false;
    let turn = c.turns; // the turn the harness is in (1-based; 0 before the first)
    let lastHookArtifacts: ArtifactFrame[] = [];
    let outcome: AttemptOutcome | null = null;
    let turnsUsed = 0;

    const dispatch = async (call: ToolCall): Promise<ToolResult> => {
      const out = await this.pipeline.run(run, call, Math.max(turn, 1), taskEvt, null);
      if (out.inputTimedOut) {
        inputTimedOut = true;
        local.abort();
      }
      return out.result;
    };

    const handle = async (p: HarnessPart): Promise<void> => {
      switch (p.type) {
        case "turn-start":
          turn = p.turn;
          registry.status(task, "TASK_STATE_WORKING", `inference turn ${p.turn}`);
          return;
        case "tool-result":
          sink.artifact({
            toolName: p.toolName,
            content: p.content,
            fenceSource: p.fenceSource,
            toolCallId: p.toolCallId || null,
            isError: p.isError,
            durationMs: p.durationMs,
            exitCode: null,
            truncated: false,
            attachments: [],
          });
          return;
        case "turn-end": {
          // The harness reports tokens only for the whole run (its `result`): per turn they are 0.
          trace.write("inference", taskEvt, {
            turn: p.turn - 1,
            task_id: task.id,
            input_tokens: 0,
            output_tokens: 0,
            decision: p.decision,
            stop_reason: p.decision === "tool_call" ? "tool_use" : "end_turn",
            tool_name: p.toolName,
            model: driver.model || driver.name,
          });
          const artifacts = await hooks.inference({
            turn: p.turn - 1,
            input_tokens: 0,
            output_tokens: 0,
            decision: p.decision,
            tool_name: p.toolName,
          });
          // Only the attempt's last turn forwards hook artifacts, and a tool-calling turn none.
          lastHookArtifacts = p.decision === "end_turn" ? artifacts : [];
          return;
        }
        case "usage":
          c.inputTokens += p.inputTokens;
          c.outputTokens += p.outputTokens;
          this.d.spend?.charge(p.inputTokens + p.outputTokens);
          return;
        case "trace":
          trace.write(p.eventType, taskEvt, { task_id: task.id, ...p.fields });
          // A server the harness could not connect: the task's sourceErrors (docs/mcp.md).
          if (p.eventType === "harness_source_error") {
            task.sourceErrors = [...(task.sourceErrors ?? []), p.fields];
          }
          return;
        case "result":
          outcome = p.outcome;
          turnsUsed = p.turns;
          return;
        default:
          sink.write(p);
      }
    };

    try {
      for await (
        const p of driver.attempt({
          task: {
            id: task.id,
            contextId: task.contextId,
            text: task.text,
            messageId: task.messageId,
          },
          prompt: last?.role === "user" ? last.content : task.text,
          // A reopened or continued attempt resumes its own session; a threaded context
          // continues the context's; otherwise the harness starts fresh.
          resume: resumes > 0 ? "task" : threaded ? "context" : "new",
          conversation: manifest.lifecycle.conversation,
          // The [Capsule] block, then the manifest's prompt, as the harness's own system prompt.
          system: withCapsuleBlock(manifest, "process", manifest.inference.systemPrompt),
          maxTurns: manifest.inference.maxTurns,
          turnsUsed: c.turns,
          tools: this.d.tools.specs(),
          dispatch,
        }, signal)
      ) {
        await handle(p);
      }
    } catch (e) {
      // The driver promises never to throw; if it does, the task still ends in one status.
      outcome = driverFailure(`the process driver failed: ${errorMessage(e)}`);
    }
    c.turns += turnsUsed;
    if (inputTimedOut && !task.abort.signal.aborted) {
      trace.write("task_failed", taskEvt, {
        task_id: task.id,
        cause: "input_timeout",
        reason: INPUT_TIMEOUT,
      });
      return failedEnd(INPUT_TIMEOUT);
    }
    const end = this.#outcomeEnd(
      run,
      outcome ?? driverFailure("the process driver ended the attempt without a result"),
    );
    if (end.kind === "completed") run.hookFrames.push(...lastHookArtifacts);
    return end;
  }

  /** The harness's outcome as the attempt's end; a harness failure is a runtime diagnostic. */
  #outcomeEnd(run: TaskRun, outcome: AttemptOutcome): AttemptEnd {
    switch (outcome.status) {
      case "completed":
        return {
          kind: "completed",
          reply: outcome.text,
          replyStreamed: outcome.lastSegmentStreamedText,
        };
      case "canceled":
        return { kind: "canceled", message: outcome.killed ? KILLED_ON_CANCEL : "task canceled" };
      case "failed": {
        if (outcome.code === "max_turns") {
          return {
            kind: "max_turns",
            message: outcome.message,
            result: `error: ${outcome.message}`,
          };
        }
        // The status carries the failure under its code.
        this.d.trace.write("task_failed", run.taskEvt, {
          task_id: run.task.id,
          cause: outcome.kind === "auth" ? "credential_rejected" : "driver_error",
          error_code: outcome.code,
          harness_failure: outcome.kind,
          origin: outcome.origin,
          reason: outcome.message.slice(0, 2000),
        });
        return failedEnd(`error[${outcome.code}]: ${outcome.message}`);
      }
    }
  }
}

function driverFailure(message: string): AttemptOutcome {
  return { status: "failed", code: "E-RUN-034", kind: "driver-error", origin: "runtime", message };
}
