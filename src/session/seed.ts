/**
 * Context seeding (docs/hooks.md "Seeding the context"): what the runtime does with the messages an
 * `on-task-start` hook with `commit_policy: seed-context` proposes. The rows of the seed's table
 * are checked in order; the first that applies decides. A seed that cannot be committed never
 * fails the task. `seedContext` is the step at a task's start; the rest is the decision table.
 */
import type { ConversationMessage } from "../drivers/types.ts";
import type { HookMessage } from "./hooks_api.ts";
import { conversationTokens, plainMessage, textTokens } from "./compaction.ts";
import type { LoopDeps } from "./task_run.ts";
import type { TaskRecord } from "./task_record.ts";
import { bootstrapLog } from "./workdir.ts";

const enc = new TextEncoder();

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

/**
 * on-task-start hooks, and the seed the first seeding hook proposed, through the decision table.
 * Every outcome is a `context_seed` line and a bootstrap.log line; nothing here fails the task.
 * Returns the seed messages, ahead of the history.
 */
// Why long: the seed decision table's rows in order (docs/hooks.md "Seeding the context"): the
// first row that applies decides, and each writes its own trace line.
export async function seedContext(
  d: LoopDeps,
  task: TaskRecord,
  taskEvt: string,
  history: ConversationMessage[],
): Promise<ConversationMessage[]> {
  const { manifest, trace, hooks } = d;
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
  let dec = decideSeed({
    transport: manifest.inference.transport,
    maxTokens: ctx.maxTokens,
    seedBudget: ctx.seedBudget,
    overflowMargin: ctx.seedOverflowMargin,
    hasCompaction: hooks.hasCompaction,
    messages: proposal.messages,
  });
  let outcome: "seeded" | "trimmed" | "compacted" | "rejected" = "rejected";
  let keep: HookMessage[] = [];
  if (dec.outcome === "summarize") {
    // The overflowing front goes to the on-compaction hook; a failure here is no task failure.
    const answer = await hooks.compaction({
      task_id: task.id,
      purpose: "seed",
      messages: dec.front,
      session_tokens: seedTokens(dec.front),
      threshold: ctx.compactionThreshold,
      context_window: ctx.maxTokens ?? 0,
    });
    const summary = "replaced" in answer && answer.replaced.length
      ? withSummary(
        { role: "user", content: answer.replaced.map((m) => m.content).join("\n\n") },
        dec.rest,
        budget,
      )
      : null;
    if (summary) {
      outcome = "compacted";
      keep = summary;
    } else {
      // No hook answered (or its summary alone overflows): drop the oldest instead.
      dec = { outcome: "trimmed", keep: dec.rest };
    }
  }
  if (dec.outcome === "seeded" || dec.outcome === "trimmed") {
    outcome = dec.outcome;
    keep = dec.keep;
  }
  const ids = keep.map(() => d.ids.next("msg"));
  const tokens = seedTokens(keep);
  const rejected = dec.outcome === "rejected" ? dec.reason : null;
  trace.write("context_seed", taskEvt, {
    task_id: task.id,
    hook_name: proposal.hook,
    tokens,
    proposed_tokens: proposed,
    budget_tokens: budget,
    outcome,
    ...(rejected ? { reason: rejected } : {}),
    message_ids: ids,
  });
  if (rejected) {
    trace.write("hook_dispatch_error", d.sessionEventId(), {
      hook_name: proposal.hook,
      event: "on-task-start",
      arm: "seed-rejected",
    });
  }
  bootstrapLog(
    d.workdir,
    `context_seed task=${task.id} hook=${proposal.hook} outcome=${outcome}${
      rejected ? ` reason=${rejected}` : ""
    } tokens=${tokens} proposed=${proposed} budget=${budget} messages=${keep.length}/${proposal.messages.length}`,
  );
  return keep.map(plainMessage);
}
