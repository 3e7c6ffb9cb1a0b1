/**
 * A JSON-RPC body cut before its declared Content-Length (the client half-closes after part of
 * it): the door reads a declared body whole in one call (src/door/body.ts), and a cut one is
 * answered 400, nothing is submitted, and the next request is served as before.
 */
import assert from "node:assert/strict";
import { call, capsule, list, portOf, rpcBody } from "./helpers.ts";

Deno.test("door: a body cut before its Content-Length is a 400, and nothing changes", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
  });
  try {
    const before = JSON.stringify(await list(cap.base));
    const body = new TextEncoder().encode(
      rpcBody("SendMessage", {
        message: { messageId: "m-cut", role: "ROLE_USER", parts: [{ text: "hi" }] },
      }),
    );
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: portOf(cap) });
    try {
      const head = [
        "POST / HTTP/1.1",
        `host: 127.0.0.1:${portOf(cap)}`,
        "content-type: application/json",
        "a2a-version: 1.0",
        `content-length: ${body.length}`,
        "",
        "",
      ].join("\r\n");
      await conn.write(new TextEncoder().encode(head));
      // Half the body, then the client's end of the connection closes.
      await conn.write(body.subarray(0, body.length >> 1));
      await conn.closeWrite();
      const buf = new Uint8Array(4096);
      let text = "";
      for (let i = 0; i < 100; i++) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
        if (text.includes("\r\n\r\n")) break;
      }
      assert.match(text, /^HTTP\/1\.1 400 /, text.slice(0, 200) || "no answer");
    } finally {
      conn.close();
    }
    assert.equal(JSON.stringify(await list(cap.base)), before, "a cut body changed state");
    const ok = await call(cap.base, "ListTasks", {});
    assert.ok(ok.json?.result, ok.text);
  } finally {
    await cap.close();
  }
});
