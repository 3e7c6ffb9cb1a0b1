/**
 * Context seeding (seed 004 "Context seeding"): what the runtime does with the messages an
 * `on-task-start` hook with `commit_policy: seed-context` proposes. The rows of the seed's table
 * are checked in order; the first that applies decides. A seed that cannot be committed never
 * fails the task.
 */
import type { HookMessage } from "./hooks_api.ts";
import { textTokens } from "./compaction.ts";

export type SeedRejection =
  | "unsupported_transport"
  | "no_budget"
  | "message_over_budget"
  | "overflow_over_limit";

export type SeedDecision =
  /** Nothing is seeded. */
  | { outcome: "rejected"; reason: SeedRejection }
  /** All of it (`seeded`) or its newest messages that fit (`trimmed`). */
  | { outcome: "seeded" | "trimmed"; keep: HookMessage[] }
  /** Summarize `front` with the on-compaction hook, then seed the summary ahead of `rest`. */
  | { outcome: "summarize"; front: HookMessage[]; rest: HookMessage[] };

export interface SeedInput {
  transport: "http" | "process";
  /** `context.max_tokens`. */
  maxTokens?: number;
  /** `context.seed_budget`. */
  seedBudget: number;
  /** `context.seed_overflow_margin`. */
  overflowMargin: number;
  /** Whether a `replace-context` hook is bound to on-compaction. */
  hasCompaction: boolean;
  messages: HookMessage[];
}

export function seedTokens(messages: HookMessage[]): number {
  return messages.reduce((n, m) => n + textTokens(m.content), 0);
}

/** `floor(context.max_tokens × context.seed_budget)`: the seed's ceiling; 0 without max_tokens. */
export function seedCeiling(maxTokens: number | undefined, seedBudget: number): number {
  return maxTokens === undefined ? 0 : Math.floor(maxTokens * seedBudget);
}

/** The newest messages that fit `ceiling`, dropping from the front. */
export function dropOldest(messages: HookMessage[], ceiling: number): HookMessage[] {
  let start = 0;
  let total = seedTokens(messages);
  while (start < messages.length && total > ceiling) {
    total -= textTokens(messages[start].content);
    start++;
  }
  return messages.slice(start);
}

export function decideSeed(p: SeedInput): SeedDecision {
  if (p.transport === "process") return { outcome: "rejected", reason: "unsupported_transport" };
  const ceiling = seedCeiling(p.maxTokens, p.seedBudget);
  // A ceiling of 0 (seed_budget: 0) is no ceiling to seed into either.
  if (p.maxTokens === undefined || ceiling === 0) {
    return { outcome: "rejected", reason: "no_budget" };
  }
  if (p.messages.some((m) => textTokens(m.content) > ceiling)) {
    return { outcome: "rejected", reason: "message_over_budget" };
  }
  const proposed = seedTokens(p.messages);
  const over = proposed - ceiling;
  // "More than three times the ceiling over it": the overflow alone exceeds 3 × the ceiling.
  if (over > 3 * ceiling) return { outcome: "rejected", reason: "overflow_over_limit" };
  if (over <= 0) return { outcome: "seeded", keep: p.messages };
  if (over <= p.overflowMargin * ceiling || !p.hasCompaction) {
    return { outcome: "trimmed", keep: dropOldest(p.messages, ceiling) };
  }
  const rest = dropOldest(p.messages, ceiling);
  return {
    outcome: "summarize",
    front: p.messages.slice(0, p.messages.length - rest.length),
    rest,
  };
}

/**
 * The summary as the seed's first message, ahead of as many of the newest `rest` messages as
 * still fit; null when the summary alone is wider than the ceiling.
 */
export function withSummary(
  summary: HookMessage,
  rest: HookMessage[],
  ceiling: number,
): HookMessage[] | null {
  const room = ceiling - textTokens(summary.content);
  if (room < 0) return null;
  return [summary, ...dropOldest(rest, room)];
}
