/**
 * The trace writer (src/trace_writer.ts) takes only the lines src/trace_events.ts names, and
 * writes each envelope first, then the fields in the caller's order (docs/running.md "Files": trace.jsonl).
 */
import assert from "node:assert/strict";
import { IdSource } from "../../src/ids.ts";
import { traceLine, TraceWriter } from "../../src/trace_writer.ts";

Deno.test("trace writer: envelope first, then the fields in order; ids parent later lines", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/trace.jsonl`;
    let now = 1_000;
    const clock = () => now++;
    const w = new TraceWriter(path, "ses_x", () => {}, clock, new IdSource(clock));
    const start = w.write("task_start", "evt_session", {
      task_id: "task_1",
      context_id: "ctx_1",
      source: "a2a",
      origin: "user",
      trust: "trusted",
      lane: "user",
      message_parts_bytes: 5,
    });
    w.write("keep_working", start, { task_id: "task_1", turn: 0, nudge_number: 1, limit: 2 });
    w.close();
    const lines = Deno.readTextFileSync(path).trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 2);
    assert.deepEqual(Object.keys(lines[0]), [
      "event_type",
      "event_id",
      "parent_id",
      "session_id",
      "timestamp",
      "task_id",
      "context_id",
      "source",
      "origin",
      "trust",
      "lane",
      "message_parts_bytes",
    ]);
    assert.equal(lines[0].event_id, start);
    assert.equal(lines[1].parent_id, start);
    assert.equal(lines[1].event_type, "keep_working");
    assert.equal(lines[1].session_id, "ses_x");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("trace writer: a line type or a field src/trace_events.ts does not name is a type error", () => {
  const envelope = { event_id: "evt_1", parent_id: null, session_id: "ses_x", timestamp: 1 };
  // The compiler is the check: `deno check` fails if any of these is accepted.
  // @ts-expect-error: not a trace line
  traceLine("tool_called", envelope, {});
  // @ts-expect-error: keep_working has no `nudges` field (it is `nudge_number`)
  traceLine("keep_working", envelope, { task_id: "t", turn: 0, nudges: 1, limit: 2 });
  // @ts-expect-error: task_end without its counters
  traceLine("task_end", envelope, { task_id: "t" });
  const ok = traceLine("harness_note", envelope, { task_id: "t", text: "hi" });
  assert.deepEqual(JSON.parse(ok), {
    event_type: "harness_note",
    ...envelope,
    task_id: "t",
    text: "hi",
  });
});

Deno.test("trace writer: an observer hears each line after it is written; one that throws is dropped, the trace goes on", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/trace.jsonl`;
    let now = 5_000;
    const clock = () => now++;
    const w = new TraceWriter(path, "ses_o", () => {}, clock, new IdSource(clock));
    const heard: unknown[] = [];
    const errors: unknown[] = [];
    w.observe((line) => {
      heard.push(line);
      if (heard.length === 2) throw new Error("observer bug");
    }, (e) => errors.push(e));
    const a = w.write("keep_working", null, { task_id: "t", turn: 0, nudge_number: 1, limit: 2 });
    w.write("keep_working", a, { task_id: "t", turn: 1, nudge_number: 2, limit: 2 });
    w.write("keep_working", a, { task_id: "t", turn: 2, nudge_number: 3, limit: 3 });
    w.close();
    const lines = Deno.readTextFileSync(path).trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 3, "every line written");
    assert.deepEqual(heard, lines.slice(0, 2), "the observer got the lines as written");
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /observer bug/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
