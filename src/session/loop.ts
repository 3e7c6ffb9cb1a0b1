/**
 * The session loop's core for one task (seed 004): attempts of inference turns through the driver,
 * tool calls dispatched and fed back, on-task-end hooks that may reopen, and one final status.
 * Everything the task does becomes events through the registry and lines in trace.jsonl.
 */
import type {
  ConversationMessage,
  Driver,
  DriverErrorCause,
  ToolCall,
  ToolResultMessage,
  ToolSpec,
} from "../drivers/types.ts";
import { type ArtifactFrame, artifactFrame, type AttachmentRef } from "../events/frames.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Tool, ToolContext, ToolResult } from "../tools/types.ts";
import { fence } from "../tools/fence.ts";
import type { DetachedOutcome } from "../tools/types.ts";
import { INPUT_TIMEOUT, InputTimeout } from "./request_input.ts";
import type { Hooks } from "./hooks_api.ts";
import type { Registry } from "./registry.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "./trace.ts";
import { bootstrapLog, type Workdir, writeResult } from "./workdir.ts";
import { conversationTokens, fromReplacement, plainMessage, toHookMessage } from "./compaction.ts";
import { saveConversation } from "./conversation_record.ts";
import { runDoneCheck } from "./done_check.ts";
import { decideSeed, seedCeiling, seedTokens, withSummary } from "./seed.ts";
import type { SpendMeter } from "./spend.ts";
import { newId } from "../ids.ts";
import type { HarnessDriver } from "../drivers/process/types.ts";
import { isHarnessDriver, runHarnessAttempt } from "./harness_attempt.ts";

export type ExitStatus =
  | "ok"
  | "failed"
  | "max_turns_reached"
  | "spend_ceiling_reached"
  | "reopen_budget_exhausted"
  | "canceled";

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

export interface ToolDispatcher {
  specs(): ToolSpec[];
  /** Refusals that come before policy hooks: undeclared, missing fields, read_only. */
  precheck?(call: ToolCall, ctx: ToolContext): ToolResult | null;
  dispatch(call: ToolCall, ctx: ToolContext): Promise<ToolResult>;
}

/** Conversation histories by context, for `lifecycle.conversation: threaded`. */
export type Histories = Map<string, ConversationMessage[]>;

export interface LoopDeps {
  manifest: Manifest;
  registry: Registry;
  trace: TraceWriter;
  /** `event_id` of `session_start`: the parent of every task_start. */
  sessionEventId(): string;
  /** A per-turn driver, or a harness that runs whole attempts (`transport: process`). */
  driver: Driver | HarnessDriver;
  tools: ToolDispatcher;
  /** Tools the session itself implements (request-input): called by the loop, not the toolbox. */
  sessionTools?: Map<string, Tool>;
  hooks: Hooks;
  workdir: Workdir;
  histories: Histories;
  /** A diagnostic line for stderr. */
  warn(line: string): void;
  clock?: () => number;
  /** `inference.max_session_tokens`, shared by every task of the session. */
  spend?: SpendMeter;
  /** A shell command of this task moved to the background (the session delivers its end). */
  onDetached?(task: TaskRecord, shell: DetachedShell): void;
  /** `mur run --resume`: the context the launch task continues (its record is in histories). */
  resumedContext?: string;
}

export interface DetachedShell {
  workId: string;
  binary: string;
  command: string;
  graceMs: number;
  done: Promise<DetachedOutcome>;
}

const PROGRESS_INTERVAL_MS = 250;
const enc = new TextEncoder();

interface AttemptEnd {
  kind: "completed" | "failed" | "max_turns" | "canceled" | "spend";
  reply?: string;
  /** The last turn streamed no text (the whole reply goes out as one final text frame). */
  replyStreamed?: boolean;
  maxTokensCut?: boolean;
  message?: string;
  result?: string;
}

/** Counters of one task, across its attempts. */
class TaskCounters {
  turns = 0;
  inputTokens = 0;
  outputTokens = 0;
  toolCalls = 0;
  shellCalls = 0;
  /** keep_working messages sent (per task, across attempts). */
  nudges = 0;
  /** The last turn's `inference` line (parent of compaction lines). */
  lastTurnEvt = "";
}

export class TaskLoop {
  readonly #clock: () => number;

  constructor(private readonly d: LoopDeps) {
    this.#clock = d.clock ?? Date.now;
  }

