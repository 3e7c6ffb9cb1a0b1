/**
 * src/http/chunked.ts against a reference that decodes a whole chunked message at once (below,
 * readable at a glance): any body, cut into any chunks (with extensions and trailer fields), handed
 * to the decoder in any split of the wire, comes out byte for byte; the bytes after the message
 * are never data. And a broken coding is refused wherever it is split.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ChunkedDecoder, ChunkedError } from "../../src/http/chunked.ts";
import { checkProperty } from "../helpers/property.ts";

const enc = new TextEncoder();

/** The reference: parse the whole message (size line, data, CRLF … 0, trailers, blank line). */
function referenceDecode(wire: Uint8Array): Uint8Array {
  const text = new TextDecoder("latin1").decode(wire);
  const out: number[] = [];
  let i = 0;
  for (;;) {
    const eol = text.indexOf("\r\n", i);
    const size = parseInt(text.slice(i, eol).split(";")[0], 16);
    i = eol + 2;
    if (size === 0) break;
    for (let k = 0; k < size; k++) out.push(wire[i + k]);
    i += size + 2;
  }
  return new Uint8Array(out);
}

function encode(body: Uint8Array, cuts: number[], ext: boolean, trailers: string[]): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  const ends = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
  for (const end of [...ends, body.length]) {
    if (end <= at) continue;
    parts.push(enc.encode(`${(end - at).toString(16)}${ext ? ";x=1" : ""}\r\n`));
    parts.push(body.subarray(at, end), enc.encode("\r\n"));
    at = end;
  }
  parts.push(enc.encode(`0\r\n${trailers.map((t) => `${t}\r\n`).join("")}\r\n`));
  const wire = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) wire.set(p, (o += p.length) - p.length);
  return wire;
}

function splitAt(wire: Uint8Array, splits: number[]): Uint8Array[] {
  const pts = [...new Set(splits.map((s) => s % (wire.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of [...pts, wire.length]) {
    out.push(wire.slice(at, p));
    at = p;
  }
  return out;
}

function decodeAll(pieces: Uint8Array[]): { data: Uint8Array; done: boolean } {
  const d = new ChunkedDecoder();
  const out: number[] = [];
  for (const p of pieces) for (const part of d.push(p)) out.push(...part);
  return { data: new Uint8Array(out), done: d.done };
}

// Multi-byte text and raw bytes (CR and LF inside data must be data).
const body = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 300 }).map((s) => enc.encode(s)),
  fc.uint8Array({ maxLength: 3000 }),
  fc.constantFrom(enc.encode("\r\n\r\n0\r\n\r\n"), enc.encode("🧪".repeat(100)), new Uint8Array(0)),
);

Deno.test("property: the chunked decoder returns the body the reference reads, however the wire is split", () => {
  checkProperty(
    { name: "chunked decoder", numRuns: 500 },
    fc.property(
      body,
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.boolean(),
      fc.array(fc.constantFrom("x-t: 1", "digest: abc"), { maxLength: 2 }),
      fc.array(fc.nat(), { maxLength: 40 }),
      fc.uint8Array({ maxLength: 20 }),
      (b, cuts, ext, trailers, splits, after) => {
        const wire = encode(b, cuts, ext, trailers);
        assert.deepEqual(referenceDecode(wire), b, "the reference reads the encoding");
        const withAfter = new Uint8Array(wire.length + after.length);
        withAfter.set(wire);
        withAfter.set(after, wire.length);
        const got = decodeAll(splitAt(withAfter, splits));
        assert.equal(got.done, true);
        assert.deepEqual(got.data, referenceDecode(wire));
      },
    ),
  );
});

Deno.test("property: a message cut short is not done, and what came out is a prefix of the body", () => {
  checkProperty(
    { name: "chunked decoder, cut short", numRuns: 300 },
    fc.property(body, fc.array(fc.nat(), { maxLength: 8 }), fc.nat(), (b, cuts, cut) => {
      const wire = encode(b, cuts, false, []);
      const short = wire.subarray(0, cut % wire.length);
      const got = decodeAll([short]);
      assert.equal(got.done, false);
      assert.deepEqual(got.data, b.subarray(0, got.data.length));
    }),
  );
});

Deno.test("a broken coding is refused, split anywhere", () => {
  for (
    const bad of [
      "zz\r\nabc\r\n0\r\n\r\n", // size not hex
      "3\r\nabcX\r\n0\r\n\r\n", // data not followed by CRLF
      "\r\n", // empty size line
      `${"1".repeat(5000)}\r\n`, // size line too long
    ]
  ) {
    const wire = enc.encode(bad);
    for (let s = 0; s <= wire.length; s++) {
      assert.throws(() => decodeAll([wire.subarray(0, s), wire.subarray(s)]), ChunkedError, bad);
    }
  }
});
