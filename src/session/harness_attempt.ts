/**
 * One attempt of a task whose driver is a harness (`inference.transport: process`). The harness
 * runs the whole attempt itself — many turns in one process — so instead of calling
 * `Driver.turn()` per turn the loop hands the attempt to `runHarnessAttempt`, which turns the
 * driver's `HarnessPart`s into exactly the events and trace lines seed 000 "Transports" lists:
 *
 * - `turn-start` → WORKING `inference turn <n>`; text / reasoning / tool-input parts → the
 *   `text`, `thinking`, `tool-call-started`, `tool-call-progress` frames;
 * - `tool-result` → the `artifact` frame from the harness's report (a process capsule's frame:
 *   `exitCode` null, `truncated` false, `attachments` []). The bridge's own dispatch writes no
 *   frame, so a policy refusal shows exactly once, as the harness's failed tool call;
 * - `turn-end` → the `inference` trace line and the on-inference hook;
 * - `usage` → the task's token counters; `quota`, `suggested-prompt` → their frames (no
 *   suggestion on a canceled task); `trace` → the `harness_*` line;
 * - `result` → the attempt's end, which the loop turns into the task's one final status; the
 *   loop writes the last turn's hook artifacts and, when the last segment streamed no text,
 *   the whole reply as one `text` `final:true` frame, as for an http attempt.
 */
import type { ToolCall, ToolSpec } from "../drivers/types.ts";
import type { AttemptOutcome, HarnessDriver, HarnessPart } from "../drivers/process/types.ts";
import { type ArtifactFrame, artifactFrame } from "../events/frames.ts";
import type { Manifest } from "../manifest/types.ts";
import type { ToolResult } from "../tools/types.ts";
import type { Hooks } from "./hooks_api.ts";
import type { Registry } from "./registry.ts";
import { INPUT_TIMEOUT } from "./request_input.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "./trace.ts";

/** The final status message of a task whose harness ignored the interrupt and was killed. */
export const KILLED_ON_CANCEL =
  "task canceled; the harness was killed and its session may not resume cleanly";

/** How the attempt ended; the loop's own attempt-end shape. */
export interface HarnessAttemptEnd {
  kind: "completed" | "failed" | "max_turns" | "canceled";
  reply?: string;
  /** The last segment streamed text, so the loop writes no whole-reply `text` frame. */
  replyStreamed?: boolean;
  /** The final status message (failed, max_turns, canceled). */
  message?: string;
  /** What out/result.txt holds when the attempt did not complete. */
  result?: string;
}