  async run(task: TaskRecord): Promise<TaskOutcome> {
    const { manifest, registry, trace } = this.d;
    const started = this.#clock();
    const c = new TaskCounters();
    const taskEvt = trace.write("task_start", this.d.sessionEventId(), {
      task_id: task.id,
      context_id: task.contextId,
      source: task.source,
      origin: task.origin,
      trust: task.trusted ? "trusted" : "untrusted",
      lane: task.lane,
      message_parts_bytes: enc.encode(task.text).length,
    });
    c.lastTurnEvt = taskEvt;

    const threaded = manifest.lifecycle.conversation === "threaded";
    const resumed = task.contextId === this.d.resumedContext && task.source === "task_md";
    const history = threaded || resumed ? (this.d.histories.get(task.contextId) ?? []) : [];
    // Untrusted task payloads reach the model inside the untrusted fence (reference §7.3).
    const content = task.trusted ? task.text : fence(`task:${task.origin}`, task.text);
    const seed = await this.#seed(task, taskEvt, history);
    const messages: ConversationMessage[] = [...seed, ...history, { role: "user", content }];
    saveConversation(this.d.workdir.session, task.contextId, messages);

    let reopenCount = 0;
    let doneChecks = 0;
    let end: AttemptEnd;
    let exitStatus: ExitStatus;
    for (;;) {
      const frames: ArtifactFrame[] = [];
      end = isHarnessDriver(this.d.driver)
        ? await this.#harness(this.d.driver, task, messages, c, taskEvt, frames, reopenCount)
        : await this.#attempt(task, messages, c, taskEvt, frames);
      exitStatus = exitOf(end);
      if (task.abort.signal.aborted) {
        exitStatus = "canceled";
        // Keeps a harness attempt's own cancel message (the harness had to be killed).
        end = end.kind === "canceled" ? end : { kind: "canceled" };
      }
      if (end.kind !== "canceled") {
        // Hook artifacts of the attempt, then the whole reply when its last turn streamed none.
        for (const f of frames) registry.frame(task, f);
        if (end.kind === "completed" && !end.replyStreamed && end.reply) {
          registry.frame(task, { frame: "text", text: end.reply, final: true });
        }
      }
      const dc = manifest.lifecycle.doneCheck;
      if (dc && end.kind === "completed") {
        const check = await runDoneCheck(dc.command, this.d.workdir.root, task.abort.signal);
        trace.write("done_check", taskEvt, {
          task_id: task.id,
          command: dc.command,
          exit_code: check.exitCode,
          passed: check.passed,
          duration_ms: check.durationMs,
          output_bytes: check.outputBytes,
          ...(check.note ? { note: check.note } : {}),
        });
        if (task.abort.signal.aborted) {
          exitStatus = "canceled";
          end = { kind: "canceled" };
        } else if (!check.passed) {
          const how = check.note ?? `it exited with status ${check.exitCode}`;
          if (doneChecks < dc.limit && c.turns < manifest.inference.maxTurns) {
            doneChecks++;
            reopenCount++;
            trace.write("task_reopened", taskEvt, {
              task_id: task.id,
              hook_name: "done_check",
              reason: `done check \`${dc.command}\` failed: ${how}`,
              reopen_number: reopenCount,
              attempt_context: "continued",
              turns_remaining: manifest.inference.maxTurns - c.turns,
            });
            registry.status(
              task,
              "TASK_STATE_WORKING",
              `done check failed, reopened ${doneChecks} of ${dc.limit}`,
              { reopen: reopenCount },
            );
            messages.push({
              role: "user",
              content: `Reopen ${reopenCount} — the done check failed\n\n` +
                `The command \`${dc.command}\` must pass before this task is done, and ${how}. ` +
                `Its output:\n` + fence("tool:done_check", check.output),
            });
            continue;
          }
          const message =
            `done check failed: \`${dc.command}\` ${how}, after ${doneChecks} of ${dc.limit} reopen(s) allowed by lifecycle.done_check.limit`;
          trace.write("task_failed", taskEvt, {
            task_id: task.id,
            cause: "done_check",
            reason: message.slice(0, 2000),
          });
          end = { kind: "failed", message, result: `error: ${message}` };
          exitStatus = "failed";
        }
      }
      const decision = await this.d.hooks.taskEnd({
        task_id: task.id,
        context_id: task.contextId,
        exit_status: exitStatus,
        reopen_count: reopenCount,
        turns: c.turns,
        result: end.kind === "completed" ? (end.reply ?? "") : (end.message ?? ""),
      });
      // A canceled task and a spent session cannot run another attempt.
      if (!decision.reopen || exitStatus === "canceled" || end.kind === "spend") break;
      if (task.abort.signal.aborted) {
        exitStatus = "canceled";
        end = { kind: "canceled" };
        break;
      }
      const { hook, feedback } = decision.reopen;
      const limit = manifest.lifecycle.maxTaskReopens;
      const hookReopens = reopenCount - doneChecks;
      if (hookReopens >= limit || c.turns >= manifest.inference.maxTurns) {
        const which = hookReopens >= limit
          ? `task reopen budget exhausted: hook ${hook} still wanted a reopen after ${hookReopens} of ${limit} allowed by lifecycle.max_task_reopens`
          : `task turn budget exhausted: hook ${hook} still wanted a reopen, but the task has used all ${manifest.inference.maxTurns} turns of inference.max_turns`;
        trace.write("task_failed", taskEvt, {
          task_id: task.id,
          cause: "reopen_budget_exhausted",
          reason: which,
        });
        end = { kind: "failed", message: which, result: `error: ${which}` };
        exitStatus = "reopen_budget_exhausted";
        break;
      }
      reopenCount++;
      trace.write("task_reopened", taskEvt, {
        task_id: task.id,
        hook_name: hook,
        reason: feedback,
        reopen_number: reopenCount,
        attempt_context: "continued",
        turns_remaining: manifest.inference.maxTurns - c.turns,
      });
      registry.status(task, "TASK_STATE_WORKING", `reopened by hook ${hook}`, {
        reopen: reopenCount,
      });
      messages.push({
        role: "user",
        content: `Reopen ${reopenCount} — from hook ${hook}\n\n${feedback}`,
      });
    }

    saveConversation(this.d.workdir.session, task.contextId, messages);
    if (threaded && exitStatus === "ok") this.d.histories.set(task.contextId, messages);
    this.#finish(task, end, exitStatus, threaded);
    const durationMs = this.#clock() - started;
    trace.write("task_end", taskEvt, {
      task_id: task.id,
      exit_status: exitStatus,
      duration_ms: durationMs,
      turns: c.turns,
      input_tokens: c.inputTokens,
      output_tokens: c.outputTokens,
      tool_calls: c.toolCalls,
      shell_calls: c.shellCalls,
      reopen_count: reopenCount,
    });
    return {
      exitStatus,
      reopenCount,
      durationMs,
      turns: c.turns,
      inputTokens: c.inputTokens,
      outputTokens: c.outputTokens,
      toolCalls: c.toolCalls,
      shellCalls: c.shellCalls,
    };
  }

