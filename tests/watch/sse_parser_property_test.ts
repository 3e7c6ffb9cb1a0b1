/**
 * src/watch/sse_parser.ts against eventsource-parser (the parser `mur watch` used before, kept as
 * the reference): for any stream of SSE lines — data (multi-byte text, empty, split over several
 * lines), ids (some holding a NUL), comments with and without their space, fields without a colon,
 * `event`, `retry` and unknown fields, blank lines — ended by LF, CRLF or CR in any mix, with or
 * without a last event left unterminated, cut into chunks anywhere (a CRLF split between two), both
 * report the same events and comments in the same order.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createParser } from "eventsource-parser";
import { SseParser } from "../../src/watch/sse_parser.ts";

type Out = ["event", string | undefined, string] | ["comment", string];

function mine(chunks: string[]): Out[] {
  const out: Out[] = [];
  const p = new SseParser({
    event: (id, data) => out.push(["event", id, data]),
    comment: (c) => out.push(["comment", c]),
  });
  for (const c of chunks) p.feed(c);
  return out;
}

function reference(chunks: string[]): Out[] {
  const out: Out[] = [];
  const p = createParser({
    onEvent: (m) => out.push(["event", m.id, m.data]),
    onComment: (c) => out.push(["comment", c]),
  });
  for (const c of chunks) p.feed(c);
  return out;
}

// Text without line breaks: ASCII, multi-byte, astral, colons and spaces where they matter.
const text = fc.string({
  unit: fc.constantFrom("a", "b", " ", ":", "é", "日", "🎉", "{", "}", '"', "\0"),
  maxLength: 12,
});
const line = fc.oneof(
  text.map((t) => `data:${t}`),
  text.map((t) => `data: ${t}`),
  fc.constant("data"),
  text.map((t) => `id: ${t}`),
  text.map((t) => `id:${t}`),
  text.map((t) => `:${t}`),
  text.map((t) => `: ${t}`),
  text.map((t) => `event: ${t}`),
  fc.constant("retry: 100"),
  text.map((t) => `x-field: ${t}`),
  fc.constant(""),
  fc.constant(""),
);
const eol = fc.constantFrom("\n", "\r\n", "\r");
const stream = fc.tuple(
  fc.array(fc.tuple(line, eol), { maxLength: 40 }),
  fc.boolean(),
  fc.array(fc.nat(), { maxLength: 8 }),
).map(([lines, bom, cuts]) => {
  const all = (bom ? "\u00ef\u00bb\u00bf" : "") + lines.map(([l, e]) => l + e).join("");
  const at = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const c of at) {
    chunks.push(all.slice(from, c));
    from = c;
  }
  chunks.push(all.slice(from));
  return chunks;
});

Deno.test("sse parser property: the same events and comments as eventsource-parser", () => {
  fc.assert(
    fc.property(stream, (chunks) => {
      assert.deepEqual(mine(chunks), reference(chunks));
    }),
    { numRuns: 3000 },
  );
});

Deno.test("sse parser: a CRLF split between chunks is one line end; an unended event is not told", () => {
  assert.deepEqual(mine(["id: 7\r", "\ndata: a\r\n", "\r", "\ndata: b"]), [["event", "7", "a"]]);
  assert.deepEqual(mine([":heartbeat\n\n"]), [["comment", "heartbeat"]]);
});
