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
import { artifactFrame, type AttachmentRef } from "../events/frames.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Tool, ToolContext, ToolResult } from "../tools/types.ts";
import { fence } from "../tools/fence.ts";
import { INPUT_TIMEOUT, InputTimeout } from "./request_input.ts";
import type { Hooks } from "./hooks_api.ts";
import type { Registry } from "./registry.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "./trace.ts";
import { type Workdir, writeResult } from "./workdir.ts";

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
  driver: Driver;
  tools: ToolDispatcher;
  /** Tools the session itself implements (request-input): called by the loop, not the toolbox. */
  sessionTools?: Map<string, Tool>;
  hooks: Hooks;
  workdir: Workdir;
  histories: Histories;
  /** A diagnostic line for stderr. */
  warn(line: string): void;
  clock?: () => number;
}

const PROGRESS_INTERVAL_MS = 250;
const enc = new TextEncoder();

interface AttemptEnd {
  kind: "completed" | "failed" | "max_turns" | "canceled";
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

    const threaded = manifest.lifecycle.conversation === "threaded";
    const history = threaded ? (this.d.histories.get(task.contextId) ?? []) : [];
    // Untrusted task payloads reach the model inside the untrusted fence (reference §7.3).
    const content = task.trusted ? task.text : fence(`task:${task.origin}`, task.text);
    const messages: ConversationMessage[] = [...history, { role: "user", content }];

    let reopenCount = 0;
    let end: AttemptEnd;
    let exitStatus: ExitStatus;
    for (;;) {
      end = await this.#attempt(task, messages, c, taskEvt);
      exitStatus = exitOf(end);
      if (task.abort.signal.aborted) {
        exitStatus = "canceled";
        end = { kind: "canceled" };
      }
      const decision = await this.d.hooks.taskEnd({
        task_id: task.id,
        exit_status: exitStatus,
      });
      if (!decision.reopen || exitStatus === "canceled") break;
      const { hook, feedback } = decision.reopen;
      const limit = manifest.lifecycle.maxTaskReopens;
      if (reopenCount >= limit || c.turns >= manifest.inference.maxTurns) {
        const which = reopenCount >= limit
          ? `task reopen budget exhausted: hook ${hook} still wanted a reopen after ${reopenCount} of ${limit} allowed by lifecycle.max_task_reopens`
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
    return { exitStatus, reopenCount, durationMs, ...c };
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
        registry.finish(task, "TASK_STATE_CANCELED", "task canceled");
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
  ): Promise<AttemptEnd> {
    const { manifest, registry, trace, driver } = this.d;
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
      const outTokens = usage?.output ?? Math.ceil((text.length + reasoning.length) / 4);
      c.inputTokens += inTokens;
      c.outputTokens += outTokens;
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
        if (cut) {
          this.d.warn(
            `warning[W-RUN-001]: this turn stopped at the inference.max_tokens output cap of ${manifest.inference.maxTokens} tokens, so out/result.txt holds a fragment rather than a finished answer`,
          );
        }
        return { kind: "completed", reply: text, maxTokensCut: cut };
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
    }
  }

  async #dispatch(
    task: TaskRecord,
    call: ToolCall,
    turn: number,
    c: TaskCounters,
    /** The turn's `inference` line: the parent of the call's trace lines. */
    turnEvt: string,
  ): Promise<ToolResultMessage & { inputTimedOut: boolean }> {
    const { registry, trace, workdir, hooks } = this.d;
    const isShell = this.d.manifest.capabilities.shell.allow.includes(call.name);
    const inputJson = JSON.stringify(call.input);
    const hookEv = {
      turn: turn - 1,
      tool_name: call.name,
      input: call.input,
      input_bytes: enc.encode(inputJson).length,
    };
    const verdict = await hooks.toolCall(hookEv, isShell);
    let result: ToolResult;
    let inputTimedOut = false;
    if (verdict.deny) {
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
      const ctx: ToolContext = {
        workdir: workdir.root,
        taskId: task.id,
        contextId: task.contextId,
        signal: task.abort.signal,
      };
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
    const attachments: AttachmentRef[] = [];
    for (const img of result.images) {
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
    if (!refusal || refusal.kind === "missing_fields") {
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
    await hooks.toolResult({ ...hookEv, status: result.isError ? "error" : "ok" }, isShell);
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
