/**
 * A size counted once per conversation message. A message is never changed after it joins a
 * conversation (the loop and compaction build new ones), so a count kept by the message object
 * stays true, and the per-turn estimates over a whole history cost a lookup per message instead of
 * a walk through every message's text (issue "Cost flat in the work": turn cost independent of
 * history; BENCHMARKS.md "Turn overhead").
 */
import type { ConversationMessage } from "./types.ts";

export function perMessage(
  count: (m: ConversationMessage) => number,
): (m: ConversationMessage) => number {
  const memo = new WeakMap<ConversationMessage, number>();
  return (m) => {
    let n = memo.get(m);
    if (n === undefined) memo.set(m, n = count(m));
    return n;
  };
}
