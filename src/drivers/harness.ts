/**
 * The process transport's contract with the session loop: a harness (a coding-agent CLI) runs a
 * whole attempt of a task by itself, many inference turns in one process, and calls the
 * capsule's tools through the tool bridge (an MCP server on loopback). So the loop does not call
 * `Driver.turn()` per turn; it calls `HarnessDriver.attempt()` once per attempt and turns the
 * parts it yields into statuses, frames and trace lines (src/session/harness_attempt.ts).
 *
 * The per-CLI side (dialects, the generic runner) lives in src/drivers/process/ and is none of
 * the loop's business.
 */
import type { HarnessTrace } from "../trace_events.ts";
import type { QuotaWindow } from "../events/frames.ts";
import type { TaskRef, ToolCall, ToolSpec } from "./types.ts";
import type { ToolResult } from "../tools/types.ts";

export interface AttemptRequest {
  task: TaskRef;
  /** The task text, or the reopen feedback for a reopened attempt. */
  prompt: string;
  /**
   * Which harness session to run in:
   * - `new`: a fresh session, remembered nowhere (stateless capsule, first attempt);
   * - `context`: the session stored for `task.contextId` (a threaded context), else a fresh one
   *   stored under it;
   * - `task`: the session this task's previous attempt ran in (a reopened attempt), else fresh.
   */
  resume: "new" | "task" | "context";
  /** `threaded`: whatever session this attempt runs in is remembered for its context. */
  conversation: "stateless" | "threaded";
  /** The system prompt: the `[Capsule]` block, then the manifest's (../capsule_block.ts). */
  system?: string;
  /** `inference.max_turns`, cumulative over the task's attempts. */
  maxTurns: number;
  /** Turns the task's earlier attempts used; this attempt's turns are numbered on from it. */
  turnsUsed: number;
  /** The capsule's tools, offered to the harness over the bridge (none → no bridge). */
  tools: ToolSpec[];
  /**
   * The loop's tool dispatch. The bridge calls it for every harness `tools/call`; it already
   * applies required fields, read_only, the on-tool-call hook, request-input and fencing, and
   * writes the `tool_call` trace record. A refusal comes back as `isError: true`.
   * `call.id` is the harness's tool-call id when the harness sent one (Claude Code does), else a
   * bridge-minted `bridge_<n>`.
   */
  dispatch(call: ToolCall, signal: AbortSignal): Promise<ToolResult>;
}

/**
 * Why a harness attempt failed (docs/process-transport.md; E-RUN-033), plus the
 * runtime's own stops.
 */
export type HarnessFailureKind =
  | "auth"
  | "quota"
  | "max-turns"
  | "canceled"
  | "harness-error"
  | "other"
  | "inactive"
  | "not-found"
  | "session-gone"
  | "driver-error";

export type AttemptOutcome =
  /** The harness ended its run with a result. `text` is the task's answer. */
  | {
    status: "completed";
    text: string;
    /**
     * True when the last segment streamed text deltas: the loop then writes no whole-result
     * `text` frame (docs/protocol.md "Frames": `text`).
     */
    lastSegmentStreamedText: boolean;
  }
  /**
   * The attempt failed. `code` is the diagnostic (`E-RUN-033` turn failed, `E-RUN-034` driver
   * error, `E-RUN-035` inactive, `E-RUN-036` session gone, `E-RUN-006` binary not found), or
   * `max_turns` when the runtime stopped it at `inference.max_turns` (the loop writes its own
   * `max_turns exceeded: …` message then). `message` is the full diagnostic text without the
   * `error[CODE]: ` prefix.
   */
  | {
    status: "failed";
    code: "E-RUN-006" | "E-RUN-033" | "E-RUN-034" | "E-RUN-035" | "E-RUN-036" | "max_turns";
    kind: HarnessFailureKind;
    origin: "harness" | "runtime";
    message: string;
  }
  /**
   * The attempt was canceled (the signal aborted). `killed`: the harness ignored the interrupt
   * for the grace period and was killed, so the loop writes `task canceled; the harness was
   * killed and its session may not resume cleanly`. `started: false` when nothing was spawned.
   */
  | { status: "canceled"; killed: boolean; started: boolean };

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
  thinkingTokens?: number;
}

