/**
 * Properties of the shared framing (wire.ts, issue 13): whatever the events (0 B–200 KiB,
 * multi-byte UTF-8 at the edges), the request ids (every length, strings and integers) and the
 * order connections ask for frames in (new ones, recent ones, ones long forgotten), every frame a
 * wire hands out is the reference framer's bytes, and stays so after any number of later frames
 * (a block is never written twice); a Chunk hands the socket exactly the bytes it was given, with
 * no two small parts side by side.
 */
import fc from "fast-check";
import assert from "node:assert/strict";
import { EventLog, type LogEntry } from "../../src/events/log.ts";
import { acquireWire, Chunk, releaseWire, type Wire } from "../../src/events/wire.ts";
import { checkProperty } from "../helpers/property.ts";
import { plainSessions, requestId } from "./arbitraries.ts";
import { inputOf, referenceBody, referenceEvent } from "./reference.ts";

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const wireSpec = fc.record({ requestId, activated: fc.boolean() });
/** Which wire asks, and for which event: 0 the newest, else one that many back (up to 600). */
const ask = fc.record({
  wire: fc.nat(),
  back: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.nat({ max: 600 })),
  run: fc.nat({ max: 12 }),
});

Deno.test("wire property: every frame handed out is the reference's bytes, and stays so", () => {
  let frames = 0;
  const runs = checkProperty(
    { name: "wire property", numRuns: 500 },
    fc.property(
      plainSessions,
      fc.array(wireSpec, { minLength: 1, maxLength: 4 }),
      fc.array(ask, { maxLength: 400 }),
      (s, specs, asks) => {
        const log = new EventLog();
        const wires: Wire[] = specs.map((w) => acquireWire(log, w.requestId, w.activated));
        const entries: LogEntry[] = [];
        const handed: { w: number; id: number; bytes: Uint8Array }[] = [];
        s.events.forEach((ev, i) => {
          entries.push(log.append(inputOf(ev)));
          const a = asks[i % Math.max(1, asks.length)];
          if (!a) return;
          const w = a.wire % wires.length;
          const id = Math.max(1, entries.length - a.back);
          const f = wires[w].frame(entries[id - 1]);
          if (f) handed.push({ w, id, bytes: f });
          // A run of consecutive events into one chunk, as a connection's write collects them.
          const c = new Chunk();
          const want: string[] = [];
          for (let k = id; k <= Math.min(entries.length, id + a.run); k++) {
            if (wires[w].into(entries[k - 1], c)) {
              want.push(expect(specs[w], s.events[k - 1], k)!);
            }
          }
          assert.equal(dec.decode(concat(c.take())), want.join(""), "a chunk of a run");
        });
        for (const h of handed) {
          const want = expect(specs[h.w], s.events[h.id - 1], h.id);
          assert.equal(dec.decode(h.bytes), want, `frame ${h.id} on wire ${h.w}`);
        }
        // Every wire frames every event; plain wires none of the murmur frames.
        wires.forEach((w, k) => {
          entries.forEach((e, i) => {
            const f = w.frame(e);
            const want = expect(specs[k], s.events[i], e.id);
            assert.equal(f === null ? null : dec.decode(f), want, `event ${e.id}`);
          });
        });
        frames += handed.length;
        for (const w of wires) releaseWire(log, w);
      },
    ),
  );
  console.log(`property: wire: ${runs} cases, ${frames} frames kept and checked at the end`);
});

function expect(
  w: { requestId: string | number; activated: boolean },
  ev: Parameters<typeof referenceBody>[0],
  id: number,
): string | null {
  const body = referenceBody(ev, w.activated);
  return body === null ? null : referenceEvent(id, w.requestId, body);
}

/** What a connection puts in a chunk: runs of a buffer (frames), or loose bytes of its own. */
const chunkOp = fc.oneof(
  fc.record({
    k: fc.constant("span" as const),
    buf: fc.nat({ max: 2 }),
    len: fc.nat({ max: 9000 }),
  }),
  fc.record({ k: fc.constant("bytes" as const), len: fc.nat({ max: 9000 }) }),
);

Deno.test("chunk property: take() hands over exactly the bytes given, in order, small parts merged", () => {
  const runs = checkProperty(
    { name: "chunk property", numRuns: 500 },
    fc.property(fc.array(chunkOp, { maxLength: 60 }), fc.nat({ max: 3 }), (ops, takeEvery) => {
      // Three buffers written back to back, as a wire's blocks are; spans continue where the
      // last span of the same buffer ended, or skip ahead (another connection's frames).
      const bufs = [0, 1, 2].map((b) => enc.encode(`${b}`.repeat(64 * 1024)));
      bufs.forEach((b, k) => b.forEach((_, i) => b[i] = (i * 7 + k * 13) & 0xff));
      const at = [0, 0, 0];
      const c = new Chunk();
      let want: Uint8Array[] = [];
      let got: Uint8Array[] = [];
      ops.forEach((op, i) => {
        if (op.k === "span") {
          const b = bufs[op.buf];
          const len = Math.min(op.len, b.byteLength - at[op.buf]);
          if (i % 3 === 0) at[op.buf] = Math.min(at[op.buf] + 5, b.byteLength - len);
          c.span(b.buffer, at[op.buf], len);
          want.push(b.subarray(at[op.buf], at[op.buf] + len));
          at[op.buf] += len;
        } else {
          const b = new Uint8Array(op.len).map((_, j) => (j + i) & 0xff);
          c.bytes(b);
          want.push(b);
        }
        if (takeEvery > 0 && i % (takeEvery * 7) === 0) check();
      });
      check();
      function check() {
        const size = c.size;
        const parts = c.take();
        assert.equal(c.size, 0);
        assert.equal(parts.reduce((n, p) => n + p.byteLength, 0), size, "size counts every byte");
        for (let k = 1; k < parts.length; k++) {
          assert.ok(
            parts[k - 1].byteLength >= 4096 || parts[k].byteLength >= 4096,
            `parts ${k - 1} and ${k} are both small (${parts[k - 1].byteLength}, ${
              parts[k].byteLength
            })`,
          );
        }
        got = got.concat(parts);
        assert.deepEqual(concat(got), concat(want));
        got = [];
        want = [];
      }
    }),
  );
  console.log(`property: chunk: ${runs} cases`);
});
