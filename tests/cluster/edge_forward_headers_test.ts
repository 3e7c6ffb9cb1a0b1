/**
 * An edge's callers are outside callers: what it forwards to a capsule's door carries the
 * caller's token and protocol headers, never `x-murmur-task-origin` or `x-murmur-task-trust`
 * (docs/edge.md; src/edge/forward.ts). A door on loopback records what reached it.
 */
import assert from "node:assert/strict";
import { forward } from "../../src/edge/forward.ts";

Deno.test("edge forward: the peer-origin and trust headers a caller adds never reach the door; its token and protocol headers do", async () => {
  const seen: Headers[] = [];
  const door = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(req.headers);
    return new Response('{"jsonrpc":"2.0","id":1,"result":{}}', {
      headers: { "content-type": "application/json" },
    });
  });
  try {
    const url = `http://127.0.0.1:${door.addr.port}`;
    for (const origin of ["peer", "PEER", "completion"]) {
      const req = new Request("http://edge.invalid/sessions/ses_x/", {
        method: "POST",
        headers: {
          authorization: "Bearer mdt1.a.b",
          "a2a-version": "1.0",
          "content-type": "application/json",
          "x-murmur-task-origin": origin,
          "x-murmur-task-trust": "trusted",
        },
      });
      const res = await forward(
        url,
        req,
        { method: "POST", path: "/", body: "{}" },
        () => new Response(null, { status: 502 }),
      );
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    assert.equal(seen.length, 3);
    for (const h of seen) {
      assert.equal(h.get("x-murmur-task-origin"), null);
      assert.equal(h.get("x-murmur-task-trust"), null);
      assert.equal(h.get("authorization"), "Bearer mdt1.a.b");
      assert.equal(h.get("a2a-version"), "1.0");
    }
  } finally {
    await door.shutdown();
  }
});
