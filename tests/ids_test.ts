/**
 * Ids (src/ids.ts): a prefix and a UUIDv7 as 32 lowercase hex. The version nibble is 7, the
 * variant bits are 10, the first 48 bits are the creation time in ms, and ids of one process sort
 * in creation order (what `@1` and trace readers rely on).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ID_PATTERN, IdSource, newId, uuidv7Hex } from "../src/ids.ts";

const PREFIXES = ["ses", "tsk", "ctx", "msg"] as const;

Deno.test("ids: ses_/tsk_/ctx_/msg_ + 32 lowercase hex, UUIDv7 version and variant", () => {
  for (const prefix of PREFIXES) {
    for (let i = 0; i < 50; i++) {
      const id = newId(prefix);
      assert.match(id, new RegExp(`^${prefix}_[0-9a-f]{32}$`), id);
      assert.match(id, ID_PATTERN);
      const hex = id.slice(prefix.length + 1);
      assertEquals(hex[12], "7", `version nibble of ${id}`);
      assert.ok("89ab".includes(hex[16]), `variant of ${id}`);
    }
  }
});

Deno.test("ids: the first 48 bits are the creation time in unix ms", () => {
  const before = Date.now();
  const hex = newId("ses").slice(4);
  const after = Date.now();
  const ms = parseInt(hex.slice(0, 12), 16);
  assert.ok(ms >= before && ms <= after + 1, `${ms} not within [${before}, ${after}]`);
});

Deno.test("ids: strictly ascending within one process", () => {
  const ids: string[] = [];
  for (let i = 0; i < 10_000; i++) ids.push(newId(PREFIXES[i % 4]).slice(4));
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i] > ids[i - 1], `id ${i} (${ids[i]}) is not after ${ids[i - 1]}`);
  }
  assertEquals(new Set(ids).size, ids.length);
});

Deno.test("ids: uuidv7Hex takes the clock as a parameter and stays monotonic", () => {
  // Runs last in this file: a future clock value moves the process's monotonic floor forward.
  const t = Date.now() + 60_000;
  const a = uuidv7Hex(t);
  const b = uuidv7Hex(t);
  assertEquals(parseInt(a.slice(0, 12), 16), t);
  assertEquals(parseInt(b.slice(0, 12), 16), t);
  assert.ok(b > a);
  // A clock that goes backwards never produces a smaller id.
  const c = uuidv7Hex(t - 5_000);
  assert.ok(c > b, `${c} after a backwards clock is not after ${b}`);
  assertEquals(a.length, 32);
});

Deno.test("ids: 10 000 ids in one clock millisecond stay ascending across counter overflows", () => {
  const t = Date.now() + 120_000;
  const ids: string[] = [];
  // The 12-bit in-millisecond counter starts below 0x400, so 10 000 ids overflow it at least twice.
  for (let i = 0; i < 10_000; i++) ids.push(uuidv7Hex(t));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `id ${i}`);
  const msSeen = new Set(ids.map((h) => parseInt(h.slice(0, 12), 16)));
  assert.ok(msSeen.has(t) && msSeen.has(t + 1) && msSeen.has(t + 2), [...msSeen].join(","));
});

Deno.test("ids: an IdSource runs on the clock it is given, ascending, apart from other sources", () => {
  let now = 1_700_000_000_000;
  const src = new IdSource(() => now);
  const a = src.next("tsk");
  now -= 10; // a clock that steps back
  const b = src.next("evt");
  now += 1_000;
  const c = src.next("msg");
  assertEquals([a, b, c].map((id) => parseInt(id.slice(4, 16), 16)), [
    1_700_000_000_000,
    1_700_000_000_000,
    1_699_999_999_990 + 1_000,
  ]);
  assert.ok(b.slice(4) > a.slice(4) && c.slice(4) > b.slice(4));
  // Another source on the real clock is not held back by this one's floor.
  const real = new IdSource().next("ses");
  assert.ok(Math.abs(parseInt(real.slice(4, 16), 16) - Date.now()) < 60_000);
});
