/**
 * The running total over a conversation (src/drivers/running_total.ts): a turn counts only the
 * messages appended since the last sum, and a rewritten history is summed again. The property
 * runs random histories of appends, in-place rewrites and fresh arrays against the plain sum.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { historyRewritten, runningTotal } from "../../src/drivers/running_total.ts";
import type { ConversationMessage } from "../../src/drivers/types.ts";

const user = (content: string): ConversationMessage => ({ role: "user", content });
const len = (m: ConversationMessage) => m.role === "user" ? m.content.length : 0;

Deno.test("running total: each turn counts only the messages it has not seen", () => {
  let counted = 0;
  const total = runningTotal((m) => {
    counted++;
    return len(m);
  });
  const messages: ConversationMessage[] = [];
  for (let turn = 1; turn <= 1000; turn++) {
    messages.push(user("ab"), user("c"));
    assert.equal(total(messages), 3 * turn);
  }
  // 1,000 sums over a history growing to 2,000 messages: 2,000 counts, not ~1,000,000.
  assert.equal(counted, 2000);
  assert.equal(total(messages), 3000);
  assert.equal(counted, 2000, "a sum with nothing new counts nothing");
});

Deno.test("running total: a history rewritten in place is summed again", () => {
  const total = runningTotal(len);
  const messages = [user("aaaa"), user("bb"), user("c")];
  assert.equal(total(messages), 7);
  // Compaction's rewrite keeps the length and the message at the end: only the mark tells.
  const kept = messages[2];
  messages.splice(0, 3, messages[0], user("x"), kept);
  historyRewritten(messages);
  assert.equal(total(messages), 6);
  // A first message replaced without the mark is seen too.
  messages[0] = user("");
  messages.push(user("dd"));
  assert.equal(total(messages), 4);
  messages.length = 0;
  assert.equal(total(messages), 0);
  messages.push(user("zzz"));
  assert.equal(total(messages), 3);
});

Deno.test("running total: equals the plain sum over random histories", () => {
  const op = fc.oneof(
    fc.record({ push: fc.array(fc.string({ maxLength: 6 }), { maxLength: 4 }) }),
    fc.record({ rewrite: fc.array(fc.string({ maxLength: 6 }), { maxLength: 6 }) }),
    fc.record({ fresh: fc.constant(true) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const total = runningTotal(len);
      let messages: ConversationMessage[] = [];
      for (const o of ops) {
        if ("push" in o) messages.push(...o.push.map(user));
        else if ("rewrite" in o) {
          // Old messages kept at their places, new ones between them (the worst case for a check
          // of the ends alone), as a compaction hook keeps tool results by identity.
          const old = messages.slice();
          const fresh = o.rewrite.map(user);
          messages.splice(0, messages.length, ...fresh.map((m, i) => i % 2 ? m : old[i] ?? m));
          historyRewritten(messages);
        } else messages = messages.slice();
        assert.equal(total(messages), messages.reduce((n, m) => n + len(m), 0));
      }
    }),
    { numRuns: 300 },
  );
});
