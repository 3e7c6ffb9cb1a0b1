/**
 * One tool call, from the model's request to the result it gets back, as named stages in the
 * order docs/tools.md describes:
 *
 *   refuse (required fields → read_only) → policy hook → approval → dispatch → artifact → record
 *   → observe
 *
 * `refuse`, `policy` and `approval` (approval_wait.ts) may answer in place of the tool; `artifact`
 * writes the frame (an http capsule only: a harness reports the result itself, and that report
 * is the frame); `record`
 * writes the `tool_call` / `shell` lines and hands a detached shell to the session; `observe`
 * runs the observer hooks. The same pipeline serves an http turn and a harness's bridge call.
 */
import { keepCallInput } from "./call_inputs.ts";
import { dataArtifact } from "./published_files.ts";
import type { ToolCall, ToolResultMessage } from "../drivers/types.ts";
import type { ToolCallEvent } from "./hooks_api.ts";
import type { AttachmentRef } from "../events/frames.ts";
import { notReached, type ToolProgress, type ToolResult } from "../tools/types.ts";
import { ProgressRelay } from "./tool_progress.ts";
import { INPUT_TIMEOUT, InputTimeout } from "./request_input.ts";
import { approvalStage } from "./approval_wait.ts";
import { type LoopDeps, type TaskRun, toolContext } from "./task_run.ts";
import type { TurnSink } from "./turn_sink.ts";

const enc = new TextEncoder();

export interface CallOutcome {
  /** What the model gets back. */
  message: ToolResultMessage;
  result: ToolResult;
  /** A request-input wait timed out: the attempt ends `input-timeout`. */
  inputTimedOut: boolean;
}

/** One call in flight: what every stage reads. */
interface Call {
  run: TaskRun;
  call: ToolCall;
  /** 0-based, as trace lines and hook events number turns. */
  turn: number;
  /** The turn's `inference` line (http) or `task_start` (harness): the parent of the lines. */
  parent: string;
  isShell: boolean;
  /** The on-tool-call / on-shell event, before the call ran. */
  hookEvent: ToolCallEvent;
  /** Where frames go (null for a harness's bridge call). */
  sink: TurnSink | null;
}

/** What an attempt needs of the pipeline (a test stands in for it with a fixed answer). */
export interface CallRunner {
  run(
    run: TaskRun,
    call: ToolCall,
    turn: number,
    parent: string,
    sink: TurnSink | null,
  ): Promise<CallOutcome>;
}

export class ToolPipeline implements CallRunner {
  constructor(private readonly d: LoopDeps) {}

  /**
   * Runs `call` of 1-based turn `turn`. `sink` writes the artifact frame; without one (a
   * harness's bridge call) no frame is written and no attachment stored, since the harness's
   * report of the result is the frame.
   */
  async run(
    run: TaskRun,
    call: ToolCall,
    turn: number,
    parent: string,
    sink: TurnSink | null,
  ): Promise<CallOutcome> {
    const isShell = this.d.manifest.capabilities.shell.allow.includes(call.name);
    const c: Call = {
      run,
      call,
      turn: turn - 1,
      parent,
      isShell,
      sink,
      hookEvent: {
        task_id: run.task.id,
        turn: turn - 1,
        tool_name: call.name,
        input: call.input,
        input_bytes: enc.encode(JSON.stringify(call.input)).length,
        ...(isShell
          ? {
            binary: call.name,
            command: typeof call.input.command === "string" ? call.input.command : "",
          }
          : {}),
      },
    };
    let inputTimedOut = false;
    let result = this.#refuse(c) ?? await this.#policy(c) ??
      await approvalStage(this.d, run, { call, turn: c.turn, parent, isShell });
    if (!result) ({ result, inputTimedOut } = await this.#dispatch(c));
    // A skill call is a skill_call line, not counted among the tool calls (docs/manifest.md "artifacts").
    if (!result.skill) run.counters.toolCalls++;
    if (sink) await this.#artifact(c, result, sink);
    this.#record(c, result);
    await this.#observe(c, result);
    return {
      message: {
        toolCallId: call.id,
        toolName: call.name,
        content: result.content,
        isError: result.isError,
      },
      result,
      inputTimedOut,
    };
  }

  /** Required fields, then read_only (the toolbox's precheck); session tools skip both. */
  #refuse(c: Call): ToolResult | null {
    const { trace, tools, sessionTools } = this.d;
    if (sessionTools?.has(c.call.name)) return null;
    const pre = tools.precheck?.(c.call, toolContext(this.d, c.run)) ?? null;
    const r = pre?.refusal;
    if (r?.kind === "missing_fields") {
      trace.write("tool_input_refused", c.parent, {
        turn: c.turn,
        tool_name: c.call.name,
        tool_call_id: c.call.id,
        missing: r.missing,
        reason: r.reason,
      });
    } else if (r?.kind === "read_only") {
      trace.write("protected_path_denied", c.parent, {
        turn: c.turn,
        call: r.call,
        target: r.target,
        path: r.path,
        rule: r.rule,
        signal: r.signal,
        reason: r.reason,
      });
    }
    return pre;
  }

