/**
 * The page's SSE parser (src/ui/page/sse.js) against `eventsource-parser`, the parser `mur watch`
 * uses, as the reference: for any stream of SSE lines (every line ending, comments, unknown
 * fields, multi-line data, multi-byte text) cut into any chunks, both report the same events,
 * comments and retries. A parser that ignores CR line endings is caught by the same property.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createParser } from "eventsource-parser";
import { createSseParser } from "../../src/ui/page/sse.js";

type Out = (string | { id?: string; event?: string; data: string } | number)[];

function reference(chunks: string[]): Out {
  const out: Out = [];
  const p = createParser({
    onEvent: (e) => out.push({ id: e.id, event: e.event, data: e.data }),
    onComment: (c) => out.push(`comment:${c}`),
    onRetry: (ms) => out.push(ms),
  });
  for (const c of chunks) p.feed(c);
  return out;
}

function ours(chunks: string[], make = createSseParser): Out {
  const out: Out = [];
  const p = make({
    onEvent: (e) => out.push({ id: e.id, event: e.event, data: e.data }),
    onComment: (c) => out.push(`comment:${c}`),
    onRetry: (ms) => out.push(ms),
  });
  for (const c of chunks) p.feed(c);
  return out;
}

// Text that includes the characters that matter to the grammar and multi-byte ones.
const text = fc.string({
  unit: fc.constantFrom("a", "b", " ", ":", "é", "✓", "日", "😀", "\0", "1", "{", '"'),
  maxLength: 12,
});
const field = fc.constantFrom("data", "id", "event", "retry", "other", "dat", "");
const line = fc.oneof(
  fc.tuple(field, fc.constantFrom(":", ": ", ":  ", ""), text).map(([f, s, v]) =>
    s === "" ? f : `${f}${s}${v}`
  ),
  text.map((t) => `:${t}`),
  fc.integer({ min: 0, max: 99999 }).map((n) => `retry: ${n}`),
  fc.constant(""),
);
const eol = fc.constantFrom("\n", "\r\n", "\r");
const stream = fc.array(fc.tuple(line, eol).map(([l, e]) => l + e), { maxLength: 30 })
  .map((ls) => ls.join(""));

/** A stream and a cut of it into chunks (cuts anywhere, also inside a surrogate pair's text). */
const cutStream = stream.chain((s) =>
  fc.uniqueArray(fc.integer({ min: 0, max: s.length }), { maxLength: 8 }).map((cuts) => {
    const at = [0, ...cuts.sort((a, b) => a - b), s.length];
    const chunks = [];
    for (let i = 1; i < at.length; i++) chunks.push(s.slice(at[i - 1], at[i]));
    // A final blank line settles what both still hold (eventsource-parser waits for the next
    // line ending after a lone CR before it reads on; this parser does not need to).
    return [...chunks, "\n\n"];
  })
);

Deno.test("sse: same events, comments and retries as eventsource-parser, however the stream is cut", () => {
  fc.assert(
    fc.property(cutStream, (chunks) => {
      assert.deepEqual(ours(chunks), reference(chunks));
    }),
    { numRuns: 3000 },
  );
});

Deno.test("sse: cutting the stream never changes what is read", () => {
  fc.assert(
    fc.property(cutStream, (chunks) => {
      assert.deepEqual(ours(chunks), ours([chunks.join("")]));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("sse: the property catches a parser that reads CR as no line ending", () => {
  const crBlind = (on: Parameters<typeof createSseParser>[0]) => {
    const p = createSseParser(on);
    return { feed: (c: string) => p.feed(c.replace(/\r(?!\n)/g, "")), reset: p.reset };
  };
  assert.throws(() =>
    fc.assert(
      fc.property(cutStream, (chunks) => {
        assert.deepEqual(ours(chunks, crBlind), reference(chunks));
      }),
      { numRuns: 3000 },
    )
  );
});

Deno.test("sse: mur's own frames — id, one data line, heartbeat comments", () => {
  const wire = 'id: 7\ndata: {"a":"✓"}\n\n:heartbeat\n\ndata: {"b":1}\n\n';
  assert.deepEqual(ours([wire]), [
    { id: "7", event: undefined, data: '{"a":"✓"}' },
    "comment:heartbeat",
    { id: undefined, event: undefined, data: '{"b":1}' },
  ]);
});