/** The task's counters the attempt adds to (the loop's, shared across attempts). */
export interface HarnessCounters {
  turns: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * The loop's tool dispatch for one call the bridge received: decides (required fields,
 * read_only, policy hooks), runs, fences and writes the `tool_call` / `shell` trace lines, but
 * writes no artifact frame (the harness's report of the result does). `turn` is 1-based.
 */
export type LoopDispatch = (
  call: ToolCall,
  turn: number,
) => Promise<{ result: ToolResult; inputTimedOut: boolean }>;

export interface HarnessAttemptDeps {
  manifest: Manifest;
  registry: Registry;
  trace: TraceWriter;
  hooks: Hooks;
  driver: HarnessDriver;
  tools: ToolSpec[];
  dispatch: LoopDispatch;
  /** `inference.max_session_tokens`: the harness's reported usage is charged to it. */
  spend?: { charge(tokens: number): void };
}

export interface HarnessAttemptInput {
  task: TaskRecord;
  /** The task text (fenced when untrusted), or the reopen feedback of a reopened attempt. */
  prompt: string;
  /** 0 for the task's first attempt. */
  reopenCount: number;
  counters: HarnessCounters;
  /** `task_start`'s event id: the parent of the attempt's trace lines. */
  taskEvt: string;
  /**
   * Filled with the artifacts the on-inference hooks returned for the attempt's last turn; the
   * loop writes them (then the whole reply when nothing streamed) once the attempt completed.
   */
  hookFrames: ArtifactFrame[];
}

/** Is this driver a harness (process transport) rather than a per-turn driver? */
export function isHarnessDriver(d: unknown): d is HarnessDriver {
  return typeof d === "object" && d !== null && (d as { kind?: unknown }).kind === "harness";
}

export async function runHarnessAttempt(
  deps: HarnessAttemptDeps,
  input: HarnessAttemptInput,
): Promise<HarnessAttemptEnd> {
  const { manifest, registry, trace, hooks, driver } = deps;
  const { task, counters: c, taskEvt } = input;
  const threaded = manifest.lifecycle.conversation === "threaded";
  const maxTurns = manifest.inference.maxTurns;

  // A2A forgetSession: the context's harness session is dropped just before planning, so this
  // task's harness starts a new conversation (process-transport-facts §1.8).
  if (input.reopenCount === 0 && task.forgetSession) {
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
  let inputTimedOut = false;
  let turn = c.turns; // the turn the harness is in (1-based; 0 before the first)
  let lastHookArtifacts: ArtifactFrame[] = [];
  let outcome: AttemptOutcome | null = null;
  let turnsUsed = 0;

  const dispatch = async (call: ToolCall): Promise<ToolResult> => {
    const out = await deps.dispatch(call, Math.max(turn, 1));
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
      case "text-delta":
        if (p.text !== "") registry.frame(task, { frame: "text", text: p.text, final: false });
        return;
      case "text-final":
        registry.frame(task, { frame: "text", text: "", final: true });
        return;
      case "reasoning-delta":
        if (p.text !== "") registry.frame(task, { frame: "thinking", text: p.text, final: false });
        return;
      case "tool-input-start":
        registry.frame(task, {
          frame: "tool-call-started",
          toolCallId: p.id,
          toolName: p.toolName,
        });
        return;
      case "tool-input-progress":
        registry.frame(task, {
          frame: "tool-call-progress",
          toolCallId: p.id,
          inputBytes: p.inputBytes,
        });
        return;
      case "tool-result":
        registry.frame(
          task,
          artifactFrame({
            toolName: p.toolName,
            content: p.content,
            fenceSource: p.fenceSource,
            toolCallId: p.toolCallId || null,
            isError: p.isError,
            durationMs: p.durationMs,
            exitCode: null,
            truncated: false,
            attachments: [],
          }),
        );
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
        deps.spend?.charge(p.inputTokens + p.outputTokens);
        return;
      case "quota":
        registry.frame(task, { frame: "quota", windows: p.windows });
        return;
      case "suggested-prompt":
        // A canceled task delivers no answer, so no prediction of the next prompt either.
        if (!task.abort.signal.aborted && p.text.trim() !== "") {
          registry.frame(task, { frame: "suggested-prompt", text: p.text });
        }
        return;
      case "trace":
        trace.write(p.eventType, taskEvt, { task_id: task.id, ...p.fields });
        return;
      case "result":
        outcome = p.outcome;
        turnsUsed = p.turns;
        return;
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
        prompt: input.prompt,
        // A reopened attempt continues its own session; a threaded context continues the
        // context's; otherwise the harness starts fresh.
        resume: input.reopenCount > 0 ? "task" : threaded ? "context" : "new",
        conversation: manifest.lifecycle.conversation,
        system: manifest.inference.systemPrompt,
        maxTurns,
        turnsUsed: c.turns,
        tools: deps.tools,
        dispatch,
      }, signal)
    ) {
      await handle(p);
    }
  } catch (e) {
    // The driver promises never to throw; if it does, the task still ends in one status.
    outcome = {
      status: "failed",
      code: "E-RUN-034",
      kind: "driver-error",
      origin: "runtime",
      message: `the process driver failed: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  c.turns += turnsUsed;
  const end = endOf(outcome, { task, trace, taskEvt, inputTimedOut });
  if (end.kind === "completed") input.hookFrames.push(...lastHookArtifacts);
  return end;
}

function endOf(
  outcome: AttemptOutcome | null,
  x: {
    task: TaskRecord;
    trace: TraceWriter;
    taskEvt: string;
    inputTimedOut: boolean;
  },
): HarnessAttemptEnd {
  const { task, trace, taskEvt } = x;
  if (x.inputTimedOut && !task.abort.signal.aborted) {
    trace.write("task_failed", taskEvt, {
      task_id: task.id,
      cause: "input_timeout",
      reason: INPUT_TIMEOUT,
    });
    return { kind: "failed", message: INPUT_TIMEOUT, result: `error: ${INPUT_TIMEOUT}` };
  }
  if (outcome === null) {
    outcome = {
      status: "failed",
      code: "E-RUN-034",
      kind: "driver-error",
      origin: "runtime",
      message: "the process driver ended the attempt without a result",
    };
  }
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
      // A harness failure is a runtime diagnostic: the status carries it under its code.
      const message = `error[${outcome.code}]: ${outcome.message}`;
      trace.write("task_failed", taskEvt, {
        task_id: task.id,
        cause: outcome.kind === "auth" ? "credential_rejected" : "driver_error",
        error_code: outcome.code,
        harness_failure: outcome.kind,
        origin: outcome.origin,
        reason: outcome.message.slice(0, 2000),
      });
      return { kind: "failed", message, result: `error: ${message}` };
    }
  }
}
