/**
 * One running task as the loop's parts share it: the record, the conversation, the counters, the
 * parent of its trace lines. `LoopDeps` is the session's world they all reach through. Kept apart
 * from loop.ts so the attempts, the tool pipeline, seeding, compaction and the reopen decision
 * depend on this file and not on each other.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import type { ConversationMessage, ToolCall, ToolSpec } from "../drivers/types.ts";
import type { ArtifactFrame } from "../events/frames.ts";
import type { IdSource } from "../ids.ts";
import type { Manifest } from "../manifest/types.ts";
import type { DetachedOutcome, Tool, ToolContext, ToolResult } from "../tools/types.ts";
import type { Hooks } from "./hooks_api.ts";
import type { SourceError } from "../tools/source_errors.ts";
import type { Registry } from "./registry.ts";
import type { SpendMeter } from "./spend.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "../trace_writer.ts";
import type { Workdir } from "./workdir.ts";

export interface ToolDispatcher {
  specs(): ToolSpec[];
  /** Refusals that come before policy hooks: undeclared, missing fields, read_only. */
  precheck?(call: ToolCall, ctx: ToolContext): ToolResult | null;
  dispatch(call: ToolCall, ctx: ToolContext): Promise<ToolResult>;
  /** The MCP server a tool comes from (docs/mcp.md), or undefined. */
  sourceOf?(name: string): string | undefined;
  /** Where the tool sources' error logs stand now: a task's start. */
  sourceErrorMark?(): number[];
  /** Sources down now and errors since `mark`: a task's `sourceErrors`. */
  sourceErrors?(mark: number[]): SourceError[];
}

/** Conversation histories by context, for `lifecycle.conversation: threaded`. */
export type Histories = Map<string, ConversationMessage[]>;

export interface DetachedShell {
  workId: string;
  binary: string;
  command: string;
  graceMs: number;
  done: Promise<DetachedOutcome>;
}

/** What every part of the loop reaches the session through. */
export interface LoopDeps {
  manifest: Manifest;
  registry: Registry;
  trace: TraceWriter;
  /** `event_id` of `session_start`: the parent of every task_start. */
  sessionEventId(): string;
  tools: ToolDispatcher;
  /** Tools the session itself implements (request-input): called by the loop, not the toolbox. */
  sessionTools?: Map<string, Tool>;
  hooks: Hooks;
  workdir: Workdir;
  histories: Histories;
  /** A diagnostic line for stderr. */
  warn(line: string): void;
  clock: () => number;
  /** Where the session's ids come from (on its clock). */
  ids: IdSource;
  /** `inference.max_session_tokens`, shared by every task of the session. */
  spend?: SpendMeter;
  /** A shell command of this task moved to the background (the session delivers its end). */
  onDetached?(task: TaskRecord, shell: DetachedShell): void;
  /** `mur run --resume`: the context the launch task continues (its record is in histories). */
  resumedContext?: string;
  /** What every process of the session runs under (src/containment/); absent: advisory. */
  containment?: ContainmentPolicy;
}

/** Counters of one task, across its attempts. */
export class TaskCounters {
  turns = 0;
  inputTokens = 0;
  outputTokens = 0;
  toolCalls = 0;
  shellCalls = 0;
  /** keep_working messages sent (per task, across attempts). */
  nudges = 0;
  /** The last turn's `inference` line (parent of compaction and spend lines). */
  lastTurnEvt = "";
}

/** One task while it runs. */
export interface TaskRun {
  readonly task: TaskRecord;
  /** The conversation as the driver sees it; attempts append, compaction replaces. */
  readonly messages: ConversationMessage[];
  readonly counters: TaskCounters;
  /** `task_start`'s event id: the parent of the task's own trace lines. */
  readonly taskEvt: string;
  /** Reopens so far (done checks and hooks); 0 during the first attempt. */
  reopenCount: number;
  /** Artifacts on-inference hooks returned, written when the attempt completes. */
  hookFrames: ArtifactFrame[];
}

/** How one attempt ended; the loop turns it into the task's one final status. */
export interface AttemptEnd {
  kind: "completed" | "failed" | "max_turns" | "canceled" | "spend";
  reply?: string;
  /** The last turn streamed text (so no whole-reply `text` frame is written). */
  replyStreamed?: boolean;
  /** The last turn stopped at `inference.max_tokens`. */
  maxTokensCut?: boolean;
  /** The final status message (failed, max_turns, canceled, spend). */
  message?: string;
  /** What out/result.txt holds when the attempt did not complete. */
  result?: string;
  /** `end-without-answer` ended it (a failed attempt whose exit status is `no_answer`). */
  noAnswer?: boolean;
}

/** One attempt of a task: from its newest user message until the model stops or it fails. */
export interface Attempt {
  run(run: TaskRun): Promise<AttemptEnd>;
}

export type ExitStatus =
  | "ok"
  | "failed"
  | "max_turns_reached"
  | "spend_ceiling_reached"
  | "reopen_budget_exhausted"
  | "canceled"
  | "no_answer";

export function exitOf(end: AttemptEnd): ExitStatus {
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
      return end.noAnswer ? "no_answer" : "failed";
  }
}

/** An attempt that failed with `message`; result.txt says `error: <message>`. */
export function failedEnd(message: string): AttemptEnd {
  return { kind: "failed", message, result: `error: ${message}` };
}

/** `end-without-answer` was accepted with `reason` (docs/crews.md). */
export function noAnswerEnd(reason: string): AttemptEnd {
  return { kind: "failed", message: reason, result: `no answer: ${reason}`, noAnswer: true };
}

/** The task's working directory and cancel signal, as tools receive them. */
export function toolContext(d: LoopDeps, run: TaskRun): ToolContext {
  return {
    workdir: d.workdir.root,
    taskId: run.task.id,
    contextId: run.task.contextId,
    signal: run.task.abort.signal,
    containment: d.containment,
  };
}
