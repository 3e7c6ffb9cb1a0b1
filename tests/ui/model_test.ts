/**
 * The page's model (src/ui/page/model.js) against simple references: every numbered id is
 * counted once, as received or lost, whatever the order, holes and repeats a connection delivers;
 * streamed text is the concatenation of its chunks, cut from the front on a code point boundary
 * when it passes MAX_TEXT; tasks and items stay within their bounds. Each property is also shown
 * to fail on a model with the bug it guards against.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  applyEvent,
  createModel,
  MAX_ITEMS,
  MAX_TASKS,
  MAX_TEXT,
  STREAM_URI,
} from "../../src/ui/page/model.js";

const frame = (taskId: string, f: Record<string, unknown>) => ({
  result: {
    statusUpdate: {
      taskId,
      contextId: "ctx_1",
      status: { state: "TASK_STATE_WORKING" },
      metadata: { [STREAM_URI]: f },
    },
  },
});
const status = (taskId: string, state: string, text: string) => ({
  result: {
    statusUpdate: {
      taskId,
      contextId: "ctx_1",
      status: { state, message: { parts: [{ text }] } },
    },
  },
});

type Apply = typeof applyEvent;

/** Ids as a reconnecting connection may deliver them: ascending runs, repeats, holes. */
const ids = fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 200 });

function accounting(apply: Apply, seq: number[]) {
  const m = createModel();
  for (const id of seq) apply(m, id, frame("tsk_a", { frame: "text", text: "x", final: false }), 0);
  // Reference: the highest id seen; every id up to it is received once or lost.
  let max = 0;
  let received = 0;
  let dup = 0;
  for (const id of seq) {
    if (id <= max) dup++;
    else {
      received++;
      max = id;
    }
  }
  assert.equal(m.lastId, max);
  assert.equal(m.received, received);
  assert.equal(m.duplicates, dup);
  assert.equal(m.received + m.lost, m.lastId);
}

Deno.test("model: every id up to the last is counted once, received or lost", () => {
  fc.assert(fc.property(ids, (seq) => accounting(applyEvent, seq)), { numRuns: 2000 });
});

Deno.test("model: the accounting property catches a model that applies repeats again", () => {
  const noDedupe: Apply = (m, id, data, now) => {
    if (id !== null && id <= m.lastId) {
      m.received++;
      return null;
    }
    return applyEvent(m, id, data, now);
  };
  assert.throws(() => fc.assert(fc.property(ids, (seq) => accounting(noDedupe, seq))));
});

const chunk = fc.string({
  unit: fc.constantFrom("a", "é", "✓", "日", "😀", " ", "\n"),
  minLength: 1,
  maxLength: 3000,
  size: "max",
});

function textBlock(apply: Apply, chunks: string[]) {
  const m = createModel();
  let id = 0;
  for (const c of chunks) {
    apply(m, ++id, frame("tsk_t", { frame: "text", text: c, final: false }), 0);
  }
  apply(m, ++id, frame("tsk_t", { frame: "text", text: "", final: true }), 0);
  const all = chunks.join("");
  const items = m.tasks.get("tsk_t")!.items;
  assert.equal(items.length, 1);
  const item = items[0] as { text: string; cut: number; open: boolean };
  assert.equal(item.open, false);
  assert.equal(item.cut + item.text.length, all.length);
  assert.equal(item.text, all.slice(item.cut));
  assert.ok(item.text.length <= MAX_TEXT);
  const first = item.text.charCodeAt(0);
  assert.ok(!(first >= 0xdc00 && first <= 0xdfff), "never starts with half a surrogate pair");
}

Deno.test("model: streamed text is its chunks joined, its tail kept whole past MAX_TEXT", () => {
  let cut = 0;
  fc.assert(
    fc.property(fc.array(chunk, { minLength: 1, maxLength: 40, size: "max" }), (c) => {
      textBlock(applyEvent, c);
      if (c.join("").length > MAX_TEXT) cut++;
    }),
    { numRuns: 300 },
  );
  assert.ok(cut > 30, `only ${cut} runs passed MAX_TEXT`);
});

