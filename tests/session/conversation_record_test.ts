/**
 * The conversation record (src/session/conversation_record.ts): append-only while the history
 * only grows, replaced whole when it was rewritten, a torn last line left out and reported, the
 * older `<ctx>.json` form still read. The property runs random save histories against the
 * simplest reference there is: after every save, loading gives back exactly the messages saved.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  loadConversation,
  recordPath,
  saveConversation,
} from "../../src/session/conversation_record.ts";
import type { ConversationMessage } from "../../src/drivers/types.ts";

const user = (content: string): ConversationMessage => ({ role: "user", content });

async function withDir(fn: (dir: string) => void | Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "mur-conv-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("conversation record: a history that grew is appended to, not rewritten", async () => {
  await withDir((dir) => {
    const messages = [user("a"), user("b")];
    saveConversation(dir, "ctx_grow", messages);
    // Mark the first line on disk (same size, so it reads as the file this process wrote): a save
    // that rewrote the file would lose the mark.
    const path = recordPath(dir, "ctx_grow");
    const [, second] = Deno.readTextFileSync(path).split("\n");
    Deno.writeTextFileSync(path, `${JSON.stringify(user("Z"))}\n${second}\n`);
    messages.push(user("c"), { role: "assistant", text: "d", toolCalls: [] });
    saveConversation(dir, "ctx_grow", messages);
    const lines = Deno.readTextFileSync(path).split("\n");
    assert.equal(lines.length, 5, "four lines and the final newline");
    assert.deepEqual(JSON.parse(lines[0]), user("Z"), "the first lines were left alone");
    assert.deepEqual(loadConversation(dir, "ctx_grow")!.messages.slice(1), messages.slice(1));
  });
});

Deno.test("conversation record: a record removed or cut by someone else is written whole again", async () => {
  await withDir((dir) => {
    const messages = [user("a"), user("b ✓")];
    saveConversation(dir, "ctx_gone", messages);
    Deno.removeSync(recordPath(dir, "ctx_gone"));
    messages.push(user("c"));
    saveConversation(dir, "ctx_gone", messages);
    assert.deepEqual(loadConversation(dir, "ctx_gone"), { messages, torn: null });
    Deno.truncateSync(recordPath(dir, "ctx_gone"), 3);
    messages.push(user("d"));
    saveConversation(dir, "ctx_gone", messages);
    assert.deepEqual(loadConversation(dir, "ctx_gone"), { messages, torn: null });
  });
});

Deno.test("conversation record: a rewritten history (compaction, a seeded prefix) replaces the file", async () => {
  await withDir((dir) => {
    const messages = [user("a"), user("b"), user("c")];
    saveConversation(dir, "ctx_rw", messages);
    messages.splice(0, messages.length, user("SUMMARY"), user("c2"), user("c3"), user("c4"));
    saveConversation(dir, "ctx_rw", messages);
    assert.deepEqual(loadConversation(dir, "ctx_rw"), { messages, torn: null });
    const seeded = [user("seed"), ...messages];
    saveConversation(dir, "ctx_rw", seeded);
    assert.deepEqual(loadConversation(dir, "ctx_rw")!.messages, seeded);
  });
});

Deno.test("conversation record: a torn last line is left out and reported; a bad inner line is no record", async () => {
  await withDir((dir) => {
    saveConversation(dir, "ctx_torn", [user("a"), user("é✓")]);
    const path = recordPath(dir, "ctx_torn");
    Deno.writeTextFileSync(path, '{"role":"user","con', { append: true });
    assert.deepEqual(loadConversation(dir, "ctx_torn"), {
      messages: [user("a"), user("é✓")],
      torn: '{"role":"user","con',
    });
    Deno.writeTextFileSync(path, `${JSON.stringify(user("a"))}\nnot json\n`);
    assert.equal(loadConversation(dir, "ctx_torn"), null);
    assert.equal(loadConversation(dir, "ctx_none"), null);
  });
});

Deno.test("conversation record: an older mur's <ctx>.json is still read", async () => {
  await withDir((dir) => {
    Deno.mkdirSync(`${dir}/conversation`);
    const messages = [user("old"), { role: "assistant", text: "format", toolCalls: [] }];
    Deno.writeTextFileSync(`${dir}/conversation/ctx_old.json`, JSON.stringify({ messages }));
    assert.deepEqual(loadConversation(dir, "ctx_old"), { messages, torn: null });
  });
});

/** One step of a random history: what the loop and compaction do to a context's messages. */
type Step =
  | { kind: "push"; texts: string[] } // turns append messages
  | { kind: "replace"; texts: string[] } // compaction replaces the history in place
  | { kind: "fresh"; seed: string[] } // a new task: a new array, seeds first, then the history
  | { kind: "copy" }; // a new array with the same message objects (threaded history)

const text = fc.string({ unit: "binary", maxLength: 40 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("push" as const),
      texts: fc.array(text, { maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("replace" as const),
      texts: fc.array(text, { maxLength: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("fresh" as const),
      seed: fc.array(text, { maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("copy" as const) }) },
);

Deno.test("conversation record property: after every save, loading gives exactly the messages saved (500 histories)", async () => {
  await withDir((dir) => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        const ctx = `ctx_p${n++}`;
        let messages: ConversationMessage[] = [];
        for (const s of steps) {
          if (s.kind === "push") messages.push(...s.texts.map(user));
          else if (s.kind === "replace") messages.splice(0, messages.length, ...s.texts.map(user));
          else if (s.kind === "fresh") messages = [...s.seed.map(user), ...messages];
          else messages = [...messages];
          saveConversation(dir, ctx, messages);
          assert.deepEqual(loadConversation(dir, ctx), { messages, torn: null });
        }
      }),
      { numRuns: 500 },
    );
  });
});
