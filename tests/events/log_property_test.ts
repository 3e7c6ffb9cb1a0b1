/**
 * Property of the event log (log.ts, issue 13): whatever the events, ids run 1, 2, 3…; each
 * entry's bytes are the reference's StreamResponse for activated and plain connections, and stay
 * so after any number of later events (entries share encode blocks); a replay from any cursor is
 * what seed 000 "Replay" says: every buffered event after it, or a gap naming the oldest buffered
 * id and the whole buffer when the cursor was never issued or its successors were evicted.
 */
import fc from "fast-check";
import assert from "node:assert/strict";
import { EventLog, type LogEntry } from "../../src/events/log.ts";
import { checkProperty } from "../helpers/property.ts";
import { type Ev, plainSessions } from "./arbitraries.ts";
import { inputOf, referenceBody, REPLAY } from "./reference.ts";

const dec = new TextDecoder("utf-8", { fatal: true });

/** Seed 000 "Replay", as a reference. */
function referenceReplay(last: number, after: number): { gap: number | null; ids: number[] } {
  if (last === 0) return { gap: null, ids: [] };
  const first = Math.max(1, last - REPLAY + 1);
  const evicted = after >= 0 && after < last + 1 && first > after + 1;
  const gap = after >= last + 1 || after < 0 || evicted ? first : null;
  const from = gap === null ? after + 1 : first;
  const ids: number[] = [];
  for (let id = from; id <= last; id++) ids.push(id);
  return { gap, ids };
}

const cursor = fc.oneof(
  fc.nat({ max: 5 }),
  fc.integer({ min: -3, max: 1500 }),
  fc.constant(Number.MAX_SAFE_INTEGER),
);

Deno.test("log property: ids, bytes and replays are the reference's", () => {
  let replays = 0;
  const runs = checkProperty(
    { name: "log property", numRuns: 500 },
    fc.property(
      plainSessions,
      fc.array(cursor, { maxLength: 30 }),
      fc.array(fc.nat({ max: 120 }), { maxLength: 700, size: "max" }),
      (s, cursors, pad) => {
        const log = new EventLog();
        // Pad with small events so replays also cross the 512-event eviction; their text is
        // 3-byte UTF-8 of every length, so they fill the log's shared encode blocks to every
        // last byte (a block sized from the string's length rather than its bytes would cut one).
        const events = s.events.concat(pad.map((n, i): Ev => ({
          kind: "frame",
          task: "tsk_0",
          ctx: "ctx_0",
          state: "TASK_STATE_WORKING",
          frame: { frame: "text", text: "日€".repeat(n), final: false },
          ms: i,
        })));
        const entries: LogEntry[] = [];
        events.forEach((ev, i) => {
          const e = log.append(inputOf(ev));
          assert.equal(e.id, i + 1);
          assert.equal(dec.decode(e.idLine), `id: ${i + 1}\n`);
          entries.push(e);
          const c = cursors[i % Math.max(1, cursors.length)];
          if (c !== undefined && i % 37 === 0) check(c);
        });
        for (const c of cursors) check(c);
        function check(after: number) {
          const want = referenceReplay(log.lastId, after);
          const got = log.replay(after);
          assert.equal(got.gap, want.gap, `replay after ${after} of ${log.lastId}: gap`);
          assert.deepEqual(got.entries.map((e) => e.id), want.ids, `replay after ${after}`);
          assert.equal(
            log.firstAvailableId,
            log.lastId === 0 ? 0 : Math.max(1, log.lastId - REPLAY + 1),
          );
          replays++;
        }
        // Checked last: a later event never overwrote an earlier one's bytes.
        entries.forEach((e, i) => {
          const ev = events[i];
          assert.equal(dec.decode(e.activated), referenceBody(ev, true), `event ${e.id}`);
          const plain = referenceBody(ev, false);
          assert.equal(e.plain === null ? null : dec.decode(e.plain), plain, `event ${e.id} plain`);
          assert.equal(e.standard, plain !== null);
        });
      },
    ),
  );
  console.log(`property: log: ${runs} cases, ${replays} replays`);
});