Deno.test("model: the text property catches a model that cuts inside a surrogate pair", () => {
  const naive: Apply = (m, id, data, now) => {
    const out = applyEvent(m, id, data, now);
    for (const t of m.tasks.values()) {
      for (const it of t.items) {
        const item = it as { text?: string; cut: number };
        // Re-cut at exactly MAX_TEXT characters, as a careless model would.
        if (item.text !== undefined && item.cut > 0) {
          const whole = item.text;
          const excess = whole.length - (MAX_TEXT - 1);
          if (excess > 0) {
            item.text = whole.slice(excess);
            item.cut += excess;
          }
        }
      }
    }
    return out;
  };
  const emoji = fc.array(fc.constant("😀".repeat(1000)), { minLength: 20, maxLength: 25 });
  assert.throws(() => fc.assert(fc.property(emoji, (c) => textBlock(naive, c))));
});

Deno.test("model: tasks and items stay within their bounds; what falls off is counted", () => {
  const event = fc.oneof(
    fc.record({ task: fc.integer({ min: 0, max: 90 }), kind: fc.constant("text") }),
    fc.record({ task: fc.integer({ min: 0, max: 90 }), kind: fc.constant("tool") }),
    fc.record({ task: fc.integer({ min: 0, max: 90 }), kind: fc.constant("end") }),
  );
  fc.assert(
    fc.property(fc.array(event, { maxLength: 1500 }), (evs) => {
      const m = createModel();
      let id = 0;
      const seen = new Set<string>();
      const pushed = new Map<string, number>();
      for (const e of evs) {
        const t = `tsk_${e.task}`;
        seen.add(t);
        const data = e.kind === "text"
          ? frame(t, { frame: "text", text: "a", final: true })
          : e.kind === "tool"
          ? frame(t, { frame: "tool-call-started", toolCallId: `c${id}`, toolName: "x" })
          : status(t, "TASK_STATE_COMPLETED", "task completed");
        applyEvent(m, ++id, data, 0);
        pushed.set(t, (pushed.get(t) ?? 0) + 1);
      }
      assert.ok(m.tasks.size <= MAX_TASKS);
      assert.equal(m.tasks.size + m.droppedTasks >= Math.min(seen.size, MAX_TASKS), true);
      for (const t of m.tasks.values()) {
        assert.ok(t.items.length <= MAX_ITEMS);
        assert.equal(t.items.length + t.dropped <= pushed.get(t.id)!, true);
      }
    }),
    { numRuns: 200 },
  );
});

Deno.test("model: quota windows merge by name — a later report replaces a window, others stand", () => {
  const m = createModel();
  applyEvent(
    m,
    1,
    frame("tsk_q", {
      frame: "quota",
      windows: [{ name: "five-hour", used: 0.4, state: "ok" }, { name: "seven-day", used: 0.1 }],
    }),
    0,
  );
  applyEvent(
    m,
    2,
    frame("tsk_q", {
      frame: "quota",
      windows: [{ name: "five-hour", used: 0.9, state: "warning", resetsAtMs: 1793491200000 }],
    }),
    0,
  );
  assert.deepEqual([...m.quota.values()], [
    { name: "five-hour", used: 0.9, state: "warning", resetsAtMs: 1793491200000 },
    { name: "seven-day", used: 0.1 },
  ]);
});

