/**
 * Compaction (docs/hooks.md "Compaction"): when the conversation crosses
 * `context.compaction_threshold` of `context.max_tokens`, a bound `on-compaction` hook may
 * replace the history. What is here: the step before each turn of an http attempt, counting a
 * conversation, turning it into hook messages and back, and checking a replacement keeps every
 * tool call paired with its result. A harness keeps its own conversation and compacts it itself.
 */
import type { ConversationMessage } from "../drivers/types.ts";
import { saveConversation } from "./conversation_record.ts";
import type { HookMessage } from "./hooks_api.ts";
import { type AttemptEnd, failedEnd, type LoopDeps, type TaskRun } from "./task_run.ts";
import { historyRewritten, runningTotal } from "../drivers/running_total.ts";

/**
 * Before a turn: when the conversation has crossed `context.compaction_threshold` of
 * `context.max_tokens`, on-compaction hooks are asked for a replacement history. Returns the
 * attempt's end only when a replace-context hook failed (that fails the task).
 */
export async function compactBeforeTurn(
  d: LoopDeps,
  run: TaskRun,
  /** The driver's model, for the hook event. */
  model: string,
): Promise<AttemptEnd | null> {
  const { manifest, trace } = d;
  const { task, messages, counters: c } = run;
  const max = manifest.context.maxTokens;
  if (max === undefined) return null;
  const system = manifest.inference.systemPrompt;
  const before = conversationTokens(system, messages);
  const threshold = manifest.context.compactionThreshold;
  if (before < threshold * max) return null;
  const answer = await d.hooks.compaction({
    task_id: task.id,
    purpose: "conversation",
    messages: messages.map(toHookMessage),
    session_tokens: before,
    threshold,
    context_window: max,
    model,
    ...(system ? { system_prompt: system } : {}),
  });
  const turn = c.turns;
  if ("failed" in answer) {
    const reason = `on-compaction hook ${answer.hook} failed: ${answer.failed}`;
    trace.write("task_failed", c.lastTurnEvt, {
      task_id: task.id,
      turn,
      cause: "compaction_hook",
      reason: reason.slice(0, 2000),
    });
    return failedEnd(`task failed (compaction_hook): ${reason}`);
  }
  const replaced = "replaced" in answer && answer.replaced.length
    ? fromReplacement(answer.replaced, messages)
    : "no_hook_replacement";
  if (typeof replaced === "string") {
    trace.write("compaction_declined", c.lastTurnEvt, {
      turn,
      task_id: task.id,
      tokens: before,
      reason: replaced,
    });
    return null;
  }
  messages.splice(0, messages.length, ...replaced);
  historyRewritten(messages);
  saveConversation(d.workdir.session, task.contextId, messages);
  trace.write("compaction", c.lastTurnEvt, {
    turn,
    task_id: task.id,
    tokens_before: before,
    tokens_after: conversationTokens(system, messages),
  });
  return null;
}

/** About 4 characters a token: the runtime's estimate when a driver reports no usage. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function messageTokens(m: ConversationMessage): number {
  switch (m.role) {
    case "user":
      return textTokens(m.content);
    case "assistant":
      return textTokens(m.text) +
        (m.toolCalls.length ? textTokens(JSON.stringify(m.toolCalls)) : 0);
    case "tool":
      return m.results.reduce((n, r) => n + textTokens(r.content), 0);
  }
}

const historyTokens = runningTotal(messageTokens);

/**
 * The conversation's size as the next request would carry it (system prompt included); a turn
 * counts only the messages added since the last turn (src/drivers/running_total.ts).
 */
export function conversationTokens(system: string | undefined, messages: ConversationMessage[]) {
  return (system ? textTokens(system) : 0) + historyTokens(messages);
}

export function toHookMessage(m: ConversationMessage): HookMessage {
  switch (m.role) {
    case "user":
      return { role: "user", content: m.content };
    case "assistant":
      return {
        role: "assistant",
        content: m.text,
        ...(m.toolCalls.length
          ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, input: c.input })) }
          : {}),
      };
    case "tool":
      return {
        role: "tool",
        content: m.results.map((r) => r.content).join("\n"),
        tool_results: m.results.map((r) => ({
          tool_call_id: r.toolCallId,
          tool_name: r.toolName,
          content: r.content,
          is_error: r.isError,
        })),
      };
  }
}

/**
 * A seed or summary message as the driver receives it; a `tool` message without pairing is text.
 */
export function plainMessage(m: HookMessage): ConversationMessage {
  return m.role === "assistant"
    ? { role: "assistant", text: m.content, toolCalls: [] }
    : { role: "user", content: m.content };
}

/**
 * The replacement history, or `unresolved_tool_call` when it would break the pairing of tool
 * calls and results: a `tool` message survives only unmodified (equal to one of the original's)
 * and right after the assistant message whose calls it answers, and an assistant message with
 * tool calls must be followed by their results.
 */
export function fromReplacement(
  replacement: HookMessage[],
  original: ConversationMessage[],
): ConversationMessage[] | "unresolved_tool_call" {
  const originalTools = new Map<string, ConversationMessage>();
  for (const m of original) {
    if (m.role === "tool") originalTools.set(JSON.stringify(toHookMessage(m)), m);
  }
  const out: ConversationMessage[] = [];
  for (let i = 0; i < replacement.length; i++) {
    const m = replacement[i];
    if (m.role === "tool") {
      const same = originalTools.get(JSON.stringify(canonical(m)));
      const prev = replacement[i - 1];
      if (!same || same.role !== "tool" || prev?.role !== "assistant") {
        return "unresolved_tool_call";
      }
      const callIds = (prev.tool_calls ?? []).map((c) => c.id).join("\n");
      if (callIds !== same.results.map((r) => r.toolCallId).join("\n")) {
        return "unresolved_tool_call";
      }
      out.push(same);
      continue;
    }
    if (m.role === "assistant" && m.tool_calls?.length) {
      if (replacement[i + 1]?.role !== "tool") return "unresolved_tool_call";
      out.push({
        role: "assistant",
        text: m.content,
        toolCalls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, input: c.input })),
      });
      continue;
    }
    out.push(plainMessage(m));
  }
  return out;
}

/** The key order toHookMessage writes, so equal messages serialise equally. */
function canonical(m: HookMessage): HookMessage {
  return {
    role: m.role,
    content: m.content,
    ...(m.tool_results
      ? {
        tool_results: m.tool_results.map((r) => ({
          tool_call_id: r.tool_call_id,
          tool_name: r.tool_name,
          content: r.content,
          is_error: r.is_error,
        })),
      }
      : {}),
  };
}
