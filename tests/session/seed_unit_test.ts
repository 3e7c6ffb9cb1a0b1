/** docs/hooks.md "Seeding the context": every row of the decision table, in order (seed.ts). */
import assert from "node:assert/strict";
import { decideSeed, dropOldest, seedCeiling, withSummary } from "../../src/session/seed.ts";
import type { HookMessage } from "../../src/session/hooks_api.ts";

/** A message of exactly `tokens` tokens (4 characters a token). */
const msg = (tokens: number, tag = "m"): HookMessage => ({
  role: "user",
  content: `${tag}:`.padEnd(tokens * 4, "x"),
});
// max_tokens 1000 × seed_budget 0.1 → ceiling 100; margin 0.1 → 10 tokens of slack.
const base = {
  transport: "http" as const,
  maxTokens: 1000,
  seedBudget: 0.1,
  overflowMargin: 0.1,
  hasCompaction: true,
};

Deno.test("seed row 1: process transport seeds nothing", () => {
  assert.deepEqual(decideSeed({ ...base, transport: "process", messages: [msg(10)] }), {
    outcome: "rejected",
    reason: "unsupported_transport",
  });
});

Deno.test("seed row 2: no context.max_tokens (or a zero ceiling) seeds nothing", () => {
  assert.deepEqual(decideSeed({ ...base, maxTokens: undefined, messages: [msg(10)] }), {
    outcome: "rejected",
    reason: "no_budget",
  });
  assert.deepEqual(decideSeed({ ...base, seedBudget: 0, messages: [msg(10)] }), {
    outcome: "rejected",
    reason: "no_budget",
  });
  assert.equal(seedCeiling(undefined, 0.1), 0);
  assert.equal(seedCeiling(1005, 0.1), 100);
});

Deno.test("seed row 3: one message wider than the whole ceiling seeds nothing (before the 3x rule)", () => {
  assert.deepEqual(decideSeed({ ...base, messages: [msg(10), msg(101)] }), {
    outcome: "rejected",
    reason: "message_over_budget",
  });
  // Even when the whole proposal is also more than 3x over, this row comes first.
  assert.deepEqual(decideSeed({ ...base, messages: [msg(500)] }).outcome, "rejected");
  assert.deepEqual(
    (decideSeed({ ...base, messages: [msg(500)] }) as { reason: string }).reason,
    "message_over_budget",
  );
});

Deno.test("seed row 4: more than three times the ceiling over it seeds nothing", () => {
  // 401 tokens: 301 over a ceiling of 100.
  const over = [msg(100), msg(100), msg(100), msg(100), msg(1)];
  assert.deepEqual(decideSeed({ ...base, messages: over }), {
    outcome: "rejected",
    reason: "overflow_over_limit",
  });
  // Exactly 300 over is not more than three times: it goes on to the later rows.
  const at = [msg(100), msg(100), msg(100), msg(100)];
  assert.notEqual(decideSeed({ ...base, messages: at }).outcome, "rejected");
});

Deno.test("seed row 5: a proposal that fits is seeded whole", () => {
  const m = [msg(50), msg(50)];
  assert.deepEqual(decideSeed({ ...base, messages: m }), { outcome: "seeded", keep: m });
});

Deno.test("seed row 6: over by no more than the margin drops the oldest until the rest fits", () => {
  const m = [msg(10, "a"), msg(45, "b"), msg(55, "c")]; // 110: over by 10 = the margin
  assert.deepEqual(decideSeed({ ...base, messages: m }), {
    outcome: "trimmed",
    keep: [m[1], m[2]],
  });
});

Deno.test("seed row 7: over by more, with an on-compaction hook: the overflowing front is summarized", () => {
  const m = [msg(60, "a"), msg(60, "b"), msg(60, "c")]; // 180: over by 80
  assert.deepEqual(decideSeed({ ...base, messages: m }), {
    outcome: "summarize",
    front: [m[0], m[1]],
    rest: [m[2]],
  });
  const summary = { role: "user" as const, content: "summary".padEnd(40, ".") }; // 10 tokens
  assert.deepEqual(withSummary(summary, [m[2]], 100), [summary, m[2]]);
  // A summary that leaves too little room drops more of the rest; one wider than the ceiling fails.
  assert.deepEqual(withSummary(msg(50, "s"), [msg(30, "x"), msg(40, "y")], 100), [
    msg(50, "s"),
    msg(40, "y"),
  ]);
  assert.equal(withSummary(msg(101), [], 100), null);
});

Deno.test("seed row 8: over by more, and no on-compaction hook: the oldest are dropped", () => {
  const m = [msg(60, "a"), msg(60, "b"), msg(60, "c")];
  assert.deepEqual(decideSeed({ ...base, hasCompaction: false, messages: m }), {
    outcome: "trimmed",
    keep: [m[2]],
  });
  assert.deepEqual(dropOldest(m, 120), [m[1], m[2]]);
});
