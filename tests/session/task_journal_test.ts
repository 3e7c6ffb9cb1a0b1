/**
 * The session folder's task journal (src/session/task_journal.ts) at the registry that writes it:
 * appended (one line per history message, never rewritten as a task goes on), bounded when read
 * back (the newest `history_limit` messages kept, the rest counted in `historyDropped`), a torn
 * last line ignored, and what a resumed registry carries into its own journal reads the same.
 */
import assert from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { Registry } from "../../src/session/registry.ts";
import { journalPath, loadJournal, TaskJournal } from "../../src/session/task_journal.ts";
import { toA2A } from "../../src/session/task_record.ts";

const texts = (t: { history?: { parts: unknown[] }[] }) =>
  (t.history ?? []).map((m) => (m.parts[0] as { text: string }).text);

Deno.test("task journal: appended per message, read back bounded with the drop count, carried whole", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-journal-" });
  try {
    const reg = new Registry(new EventLog(), () => 1_000);
    reg.journal = new TaskJournal(journalPath(dir));
    const t = reg.create({ text: "first", origin: "peer", source: "a2a", trusted: false });
    let before = (await Deno.readTextFile(journalPath(dir))).length;
    for (let i = 0; i < 30; i++) {
      reg.status(t, "TASK_STATE_INPUT_REQUIRED", `question ${i}`);
      reg.userMessage(t, { messageId: `a${i}`, parts: [{ text: `answer ${i}` }] });
      reg.status(t, "TASK_STATE_WORKING", "inference turn 2");
      const now = await Deno.readTextFile(journalPath(dir));
      // Two lines per round (the question, the answer), each appended after what was there.
      assert.equal(now.split("\n").length - 1, 2 + 2 * (i + 1));
      assert.ok(now.length > before);
      before = now.length;
    }
    reg.finish(t, "TASK_STATE_COMPLETED", "done", "the reply");
    const rejected = reg.rejectedAtDoor(
      { text: "no", origin: "peer", source: "a2a", trusted: false },
      "full",
    );
    // A torn last line, as a kill mid-append leaves it.
    await Deno.writeTextFile(journalPath(dir), '{"t":"msg","id":"', { append: true });

    const loaded = loadJournal(dir, 10, "killed")!;
    assert.equal(loaded.torn, '{"t":"msg","id":"');
    assert.deepEqual(loaded.tasks.map((x) => x.id), [t.id]);
    assert.ok(!loaded.tasks.some((x) => x.id === rejected.id));
    const got = toA2A(loaded.tasks[0], true, 2);
    assert.equal(got.status.state, "TASK_STATE_COMPLETED");
    assert.deepEqual(texts(got), ["answer 29", "the reply"]);
    // 1 + 60 + 1 messages, 10 kept.
    assert.equal((got.metadata?.murmur as Record<string, unknown>).historyDropped, 52);
    assert.equal(got.artifacts?.[0].name, "response");

    // A resumed registry answers it and carries it into its own journal, bounded.
    const dir2 = await Deno.makeTempDir({ prefix: "mur-journal-" });
    try {
      const next = new Registry(new EventLog(), () => 2_000);
      next.journal = new TaskJournal(journalPath(dir2));
      next.adoptPast(loaded.tasks);
      assert.deepEqual(toA2A(next.get(t.id)!, true, 2), got);
      assert.equal(next.all().length, 0);
      assert.equal(next.listed().length, 1);
      const again = loadJournal(dir2, 10, "killed")!;
      assert.deepEqual(toA2A(again.tasks[0]), toA2A(loaded.tasks[0]));
      assert.equal(
        (await Deno.readTextFile(journalPath(dir2))).split("\n").length - 1,
        1 + 10 + 1,
      );
    } finally {
      await Deno.remove(dir2, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
