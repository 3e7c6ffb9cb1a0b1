/**
 * Shared framing (wire.ts): seed 000's event form byte for byte, one wire per envelope, and runs
 * of consecutive events handed over as few contiguous parts.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { acquireWire, Chunk, releaseWire } from "../../src/events/wire.ts";
import { appendMany, input, text } from "./helpers.ts";

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

Deno.test("wire: an event's frame is id, the envelope with the request id, the shared body, }\\n\\n", () => {
  const log = new EventLog();
  const e = log.append(input({ n: 1 }));
  const murmur = log.append(input({ n: 2, standard: false }));
  const act = acquireWire(log, "req-7", true);
  const plain = acquireWire(log, 42, false);
  assert.equal(
    text(act.frame(e)!),
    `id: 1\ndata: {"jsonrpc":"2.0","id":"req-7","result":{"kind":"activated","n":1,"taskId":"tsk_a"}}\n\n`,
  );
  assert.equal(
    text(plain.frame(e)!),
    `id: 1\ndata: {"jsonrpc":"2.0","id":42,"result":{"kind":"plain","n":1}}\n\n`,
  );
  assert.equal(plain.frame(murmur), null, "a plain connection does not see a murmur frame");
  assert.ok(act.frame(murmur) !== null);
  const [f1, f2] = [act.frame(e)!, act.frame(e)!];
  assert.ok(f1.buffer === f2.buffer && f1.byteOffset === f2.byteOffset, "framed once, then shared");
  releaseWire(log, act);
  releaseWire(log, plain);
});

Deno.test("wire: one per (request id, activation), dropped when its last connection releases it", () => {
  const log = new EventLog();
  const a = acquireWire(log, 1, true);
  const b = acquireWire(log, 1, true);
  assert.equal(a, b);
  assert.notEqual(acquireWire(log, "1", true), a, 'the string id "1" is another envelope');
  assert.notEqual(acquireWire(log, 1, false), a, "a plain connection frames other bodies");
  assert.notEqual(acquireWire(new EventLog(), 1, true), a, "another session's log");
  releaseWire(log, a);
  assert.equal(acquireWire(log, 1, true), a, "still held by one connection");
  releaseWire(log, a);
  releaseWire(log, a);
  assert.notEqual(acquireWire(log, 1, true), a, "released by all: a new wire");
});

Deno.test("wire: consecutive frames lie back to back, so a run is one part; the bytes are exactly the frames", () => {
  const log = new EventLog();
  const w = acquireWire(log, 1, true);
  const entries = appendMany(log, 2000);
  const frames = entries.map((e) => w.frame(e)!);
  let chunkCount = 0;
  for (let i = 0; i < frames.length; i += 96) {
    const c = new Chunk();
    for (const f of frames.slice(i, i + 96)) c.frame(f);
    const parts = c.take();
    assert.ok(parts.length <= 2, `96 frames in ${parts.length} parts`);
    assertEquals(concat(parts), concat(frames.slice(i, i + 96)));
    chunkCount += parts.length;
  }
  assert.ok(chunkCount < frames.length / 40);
  releaseWire(log, w);
});

Deno.test("wire: small loose bytes are copied together with their neighbours, in order", () => {
  const log = new EventLog();
  const w = acquireWire(log, 1, true);
  const [e1, e2, e3] = appendMany(log, 3);
  const c = new Chunk();
  const lagged = new TextEncoder().encode("data: lagged\n\n");
  const beat = new TextEncoder().encode(":heartbeat\n\n");
  c.frame(w.frame(e1)!);
  c.bytes(lagged);
  c.frame(w.frame(e2)!);
  c.frame(w.frame(e3)!);
  c.bytes(beat);
  const parts = c.take();
  assert.equal(parts.length, 1, "all small: one buffer");
  assertEquals(
    parts[0],
    concat([w.frame(e1)!, lagged, w.frame(e2)!, w.frame(e3)!, beat]),
  );
  releaseWire(log, w);
});

Deno.test("wire: frames of every size up to past the own-buffer threshold are whole, whatever the block holds", () => {
  // Issue 13: a frame larger than the next block but under 16 KiB was written past the block.
  const enc = new TextEncoder();
  const sizes = [0, 10, 900, 1500, 3000, 5000, 7000, 9000, 16_000, 16_400, 17_000, 40];
  // Each size on a fresh wire, after a small frame, and in one sequence that jumps around.
  const sequences = [...sizes.map((n) => [n]), ...sizes.map((n) => [1, n]), [
    7000,
    40,
    15_000,
    0,
    3000,
  ]];
  for (const requestId of ["", "s1", "abcde", "r".repeat(200), 0, 9007199254740991]) {
    const head = `data: {"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":`;
    for (const seq of sequences) {
      const log = new EventLog();
      const w = acquireWire(log, requestId, true);
      for (const size of seq) {
        // Two-byte characters, so frames end on every byte offset parity.
        const payload = "é".repeat(size >> 1) + "x".repeat(size & 1);
        const e = log.append({
          taskId: "t",
          contextId: "c",
          standard: false,
          activated: { p: payload },
          state: "TASK_STATE_WORKING",
          isStatus: false,
        });
        const want = enc.encode(`id: ${e.id}\n${head}${JSON.stringify({ p: payload })}}\n\n`);
        assertEquals(w.frame(e), want, `size ${size} in ${seq}, request id ${requestId}`);
        const c = new Chunk();
        assert.ok(w.into(e, c));
        assertEquals(concat(c.take()), want);
      }
      releaseWire(log, w);
    }
  }
});