  /** The policy hooks (on-tool-call, or on-shell for a shell tool): a deny answers the call. */
  async #policy(c: Call): Promise<ToolResult | null> {
    const verdict = await this.d.hooks.toolCall(c.hookEvent, c.isShell);
    if (!verdict.deny) return null;
    const { hook, reason } = verdict.deny;
    this.d.trace.write("call_denied", c.parent, {
      turn: c.turn,
      event: c.isShell ? "on-shell" : "on-tool-call",
      hook_name: hook,
      target: c.call.name,
      reason,
    });
    return {
      ...notReached(
        `tool call refused by hook ${hook}: ${reason}; an identical call will be refused again`,
        0,
      ),
      refusal: { kind: "hook" },
    };
  }

  /** The session's own tool (request-input), else the toolbox. */
  async #dispatch(c: Call): Promise<{ result: ToolResult; inputTimedOut: boolean }> {
    const own = this.d.sessionTools?.get(c.call.name);
    if (!own) {
      const relay = this.#progressRelay(c);
      const ctx = { ...toolContext(this.d, c.run), progress: (p: ToolProgress) => relay.report(p) };
      const result = await this.d.tools.dispatch(c.call, ctx);
      relay.finish();
      return { result, inputTimedOut: false };
    }
    const ctx = toolContext(this.d, c.run);
    const started = this.d.clock();
    try {
      return { result: await own.call(c.call.input, ctx), inputTimedOut: false };
    } catch (e) {
      if (!(e instanceof InputTimeout)) throw e;
      const secs = this.d.manifest.lifecycle.inputTimeoutSecs;
      return {
        result: notReached(
          `${INPUT_TIMEOUT}: no reply arrived within lifecycle.input_timeout_secs (${secs} s)`,
          this.d.clock() - started,
        ),
        inputTimedOut: true,
      };
    }
  }

  /** A tool's own progress: a `tool-progress` frame and a `tool_progress` line, rate-limited. */
  #progressRelay(c: Call): ProgressRelay {
    const server = this.d.tools.sourceOf?.(c.call.name) ?? "";
    return new ProgressRelay((p) => {
      c.sink?.toolProgress({ toolCallId: c.call.id, toolName: c.call.name, ...p });
      this.d.trace.write("tool_progress", c.parent, {
        turn: c.turn,
        task_id: c.run.task.id,
        tool_name: c.call.name,
        tool_call_id: c.call.id,
        server,
        ...p,
      });
    }, this.d.clock);
  }

  /**
   * The `artifact` frame, with the call's images stored for GET /attachments/…. Policy refusals
   * (hook, read_only) write none (docs/tools.md).
   */
  async #artifact(c: Call, result: ToolResult, sink: TurnSink): Promise<void> {
    const { task } = c.run;
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
    const refusal = result.refusal;
    if (refusal && refusal.kind !== "missing_fields") return;
    if (result.data) {
      // A tool declared `output: data`: its JSON is also the task's artifact, as a data part.
      this.d.registry.publish(
        task,
        dataArtifact(task.published.length, c.call.name, result.data.value),
      );
    }
    keepCallInput(task, c.call.id, c.call.input);
    sink.artifact({
      toolName: c.call.name,
      content: result.content,
      fenceSource: result.fenceSource,
      toolCallId: c.call.id || null,
      isError: result.isError,
      durationMs: result.durationMs,
      exitCode: result.exitCode,
      truncated: result.truncated,
      attachments,
    });
  }

  /**
   * The `tool_call` line (a `skill_call` for a skill), and the `shell` or `shell_detached` line
   * of a shell tool.
   */
  #record(c: Call, result: ToolResult): void {
    const { trace } = this.d;
    const { task, counters } = c.run;
    if (result.skill) {
      trace.write("skill_call", c.parent, {
        turn: c.turn,
        task_id: task.id,
        skill_name: c.call.name,
        output_bytes: enc.encode(result.content).length,
        duration_ms: result.durationMs,
        status: result.isError ? "error" : "ok",
        origin: result.skill.origin,
        trust: result.skill.trust,
      });
      return;
    }
    const callEvt = trace.write("tool_call", c.parent, {
      turn: c.turn,
      task_id: task.id,
      tool_name: c.call.name,
      tool_call_id: c.call.id,
      input: c.call.input,
      input_bytes: c.hookEvent.input_bytes,
      output_bytes: enc.encode(result.content).length,
      duration_ms: result.durationMs,
      status: result.isError ? "error" : "ok",
      ...(result.truncated && { truncated: true as const }),
      ...(result.mcpServer !== undefined && { server: result.mcpServer }),
    });
    const s = result.shell;
    if (!s) return;
    counters.shellCalls++;
    if (s.detached) {
      trace.write("shell_detached", callEvt, {
        turn: c.turn,
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
      return;
    }
    trace.write("shell", callEvt, {
      turn: c.turn,
      task_id: task.id,
      binary: s.binary,
      command: s.command,
      exit_code: s.exitCode,
      stdout_bytes: s.stdoutBytes,
      stderr_bytes: s.stderrBytes,
      duration_ms: result.durationMs,
    });
  }

  /** The observer hooks of on-tool-call / on-shell, after the call. */
  async #observe(c: Call, result: ToolResult): Promise<void> {
    const sh = result.shell;
    await this.d.hooks.toolResult({
      ...c.hookEvent,
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
    }, c.isShell);
  }
}

async function sha256Hex(data: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
  let hex = "";
  for (const b of d) hex += b.toString(16).padStart(2, "0");
  return hex;
}
