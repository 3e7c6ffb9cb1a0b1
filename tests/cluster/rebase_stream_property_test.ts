/**
 * The edge's byte rewrite of forwarded answers (src/edge/rebase_stream.ts) against a simple
 * reference, `replaceAll` on the whole text: for any text of SSE-like events (multi-byte text,
 * the capsule's files prefix, pieces of it, near misses) cut into chunks anywhere (inside a
 * multi-byte character or the prefix too), the bytes out are the reference's; and nothing is held
 * back at an event's end: once a chunk ending in a blank line went in, everything before it is out.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Rebaser, rebaseStream } from "../../src/edge/rebase_stream.ts";
import { checkAsyncProperty } from "../helpers/property.ts";

const FROM = "http://127.0.0.1:4711/files/";
const TO = "http://edge.example:8080/sessions/ses_1/files/";
const enc = new TextEncoder();
const dec = new TextDecoder();

const piece = fc.oneof(
  fc.constant(FROM),
  fc.constant(FROM.slice(0, 9)),
  fc.constant("http://127.0.0.1:4711/filez/"),
  fc.constant("h"),
  fc.constant("\n\n"),
  fc.constant("é✓"),
  fc.string({ maxLength: 12 }),
);

/** Pushes `chunks` through a Rebaser, told after each chunk that ends an event; the output. */
function run(chunks: Uint8Array[], atEventEnd: (sent: number, out: string) => void): string {
  const r = new Rebaser(FROM, TO);
  const out: Uint8Array[] = [];
  let sent = 0;
  for (const c of chunks) {
    out.push(...r.push(c));
    sent += c.length;
    if (c.length >= 2 && c[c.length - 1] === 0x0a && c[c.length - 2] === 0x0a) {
      atEventEnd(sent, dec.decode(concat(out)));
    }
  }
  out.push(...r.end());
  return dec.decode(concat(out));
}

function concat(parts: Uint8Array[]): Uint8Array {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

Deno.test("rebase stream: the reference's bytes for any chunking, nothing held at an event's end", async () => {
  await checkAsyncProperty(
    { name: "rebase stream", numRuns: 500 },
    fc.asyncProperty(
      fc.array(piece, { maxLength: 40 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      async (pieces, cuts) => {
        const text = pieces.join("") + "\n\n";
        const bytes = enc.encode(text);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let at = 0;
        for (const p of [...points, bytes.length]) {
          if (p > at) chunks.push(bytes.subarray(at, p));
          at = Math.max(at, p);
        }
        const out = run(chunks, (sent, got) => {
          const before = dec.decode(bytes.subarray(0, sent));
          assert.equal(got, before.replaceAll(FROM, TO));
        });
        assert.equal(out, text.replaceAll(FROM, TO));
        // The TransformStream around it: the same bytes.
        const streamed = new Response(
          ReadableStream.from(chunks).pipeThrough(rebaseStream(FROM, TO)),
        );
        assert.equal(await streamed.text(), text.replaceAll(FROM, TO));
      },
    ),
  );
});