/**
 * What an attempt yields, in order. Parts map 1:1 to what the loop writes:
 * - `turn-start` → WORKING `inference turn <turn>` (a segment opened: text, reasoning or a tool
 *   call began). `turn` is 1-based and counted across attempts.
 * - `text-delta` → `text` `final:false`; `text-final` → the owed empty `text` `final:true`.
 * - `reasoning-delta` → `thinking` (also the whole reasoning when nothing was streamed).
 * - `tool-input-start` → `tool-call-started` (bare tool name, once per id).
 * - `tool-input-progress` → `tool-call-progress`, already rate-limited (250 ms per call plus a
 *   final one), cumulative UTF-8 bytes.
 * - `tool-result` → `artifact` (exitCode null, truncated false, attachments []).
 * - `turn-end` → one closed model action: the `inference` trace record (decision `tool_call`
 *   or `end_turn`, tokens not known per turn) and the on-inference hook if the loop fires one.
 * - `usage` → the run's totals, from the harness's `result` only; once, before `result`.
 * - `quota` / `suggested-prompt` → those frames on WORKING carriers.
 * - `trace` → a `harness_*` trace record (`harness_start`, `harness_session`, `harness_retry`,
 *   `harness_note`, `harness_warning`, `harness_failed`, `harness_interrupt`, `harness_exit`).
 *   A provider retry is only ever a `harness_retry` trace part (no frame).
 * - `result` → the last part, exactly once, on every path out.
 */
export type HarnessPart =
  | { type: "turn-start"; turn: number }
  | { type: "text-delta"; text: string }
  | { type: "text-final" }
  | { type: "reasoning-delta"; text: string }
  | { type: "tool-input-start"; id: string; toolName: string }
  | { type: "tool-input-progress"; id: string; inputBytes: number }
  | {
    type: "tool-result";
    toolCallId: string;
    toolName: string;
    content: string;
    isError: boolean;
    fenceSource: string | null;
    durationMs: number | null;
  }
  | { type: "turn-end"; turn: number; decision: "tool_call" | "end_turn"; toolName: string | null }
  | ({ type: "usage" } & UsageTotals)
  | { type: "quota"; windows: QuotaWindow[] }
  | { type: "suggested-prompt"; text: string }
  | ({ type: "trace" } & HarnessTrace)
  | {
    type: "result";
    outcome: AttemptOutcome;
    /** Model actions (turns) this attempt used; add to `turnsUsed` for the next attempt. */
    turns: number;
    /** The harness session the attempt ran in, when one was planned. */
    sessionId: string | null;
  };

export interface HarnessDriver {
  readonly kind: "harness";
  /** `claude-code` or `codex`. */
  readonly name: string;
  /** `inference.model`, or `""` when the harness picks its default. */
  readonly model: string;
  /** The card's `capabilities.streaming`-relevant fact: the harness streams text deltas. */
  readonly streamsText: boolean;
  /** One attempt of a task. Ends with exactly one `result` part. Never throws. */
  attempt(req: AttemptRequest, signal: AbortSignal): AsyncIterable<HarnessPart>;
  /**
   * Drops the harness session remembered for a context (A2A `forgetSession`, CLI
   * `--forget-session`). Returns the forgotten id, or null when none was stored.
   */
  forgetSession(contextId: string): Promise<string | null>;
  close(): Promise<void>;
}

/** Is this driver a harness (process transport) rather than a per-turn driver? */
export function isHarnessDriver(d: unknown): d is HarnessDriver {
  return typeof d === "object" && d !== null && (d as { kind?: unknown }).kind === "harness";
}
