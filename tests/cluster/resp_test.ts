/**
 * The RESP2 reader (src/cluster/resp.ts) takes replies cut anywhere: every reply of a sample,
 * fed byte by byte and in one piece, reads the same; commands encode as arrays of bulk strings.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { encodeCommand, RedisReplyError, ReplyReader } from "../../src/cluster/resp.ts";

const enc = new TextEncoder();
const WIRE = "+OK\r\n-ERR no\r\n:42\r\n$4\r\nhé!\r\n$-1\r\n*-1\r\n" +
  "*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$2\r\n{}\r\n:7\r\n*0\r\n";

function readAll(chunks: Uint8Array[]) {
  const r = new ReplyReader();
  const out = [];
  for (const c of chunks) {
    r.push(c);
    for (let v = r.next(); v !== undefined; v = r.next()) out.push(v.value);
  }
  return out;
}

Deno.test("resp: replies cut at every byte read as the whole", () => {
  const bytes = enc.encode(WIRE);
  const whole = readAll([bytes]);
  const byByte = readAll([...bytes].map((b) => new Uint8Array([b])));
  assertEquals(byByte, whole);
  assertEquals(whole.length, 8);
  assertEquals(whole[0], "OK");
  assert(whole[1] instanceof RedisReplyError && whole[1].message === "ERR no");
  assertEquals(whole.slice(2), [42, "hé!", null, null, [["1-0", ["a", "{}"]], 7], []]);
});

Deno.test("resp: a command is an array of bulk strings, byte lengths for UTF-8", () => {
  assertEquals(
    new TextDecoder().decode(encodeCommand(["SET", "k", "é", 5])),
    "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n$1\r\n5\r\n",
  );
});
