/**
 * A count summed over a whole conversation (its token estimate, its characters), kept as the
 * conversation grows: each message is counted once, when the sum first sees it, and a turn pays
 * only for the messages added since the last sum — not a walk (or a lookup) per message of the
 * history (turn cost independent of history; BENCHMARKS.md
 * "Scale", the turn-overhead rows).
 *
 * It relies on how the task loop treats a conversation (src/session/http_attempt.ts): messages
 * are appended, a message is never changed once in it, and the one rewrite in place (compaction,
 * src/session/compaction.ts) says so with `historyRewritten`. A sum also starts over when the
 * array no longer holds, at the same places, the first and the last message it counted.
 */
import type { ConversationMessage } from "./types.ts";

type History = readonly ConversationMessage[];

/** Bumped by each rewrite in place of a history: a sum kept for an older generation is stale. */
const generations = new WeakMap<History, number>();

/** The history was rewritten in place (not only appended to): every sum over it starts over. */
export function historyRewritten(messages: History): void {
  generations.set(messages, (generations.get(messages) ?? 0) + 1);
}

interface Kept {
  generation: number;
  /** How many messages the sum holds, the first and the last of them, and the sum. */
  count: number;
  first: ConversationMessage;
  last: ConversationMessage;
  sum: number;
}

/** `count` summed over a history, counting only what was appended since the last call. */
export function runningTotal(
  count: (m: ConversationMessage) => number,
): (messages: History) => number {
  const kept = new WeakMap<History, Kept>();
  return (messages) => {
    const generation = generations.get(messages) ?? 0;
    const k = kept.get(messages);
    let from = 0;
    let sum = 0;
    if (
      k !== undefined && k.generation === generation && messages.length >= k.count &&
      messages[0] === k.first && messages[k.count - 1] === k.last
    ) {
      from = k.count;
      sum = k.sum;
    }
    for (let i = from; i < messages.length; i++) sum += count(messages[i]);
    if (messages.length === 0) {
      kept.delete(messages);
    } else if (from < messages.length) {
      kept.set(messages, {
        generation,
        count: messages.length,
        first: messages[0],
        last: messages[messages.length - 1],
        sum,
      });
    }
    return sum;
  };
}