Deno.test("model: a status update sets state, turn and prompt; a response artifact is kept", () => {
  const m = createModel();
  applyEvent(m, 1, status("tsk_s", "TASK_STATE_WORKING", "inference turn 3"), 0);
  applyEvent(m, 2, status("tsk_s", "TASK_STATE_INPUT_REQUIRED", "Which one?"), 0);
  let t = m.tasks.get("tsk_s")!;
  assert.equal(t.turn, 3);
  assert.equal(t.prompt, "Which one?");
  applyEvent(m, 3, status("tsk_s", "TASK_STATE_WORKING", "resumed"), 0);
  applyEvent(m, 4, {
    result: {
      artifactUpdate: {
        taskId: "tsk_s",
        contextId: "ctx_1",
        artifact: { artifactId: "response", name: "response", parts: [{ text: "Done ✓" }] },
        lastChunk: true,
      },
    },
  }, 0);
  applyEvent(m, 5, status("tsk_s", "TASK_STATE_COMPLETED", "task completed"), 0);
  t = m.tasks.get("tsk_s")!;
  assert.equal(t.prompt, null);
  assert.equal(t.response, "Done ✓");
  assert.equal(t.state, "TASK_STATE_COMPLETED");
});

Deno.test("published files: raw, url (as a path under the page's own door) and data artifacts become the task's files; response stays the answer", () => {
  const m = createModel();
  const art = (artifact: Record<string, unknown>) => ({
    result: { artifactUpdate: { taskId: "tsk_f", contextId: "ctx_1", artifact, lastChunk: true } },
  });
  applyEvent(
    m,
    1,
    art({
      artifactId: "file-1",
      name: "report.md",
      parts: [{ raw: "IyBoaQ==", mediaType: "text/markdown", filename: "report.md" }],
    }),
    0,
  );
  applyEvent(
    m,
    2,
    art({
      artifactId: "file-2",
      name: "big.bin",
      parts: [{ url: "http://localhost:9/files/tsk_f/file-2", filename: "big.bin" }],
    }),
    0,
  );
  applyEvent(
    m,
    3,
    art({
      artifactId: "data-3",
      name: "stats",
      parts: [{ data: { rows: 3 }, mediaType: "application/json" }],
    }),
    0,
  );
  applyEvent(m, 4, art({ artifactId: "response", name: "response", parts: [{ text: "done" }] }), 0);
  const t = m.tasks.get("tsk_f")!;
  assert.equal(t.response, "done");
  assert.deepEqual(t.files, [
    { name: "report.md", mediaType: "text/markdown", raw: "IyBoaQ==", path: null, data: null },
    {
      name: "big.bin",
      mediaType: "application/octet-stream",
      raw: null,
      path: "files/tsk_f/file-2",
      data: null,
    },
    { name: "stats", mediaType: "application/json", raw: null, path: null, data: { rows: 3 } },
  ]);
});

Deno.test("model: an input-required status with an approval data part is the task's approval until the task works again; a steer-taken frame is a line", () => {
  const m = createModel();
  const detail = {
    kind: "approval",
    tool: "bash",
    source: "shell",
    arguments: { command: "git push origin main" },
    argumentsHash: "sha256:" + "0".repeat(64),
    reason: "approvals.tools.bash",
  };
  applyEvent(m, 1, {
    result: {
      statusUpdate: {
        taskId: "tsk_a",
        contextId: "ctx_1",
        status: {
          state: "TASK_STATE_INPUT_REQUIRED",
          message: { parts: [{ text: "approve bash: git push origin main?" }, { data: detail }] },
        },
      },
    },
  }, 0);
  const t = m.tasks.get("tsk_a")!;
  assert.deepEqual(t.approval, detail);
  assert.equal(t.prompt, "approve bash: git push origin main?");
  applyEvent(m, 2, status("tsk_a", "TASK_STATE_WORKING", "resumed"), 0);
  assert.equal(t.approval, null);
  // A question (no data part) is no approval.
  applyEvent(m, 3, status("tsk_a", "TASK_STATE_INPUT_REQUIRED", "Which branch?"), 0);
  assert.equal(t.approval, null);
  applyEvent(m, 4, frame("tsk_a", { frame: "steer-taken", messageId: "m1", turn: 3 }), 0);
  const lastItem = t.items.at(-1) as { kind: string; text: string };
  assert.deepEqual([lastItem.kind, lastItem.text], ["status", "steer read before turn 3"]);
});
