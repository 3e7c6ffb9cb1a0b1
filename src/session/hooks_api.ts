/**
 * What the loop asks of hooks at each binding. The session loop calls these at the seed's points;
 * `NO_HOOKS` is a capsule that declares none. The command-hook runner implements this interface.
 */
import type { ConversationMessage } from "../drivers/types.ts";
import type { ArtifactFrame } from "../events/frames.ts";

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
    { hook: string; messages: { role: string; content: string }[] } | undefined
  >;
  /** Returns the hook artifacts (frames) an on-inference hook returned for this turn. */
  inference(ev: Record<string, unknown>): Promise<ArtifactFrame[]>;
  toolCall(ev: Record<string, unknown>, shell: boolean): Promise<ToolCallDecision>;
  toolResult(ev: Record<string, unknown>, shell: boolean): Promise<void>;
  compaction(ev: Record<string, unknown>): Promise<
    { replaced: ConversationMessage[] } | { declined: string } | { failed: string }
  >;
  taskEnd(ev: Record<string, unknown>): Promise<TaskEndDecision>;
  sessionEnd(ev: Record<string, unknown>): Promise<void>;
  /** Drains async hook queues before the session ends. */
  drain(): Promise<void>;
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