  /**
   * on-task-start hooks, and the seed the first seeding hook proposed, through the decision
   * table of seed 004 (seed.ts). Every outcome is a `context_seed` line and a bootstrap.log
   * line; nothing here fails the task.
   */
  async #seed(
    task: TaskRecord,
    taskEvt: string,
    history: ConversationMessage[],
  ): Promise<ConversationMessage[]> {
    const { manifest, trace, hooks } = this.d;
    const ctx = manifest.context;
    const budget = seedCeiling(ctx.maxTokens, ctx.seedBudget);
    const proposal = await hooks.taskStart({
      task_id: task.id,
      context_id: task.contextId,
      source: task.source,
      input_bytes: enc.encode(task.text).length,
      budget_tokens: manifest.inference.transport === "process" ? 0 : budget,
      context_window: ctx.maxTokens ?? 0,
      prior_tokens: history.length ? conversationTokens(undefined, history) : 0,
    });
    if (!proposal) return [];
    const proposed = seedTokens(proposal.messages);
    let d = decideSeed({
      transport: manifest.inference.transport,
      maxTokens: ctx.maxTokens,
      seedBudget: ctx.seedBudget,
      overflowMargin: ctx.seedOverflowMargin,
      hasCompaction: hooks.hasCompaction,
      messages: proposal.messages,
    });
    let outcome: "seeded" | "trimmed" | "compacted" | "rejected" = "rejected";
    let keep: typeof proposal.messages = [];
    if (d.outcome === "summarize") {
      // The overflowing front goes to the on-compaction hook; a failure here is no task failure.
      const answer = await hooks.compaction({
        task_id: task.id,
        purpose: "seed",
        messages: d.front,
        session_tokens: seedTokens(d.front),
        threshold: ctx.compactionThreshold,
        context_window: ctx.maxTokens ?? 0,
      });
      const summary = "replaced" in answer && answer.replaced.length
        ? withSummary(
          { role: "user", content: answer.replaced.map((m) => m.content).join("\n\n") },
          d.rest,
          budget,
        )
        : null;
      if (summary) {
        outcome = "compacted";
        keep = summary;
      } else {
        // No hook answered (or its summary alone overflows): drop the oldest instead.
        d = { outcome: "trimmed", keep: d.rest };
      }
    }
    if (d.outcome === "seeded" || d.outcome === "trimmed") {
      outcome = d.outcome;
      keep = d.keep;
    }
    const ids = keep.map(() => newId("msg"));
    const tokens = seedTokens(keep);
    trace.write("context_seed", taskEvt, {
      task_id: task.id,
      hook_name: proposal.hook,
      tokens,
      proposed_tokens: proposed,
      budget_tokens: budget,
      outcome,
      ...(d.outcome === "rejected" ? { reason: d.reason } : {}),
      message_ids: ids,
    });
    if (d.outcome === "rejected") {
      trace.write("hook_dispatch_error", this.d.sessionEventId(), {
        hook_name: proposal.hook,
        event: "on-task-start",
        arm: "seed-rejected",
      });
    }
    bootstrapLog(
      this.d.workdir,
      `context_seed task=${task.id} hook=${proposal.hook} outcome=${outcome}${
        d.outcome === "rejected" ? ` reason=${d.reason}` : ""
      } tokens=${tokens} proposed=${proposed} budget=${budget} messages=${keep.length}/${proposal.messages.length}`,
    );
    return keep.map(plainMessage);
  }

  /** `transport: process`: the harness runs the whole attempt (harness_attempt.ts). */
  async #harness(
    driver: HarnessDriver,
    task: TaskRecord,
    messages: ConversationMessage[],
    c: TaskCounters,
    taskEvt: string,
    hookFrames: ArtifactFrame[],
    reopenCount: number,
  ): Promise<AttemptEnd> {
    // The harness keeps the conversation: it gets only the newest user message (the task, or
    // the reopen feedback).
    const last = messages[messages.length - 1];
    const end = await this.#harnessRun(driver, task, c, taskEvt, hookFrames, reopenCount, last);
    // lifecycle.keep_working: the harness ended its run early; resume its session with the
    // message, as the http loop sends it after a turn that ends without tool calls.
    const kw = this.d.manifest.lifecycle.keepWorking;
    if (
      kw && end.kind === "completed" &&
      !(kw.until !== undefined && (end.reply ?? "").includes(kw.until)) &&
      c.nudges < kw.limit && c.turns < this.d.manifest.inference.maxTurns &&
      !task.abort.signal.aborted
    ) {
      c.nudges++;
      this.d.trace.write("keep_working", taskEvt, {
        task_id: task.id,
        turn: c.turns - 1,
        nudge_number: c.nudges,
        limit: kw.limit,
      });
      this.d.registry.status(task, "TASK_STATE_WORKING", `keep working ${c.nudges} of ${kw.limit}`);
      messages.push({ role: "user", content: kw.message });
      hookFrames.length = 0;
      // A continued attempt resumes the task's own harness session, as a reopened one does.
      return await this.#harness(driver, task, messages, c, taskEvt, hookFrames, reopenCount + 1);
    }
    return end;
  }

  #harnessRun(
    driver: HarnessDriver,
    task: TaskRecord,
    c: TaskCounters,
    taskEvt: string,
    hookFrames: ArtifactFrame[],
    reopenCount: number,
    last: ConversationMessage | undefined,
  ): Promise<AttemptEnd> {
    return runHarnessAttempt({
      manifest: this.d.manifest,
      registry: this.d.registry,
      trace: this.d.trace,
      hooks: this.d.hooks,
      driver,
      tools: this.d.tools.specs(),
      spend: this.d.spend,
      dispatch: async (call, turn) => {
        let result: ToolResult | undefined;
        const { inputTimedOut } = await this.#dispatch(task, call, turn, c, taskEvt, (r) => {
          result = r;
        });
        return { result: result!, inputTimedOut };
      },
    }, {
      task,
      prompt: last?.role === "user" ? last.content : task.text,
      reopenCount,
      counters: c,
      taskEvt,
      hookFrames,
    });
  }

  /** Writes result.txt and the one final status. */
  #finish(task: TaskRecord, end: AttemptEnd, exitStatus: ExitStatus, threaded: boolean): void {
    const { registry, workdir } = this.d;
    const taskFile = threaded ? task.id : undefined;
    switch (end.kind) {
      case "completed": {
        const reply = end.reply ?? "";
        let result = reply;
        if (end.maxTokensCut) {
          result +=
            `\n\n[this answer stopped at the inference.max_tokens output cap of ${this.d.manifest.inference.maxTokens} tokens]\n`;
        }
        writeResult(workdir, result, taskFile);
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

  async #attempt(
    task: TaskRecord,
    messages: ConversationMessage[],
    c: TaskCounters,
    taskEvt: string,
    /** Artifacts on-inference hooks returned, written when the attempt completes. */
    hookFrames: ArtifactFrame[],
  ): Promise<AttemptEnd> {
    const { manifest, registry, trace } = this.d;
    const driver = this.d.driver as Driver;
    const maxTurns = manifest.inference.maxTurns;
    const signal = task.abort.signal;
    for (;;) {
      if (signal.aborted) return { kind: "canceled" };
      if (c.turns >= maxTurns) {
        const message =
          `max_turns exceeded: the task used all ${maxTurns} turns of inference.max_turns without finishing`;
        return {
          kind: "max_turns",
          message,
          result: `error: inference loop exceeded ${maxTurns} turns`,
        };
      }
      const compacted = await this.#compact(task, messages, c);
      if (compacted) return compacted;
      if (signal.aborted) return { kind: "canceled" };
      const spent = this.#admit(task, messages, c);
      if (spent) return spent;
      c.turns++;
      const turn = c.turns;
      registry.status(task, "TASK_STATE_WORKING", `inference turn ${turn}`);

      let text = "";
      let reasoning = "";
      const calls: ToolCall[] = [];
      const progress = new Map<string, { bytes: number; sent: number; at: number }>();
      let usage: { input: number; output: number } | null = null;
      let stopReason = "";
      let cut = false;
      let error: { cause: DriverErrorCause; message: string } | null = null;

      try {
        for await (
          const part of driver.turn({
            system: manifest.inference.systemPrompt,
            messages,
            tools: this.d.tools.specs(),
            maxTokens: manifest.inference.maxTokens,
            task: {
              id: task.id,
              contextId: task.contextId,
              text: task.text,
              messageId: task.messageId,
            },
            turn,
          }, signal)
        ) {
          if (signal.aborted) break;
          switch (part.type) {
            case "text-delta":
              if (part.text === "") break;
              text += part.text;
              registry.frame(task, { frame: "text", text: part.text, final: false });
              break;
            case "reasoning-delta":
              reasoning += part.text;
              registry.frame(task, { frame: "thinking", text: part.text, final: false });
              break;
            case "tool-input-start":
              progress.set(part.id, { bytes: 0, sent: 0, at: 0 });
              registry.frame(task, {
                frame: "tool-call-started",
                toolCallId: part.id,
                toolName: part.toolName,
              });
              break;
            case "tool-input-delta": {
              const p = progress.get(part.id);
              if (!p) break;
              p.bytes += enc.encode(part.delta).length;
              const now = this.#clock();
              if (now - p.at >= PROGRESS_INTERVAL_MS && p.bytes > p.sent) {
                p.at = now;
                p.sent = p.bytes;
                registry.frame(task, {
                  frame: "tool-call-progress",
                  toolCallId: part.id,
                  inputBytes: p.bytes,
                });
              }
              break;
            }
            case "tool-call": {
              const p = progress.get(part.call.id);
              if (p && p.bytes > p.sent) {
                p.sent = p.bytes;
                registry.frame(task, {
                  frame: "tool-call-progress",
                  toolCallId: part.call.id,
                  inputBytes: p.bytes,
                });
              }
              calls.push(part.call);
              break;
            }
            case "usage":
              usage = { input: part.inputTokens, output: part.outputTokens };
              break;
            case "retry":
              trace.write("harness_retry", taskEvt, {
                task_id: task.id,
                attempt: part.attempt,
                reason: part.reason,
              });
              break;
            case "finish":
              stopReason = part.stopReason;
              cut = part.maxTokensCut;
              break;
            case "error":
              error = { cause: part.cause, message: part.message };
              break;
          }
        }
      } catch (e) {
        if (!signal.aborted) {
          error = { cause: "driver_error", message: e instanceof Error ? e.message : String(e) };
        }
      }
      if (signal.aborted) {
        trace.write("inference", taskEvt, {
          turn: turn - 1,
          task_id: task.id,
          decision: "error",
          stop_reason: "canceled",
          model: driver.model,
        });
        return { kind: "canceled" };
      }
      if (text !== "") registry.frame(task, { frame: "text", text: "", final: true });

      const inTokens = usage?.input ?? estimateTokens(messages);
      // A failed call is charged its input only (runtime-facts §1.8).
      const outTokens = error
        ? 0
        : usage?.output ?? Math.ceil((text.length + reasoning.length) / 4);
      c.inputTokens += inTokens;
      c.outputTokens += outTokens;
      this.d.spend?.charge(inTokens + outTokens);
      const decision = error ? "error" : calls.length ? "tool_call" : "end_turn";
      const turnEvt = trace.write("inference", taskEvt, {
        turn: turn - 1,
        task_id: task.id,
        input_tokens: inTokens,
        output_tokens: outTokens,
        decision,
        stop_reason: error ? "error" : stopReason,
        tool_name: calls[0]?.name ?? null,
        model: driver.model,
        ...(error ? { error_code: error.cause, error: error.message.slice(0, 2000) } : {}),
      });
      c.lastTurnEvt = turnEvt;
      hookFrames.push(
        ...await this.d.hooks.inference({
          task_id: task.id,
          turn: turn - 1,
          input_tokens: inTokens,
          output_tokens: outTokens,
          decision,
          tool_name: calls[0]?.name ?? null,
          output: text,
        }),
      );
      if (error) {
        trace.write("task_failed", taskEvt, {
          task_id: task.id,
          turn: turn - 1,
          cause: error.cause,
          reason: error.message.slice(0, 2000),
        });
        const message = `task failed (${error.cause}): ${error.message}`;
        return { kind: "failed", message, result: `error: ${message}` };
      }

      messages.push({
        role: "assistant",
        text,
        ...(reasoning ? { reasoning } : {}),
        toolCalls: calls,
      });

      if (calls.length === 0) {
        const kw = manifest.lifecycle.keepWorking;
        const done = kw?.until !== undefined && text.includes(kw.until);
        if (kw && !done && c.nudges < kw.limit && c.turns < maxTurns && !signal.aborted) {
          // lifecycle.keep_working: the model stopped; send the message and take another turn.
          c.nudges++;
          trace.write("keep_working", turnEvt, {
            task_id: task.id,
            turn: turn - 1,
            nudge_number: c.nudges,
            limit: kw.limit,
          });
          registry.status(task, "TASK_STATE_WORKING", `keep working ${c.nudges} of ${kw.limit}`);
          messages.push({ role: "user", content: kw.message });
          saveConversation(this.d.workdir.session, task.contextId, messages);
          continue;
        }
        if (cut) {
          this.d.warn(
            `warning[W-RUN-001]: this turn stopped at the inference.max_tokens output cap of ${manifest.inference.maxTokens} tokens, so out/result.txt holds a fragment rather than a finished answer`,
          );
        }
        return { kind: "completed", reply: text, replyStreamed: text !== "", maxTokensCut: cut };
      }

      const results: ToolResultMessage[] = [];
      for (const call of calls) {
        if (signal.aborted) return { kind: "canceled" };
        const { inputTimedOut, ...res } = await this.#dispatch(task, call, turn, c, turnEvt);
        results.push(res);
        if (inputTimedOut) {
          trace.write("task_failed", taskEvt, {
            task_id: task.id,
            turn: turn - 1,
            cause: "input_timeout",
            reason: INPUT_TIMEOUT,
          });
          messages.push({ role: "tool", results });
          return { kind: "failed", message: INPUT_TIMEOUT, result: `error: ${INPUT_TIMEOUT}` };
        }
      }
      if (signal.aborted) return { kind: "canceled" };
      messages.push({ role: "tool", results });
      saveConversation(this.d.workdir.session, task.contextId, messages);
    }
  }

  /**
   * Compaction before a turn: when the conversation has crossed `context.compaction_threshold`
   * of `context.max_tokens`, on-compaction hooks are asked for a replacement history. Returns
   * the attempt's end only when a replace-context hook failed (that fails the task).
   */
  async #compact(
    task: TaskRecord,
    messages: ConversationMessage[],
    c: TaskCounters,
  ): Promise<AttemptEnd | null> {
    const { manifest, trace } = this.d;
    const max = manifest.context.maxTokens;
    if (max === undefined || manifest.inference.transport === "process") return null;
    const before = conversationTokens(manifest.inference.systemPrompt, messages);
    const threshold = manifest.context.compactionThreshold;
    if (before < threshold * max) return null;
    const answer = await this.d.hooks.compaction({
      task_id: task.id,
      purpose: "conversation",
      messages: messages.map(toHookMessage),
      session_tokens: before,
      threshold,
      context_window: max,
      model: this.d.driver.model,
      ...(manifest.inference.systemPrompt
        ? { system_prompt: manifest.inference.systemPrompt }
        : {}),
    });
    const turn = c.turns;
    if ("failed" in answer) {
      const reason = `on-compaction hook ${answer.hook} failed: ${answer.failed}`;
      trace.write("task_failed", c.lastTurnEvt, {
        task_id: task.id,
        turn,
        cause: "compaction_hook",
        reason: reason.slice(0, 2000),
      });
      const message = `task failed (compaction_hook): ${reason}`;
      return { kind: "failed", message, result: `error: ${message}` };
    }
    const replaced = "replaced" in answer && answer.replaced.length
      ? fromReplacement(answer.replaced, messages)
      : "no_hook_replacement";
    if (typeof replaced === "string") {
      trace.write("compaction_declined", c.lastTurnEvt, {
        turn,
        task_id: task.id,
        tokens: before,
        reason: replaced,
      });
      return null;
    }
    messages.splice(0, messages.length, ...replaced);
    saveConversation(this.d.workdir.session, task.contextId, messages);
    trace.write("compaction", c.lastTurnEvt, {
      turn,
      task_id: task.id,
      tokens_before: before,
      tokens_after: conversationTokens(manifest.inference.systemPrompt, messages),
    });
    return null;
  }

  /** The spend ceiling's admission before a call; the attempt's end when it refuses. */
  #admit(task: TaskRecord, messages: ConversationMessage[], c: TaskCounters): AttemptEnd | null {
    const spend = this.d.spend;
    if (!spend) return null;
    const { manifest } = this.d;
    const requested = conversationTokens(manifest.inference.systemPrompt, messages) +
      manifest.inference.maxTokens;
    const refusal = spend.admit(requested);
    if (!refusal) return null;
    this.d.trace.write("spend_ceiling_reached", c.lastTurnEvt, {
      turn: c.turns,
      task_id: task.id,
      limit: "session",
      ceiling: refusal.ceiling,
      used: refusal.used,
      requested: refusal.requested,
      origin: "agent",
    });
    return { kind: "spend", message: refusal.text, result: refusal.text };
  }

  async #dispatch(
    task: TaskRecord,
    call: ToolCall,
    turn: number,
    c: TaskCounters,
    /** The turn's `inference` line: the parent of the call's trace lines. */
    turnEvt: string,
    /**
     * A harness's bridge call (`transport: process`): the result goes back to the harness, whose
     * report of it writes the artifact frame, so no frame here and no attachment stored.
     */
    bridged?: (result: ToolResult) => void,
  ): Promise<ToolResultMessage & { inputTimedOut: boolean }> {
    const { registry, trace, workdir, hooks } = this.d;
    const isShell = this.d.manifest.capabilities.shell.allow.includes(call.name);
    const inputJson = JSON.stringify(call.input);
    const hookEv = {
      task_id: task.id,
      turn: turn - 1,
      tool_name: call.name,
      input: call.input,
      input_bytes: enc.encode(inputJson).length,
      ...(isShell
        ? {
          binary: call.name,
          command: typeof call.input.command === "string" ? call.input.command : "",
        }
        : {}),
    };
    const ctx: ToolContext = {
      workdir: workdir.root,
      taskId: task.id,
      contextId: task.contextId,
      signal: task.abort.signal,
    };
    // Reference §7.1: required fields, then read_only, then the policy hook.
    const pre = this.d.sessionTools?.has(call.name) ? null : this.d.tools.precheck?.(call, ctx);
    if (pre?.refusal?.kind === "missing_fields") {
      trace.write("tool_input_refused", turnEvt, {
        turn: turn - 1,
        tool_name: call.name,
        tool_call_id: call.id,
        missing: pre.refusal.missing,
        reason: pre.refusal.reason,
      });
    } else if (pre?.refusal?.kind === "read_only") {
      const r = pre.refusal;
      trace.write("protected_path_denied", turnEvt, {
        turn: turn - 1,
        call: r.call,
        target: r.target,
        path: r.path,
        rule: r.rule,
        signal: r.signal,
        reason: r.reason,
      });
    }
    const verdict = pre ? {} : await hooks.toolCall(hookEv, isShell);
    let result: ToolResult;
    let inputTimedOut = false;
    if (pre) {
      result = pre;
    } else if (verdict.deny) {
      const content =
        `tool call refused by hook ${verdict.deny.hook}: ${verdict.deny.reason}; an identical call will be refused again`;
      trace.write("call_denied", turnEvt, {
        turn: turn - 1,
        event: isShell ? "on-shell" : "on-tool-call",
        hook_name: verdict.deny.hook,
        target: call.name,
        reason: verdict.deny.reason,
      });
      result = {
        content,
        fenceSource: null,
        isError: true,
        exitCode: null,
        truncated: false,
        durationMs: 0,
        images: [],
        refusal: { kind: "hook" },
      } as ToolResult;
    } else {
      const own = this.d.sessionTools?.get(call.name);
      if (own) {
        const started = this.#clock();
        try {
          result = await own.call(call.input, ctx);
        } catch (e) {
          if (!(e instanceof InputTimeout)) throw e;
          result = {
            content:
              `${INPUT_TIMEOUT}: no reply arrived within lifecycle.input_timeout_secs (${this.d.manifest.lifecycle.inputTimeoutSecs} s)`,
            fenceSource: null,
            isError: true,
            exitCode: null,
            truncated: false,
            durationMs: this.#clock() - started,
            images: [],
          };
          inputTimedOut = true;
        }
      } else {
        result = await this.d.tools.dispatch(call, ctx);
      }
    }
    c.toolCalls++;
    bridged?.(result);
    const attachments: AttachmentRef[] = [];
    for (const img of bridged ? [] : result.images) {
      const sha = await sha256Hex(img.data);
      task.attachments.set(sha, img);
      attachments.push({
        mediaType: img.mediaType,
        sizeBytes: img.data.length,
        sha256: sha,
        url: `/attachments/${task.id}/${sha}`,
      });
    }
    const refusal = (result as { refusal?: { kind: string } }).refusal;
    // Policy refusals (hook, read_only) write no frame on an http capsule (seed 000 "artifact").
    if (!bridged && (!refusal || refusal.kind === "missing_fields")) {
      registry.frame(
        task,
        artifactFrame({
          toolName: call.name,
          content: result.content,
          fenceSource: result.fenceSource,
          toolCallId: call.id || null,
          isError: result.isError,
          durationMs: result.durationMs,
          exitCode: result.exitCode,
          truncated: result.truncated,
          attachments,
        }),
      );
    }
    const callEvt = trace.write("tool_call", turnEvt, {
      turn: turn - 1,
      task_id: task.id,
      tool_name: call.name,
      tool_call_id: call.id,
      input: call.input,
      input_bytes: enc.encode(inputJson).length,
      output_bytes: enc.encode(result.content).length,
      duration_ms: result.durationMs,
      status: result.isError ? "error" : "ok",
    });
    if (result.shell) {
      c.shellCalls++;
      const s = result.shell;
      if (s.detached) {
        trace.write("shell_detached", callEvt, {
          turn: turn - 1,
          task_id: task.id,
          work_id: s.detached.workId,
          binary: s.binary,
          command: s.command,
          grace_ms: s.detached.graceMs,
        });
        this.d.onDetached?.(task, {
          workId: s.detached.workId,
          binary: s.binary,
          command: s.command,
          graceMs: s.detached.graceMs,
          done: s.detached.done,
        });
      } else {
        trace.write("shell", callEvt, {
          turn: turn - 1,
          task_id: task.id,
          binary: s.binary,
          command: s.command,
          exit_code: s.exitCode,
          stdout_bytes: s.stdoutBytes,
          stderr_bytes: s.stderrBytes,
          duration_ms: result.durationMs,
        });
      }
    }
    const sh = result.shell;
    await hooks.toolResult({
      ...hookEv,
      output_bytes: enc.encode(result.content).length,
      duration_ms: result.durationMs,
      status: result.isError ? "error" : "ok",
      ...(sh
        ? {
          binary: sh.binary,
          command: sh.command,
          exit_code: sh.exitCode,
          stdout_bytes: sh.stdoutBytes,
          stderr_bytes: sh.stderrBytes,
          output: result.content,
          ...(sh.detached ? { work_id: sh.detached.workId } : {}),
        }
        : {}),
    }, isShell);
    return {
      toolCallId: call.id,
      toolName: call.name,
      content: result.content,
      isError: result.isError,
      inputTimedOut,
    };
  }
}

function exitOf(end: AttemptEnd): ExitStatus {
  switch (end.kind) {
    case "completed":
      return "ok";
    case "max_turns":
      return "max_turns_reached";
    case "canceled":
      return "canceled";
    case "spend":
      return "spend_ceiling_reached";
    default:
      return "failed";
  }
}

/** A rough count (4 characters a token) for drivers that report no usage. */
export function estimateTokens(messages: ConversationMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    if (m.role === "user") chars += m.content.length;
    else if (m.role === "assistant") chars += m.text.length + JSON.stringify(m.toolCalls).length;
    else for (const r of m.results) chars += r.content.length;
  }
  return Math.ceil(chars / 4);
}

async function sha256Hex(data: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
  let hex = "";
  for (const b of d) hex += b.toString(16).padStart(2, "0");
  return hex;
}
