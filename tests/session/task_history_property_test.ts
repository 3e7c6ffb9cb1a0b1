/**
 * TaskHistory (src/session/task_history.ts) against the simplest reference: an array that keeps
 * everything. For any limit and any sequence of appends and reads, `newest(n)` is the reference's
 * last min(n, limit) messages, `at(seq)` the reference's seq-th while it is kept, and `dropped`
 * what the limit cut.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Message } from "../../src/a2a/types.ts";
import { TaskHistory } from "../../src/session/task_history.ts";
import { checkProperty } from "../helpers/property.ts";

const msg = (i: number): Message => ({
  messageId: `m${i}`,
  role: i % 2 ? "ROLE_AGENT" : "ROLE_USER",
  parts: [{ text: String(i) }],
});

Deno.test("TaskHistory keeps the newest `limit` messages, in order, and counts the rest", () => {
  checkProperty(
    { name: "task history", numRuns: 500 },
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.array(fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 20 })), { maxLength: 80 }),
      (limit, ops) => {
        const h = new TaskHistory(limit);
        const ref: Message[] = [];
        for (const op of ops) {
          if (op === -1) {
            const m = msg(ref.length);
            h.append(m);
            ref.push(m);
            continue;
          }
          const kept = ref.slice(Math.max(0, ref.length - limit));
          assert.equal(h.size, kept.length);
          assert.equal(h.total, ref.length);
          assert.equal(h.dropped, ref.length - kept.length);
          assert.deepEqual(h.newest(), kept);
          assert.deepEqual(h.newest(op), op === 0 ? [] : kept.slice(-op));
          for (let seq = 0; seq < ref.length; seq++) {
            assert.equal(h.at(seq), seq < ref.length - kept.length ? undefined : ref[seq]);
          }
        }
      },
    ),
  );
});

Deno.test("TaskHistory refuses a limit below 1", () => {
  assert.throws(() => new TaskHistory(0), RangeError);
});
