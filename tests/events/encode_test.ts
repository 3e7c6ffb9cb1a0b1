/**
 * The log encodes events into shared blocks: every entry's bytes stay exactly its JSON, across
 * block boundaries, for multi-byte text and for events too large for a block.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog, type LogEntry } from "../../src/events/log.ts";
import { input, text } from "./helpers.ts";

Deno.test("log encoding: exact UTF-8 of every event and id line, across blocks, multi-byte and large", () => {
  const log = new EventLog();
  const samples = [
    "tick ",
    "héllo wörld ",
    "日本語のテキスト",
    "emoji 🎉🚀 ",
    "x".repeat(7000),
    "ü".repeat(9000),
  ];
  const want: { id: number; activated: string; plain: string }[] = [];
  const entries: LogEntry[] = [];
  for (let i = 0; i < 3000; i++) {
    const inp = input({ n: i });
    const payload = samples[i % samples.length];
    (inp.activated as Record<string, unknown>).text = payload;
    (inp.plain as Record<string, unknown>).text = payload + "!";
    entries.push(log.append(inp));
    want.push({
      id: i + 1,
      activated: JSON.stringify(inp.activated),
      plain: JSON.stringify(inp.plain),
    });
  }
  // Checked after every append is done: a later event never overwrites an earlier one's bytes.
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    assertEquals(text(e.idLine), `id: ${want[i].id}\n`);
    assertEquals(text(e.activated), want[i].activated);
    assertEquals(text(e.plain!), want[i].plain);
  }
});
