/**
 * What the loop asks of hooks at each binding. The session loop calls these at the seed's points;
 * `NO_HOOKS` is a capsule that declares none. The command-hook runner (src/hooks/) implements
 * this interface. Events are the fields of runtime-facts §6.4 in snake_case; the runner adds
 * `event` and `session_id`.
 */
import type { ArtifactFrame } from "../events/frames.ts";

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

export interface Hooks {
  sessionStart(ev: Record<string, unknown>): Promise<void>;
  /** Returns the seed messages the first seeding hook proposed (not yet budgeted). */
  taskStart(ev: Record<string, unknown>): Promise<
    { hook: string; messages: HookMessage[] } | undefined
  >;
  /** Returns the hook artifacts (frames) an on-inference hook returned for this turn. */
  inference(ev: Record<string, unknown>): Promise<ArtifactFrame[]>;
  toolCall(ev: Record<string, unknown>, shell: boolean): Promise<ToolCallDecision>;
  toolResult(ev: Record<string, unknown>, shell: boolean): Promise<void>;
  /** The first `replace-context` hook's answer; a failure of such a hook is `failed`. */
  compaction(ev: Record<string, unknown>): Promise<CompactionAnswer>;
  taskEnd(ev: Record<string, unknown>): Promise<TaskEndDecision>;
  sessionEnd(ev: Record<string, unknown>): Promise<void>;
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
  drain: () => Promise.resolve(),
  hasCompaction: false,
};
