/**
 * What the loop asks of hooks at each binding. The session loop calls these at the points
 * docs/hooks.md "The loop" names;
 * `NO_HOOKS` is a capsule that declares none. The command-hook runner (src/hooks/) implements
 * this interface. Each binding's event is typed below (docs/hooks.md "Event fields"); the
 * runner adds `event` and `session_id` in front.
 */
import type { ArtifactFrame } from "../events/frames.ts";
import type { TraceFieldsOf } from "../trace_events.ts";

/** A message as hooks read and write it: `{role, content}`, plus the tool pairing keys. */
export interface HookMessage {
  role: "user" | "assistant" | "tool";
  content: string;
  /** assistant: the tool calls it made, as the runtime sent them. */
  tool_calls?: { id: string; name: string; input: Record<string, unknown> }[];
  /** tool: the results, as the runtime sent them. */
  tool_results?: { tool_call_id: string; tool_name: string; content: string; is_error: boolean }[];
}

export type CompactionAnswer =
  | { replaced: HookMessage[]; hook: string }
  | { declined: "no_hook_replacement" }
  | { failed: string; hook: string };

export interface TaskEndDecision {
  /** Feedback and the hook that asked for another attempt. */
  reopen?: { hook: string; feedback: string };
}

export interface ToolCallDecision {
  deny?: { hook: string; reason: string };
}

export interface SessionStartEvent {
  capsule_name: string;
  capsule_version: string;
  session_id: string;
  model: string;
}

export interface TaskStartEvent {
  task_id: string;
  context_id: string;
  source: string;
  input_bytes: number;
  budget_tokens: number;
  context_window: number;
  prior_tokens: number;
}

/**
 * One closed model action. A harness's turn has no `task_id` or `output` and zero tokens (its
 * usage arrives apart from its turns); an http turn has all of them.
 */
export interface InferenceEvent {
  task_id?: string;
  turn: number;
  input_tokens: number;
  output_tokens: number;
  decision: string;
  tool_name: string | null;
  output?: string;
}

/** on-tool-call / on-shell before the call (policy hooks); a shell call adds its command. */
export interface ToolCallEvent {
  task_id: string;
  turn: number;
  tool_name: string;
  input: unknown;
  input_bytes: number;
  binary?: string;
  command?: string;
}

/** on-tool-call / on-shell after the call (observers): the call, then how it went. */
export interface ToolResultEvent extends ToolCallEvent {
  output_bytes: number;
  duration_ms: number;
  status: "ok" | "error";
  exit_code?: number | null;
  stdout_bytes?: number;
  stderr_bytes?: number;
  output?: string;
  work_id?: string;
}

export interface CompactionEvent {
  task_id: string;
  purpose: "seed" | "conversation";
  messages: HookMessage[];
  session_tokens: number;
  threshold: number;
  context_window: number;
  model?: string;
  system_prompt?: string;
}

export interface TaskEndEvent {
  task_id: string;
  context_id: string;
  exit_status: string;
  reopen_count: number;
  turns: number;
  result: string;
}

/**
 * on-approval (docs/approvals.md): a call began waiting for approval (`requested`), or the wait
 * ended (`resolved`: `outcome`, `by` when someone answered, the person's `reason`, `waited_ms`).
 */
export interface ApprovalEvent {
  task_id: string;
  phase: "requested" | "resolved";
  turn: number;
  tool_name: string;
  tool_call_id: string;
  arguments_hash: string;
  /** requested: the policy rule that asked; resolved: the person's reason, if any. */
  reason?: string;
  /** requested: the line a person reads (`approve bash: git push origin main?`). */
  prompt?: string;
  outcome?: "approved" | "denied" | "expired" | "canceled";
  by?: string;
  waited_ms?: number;
}

/** What `session_end` records (src/trace_events.ts): one record, the hook's and the trace's. */
export type SessionEndEvent = TraceFieldsOf["session_end"];

/** Any binding's event, as the runner hands it to a command. */
/** on-stage (src/stage/): once per launch, before the trace exists. */
export interface StageEvent {
  /** `capabilities.shell.allow`: the binaries a written tool manifest may expect. */
  shell_allow: string[];
  /** `workdir/tools/`: where tool manifests and skills are staged. */
  tools_dir: string;
}

export type HookEvent =
  | StageEvent
  | SessionStartEvent
  | TaskStartEvent
  | InferenceEvent
  | ToolCallEvent
  | ToolResultEvent
  | CompactionEvent
  | TaskEndEvent
  | SessionEndEvent
  | ApprovalEvent;

export interface Hooks {
  sessionStart(ev: SessionStartEvent): Promise<void>;
  /** Returns the seed messages the first seeding hook proposed (not yet budgeted). */
  taskStart(ev: TaskStartEvent): Promise<
    { hook: string; messages: HookMessage[] } | undefined
  >;
  /** Returns the hook artifacts (frames) an on-inference hook returned for this turn. */
  inference(ev: InferenceEvent): Promise<ArtifactFrame[]>;
  toolCall(ev: ToolCallEvent, shell: boolean): Promise<ToolCallDecision>;
  toolResult(ev: ToolResultEvent, shell: boolean): Promise<void>;
  /** The first `replace-context` hook's answer; a failure of such a hook is `failed`. */
  compaction(ev: CompactionEvent): Promise<CompactionAnswer>;
  taskEnd(ev: TaskEndEvent): Promise<TaskEndDecision>;
  sessionEnd(ev: SessionEndEvent): Promise<void>;
  /** on-approval observers (docs/approvals.md): a wait began or ended. */
  approval(ev: ApprovalEvent): Promise<void>;
  /** Drains async hook queues before the session ends. */
  drain(): Promise<void>;
  /** A hook with `commit_policy: replace-context` is bound to on-compaction. */
  readonly hasCompaction: boolean;
}

export const NO_HOOKS: Hooks = {
  sessionStart: () => Promise.resolve(),
  taskStart: () => Promise.resolve(undefined),
  inference: () => Promise.resolve([]),
  toolCall: () => Promise.resolve({}),
  toolResult: () => Promise.resolve(),
  compaction: () => Promise.resolve({ declined: "no_hook_replacement" }),
  taskEnd: () => Promise.resolve({}),
  sessionEnd: () => Promise.resolve(),
  approval: () => Promise.resolve(),
  drain: () => Promise.resolve(),
  hasCompaction: false,
};
