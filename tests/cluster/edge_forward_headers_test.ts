/**
 * An edge's callers are outside callers: what it forwards to a capsule's door carries the
 * caller's token and protocol headers, never `x-murmur-task-origin` or `x-murmur-task-trust`
 * (docs/edge.md; src/edge/forward.ts). A door on loopback records what reached it; then a real
 * capsule behind a real edge on Redis takes, through the edge, as an outside caller's task what
 * its own door refuses as a peer's.
 */
import assert from "node:assert/strict";
import { forward } from "../../src/edge/forward.ts";
import { rpc, startCapsule, userMessage } from "../helpers/capsule.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { clusterManifest } from "./fixtures.ts";

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

Deno.test("edge forward: a peer claim made through an edge arrives as an outside caller's task (origin event, fenced); the door itself refuses it", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({
    manifest: clusterManifest(redis.url),
    script: { tasks: [{ turns: [{ steps: [{ text: "hello" }] }] }] },
  });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    const headers = { "x-murmur-task-origin": "peer", "x-murmur-task-trust": "trusted" };
    const direct = await rpc(cap.base, "SendMessage", userMessage("direct"), { headers });
    assert.equal(direct.error, "peer_not_accepted");
    const via = await rpc(at, "SendMessage", {
      ...userMessage("via the edge"),
      configuration: { returnImmediately: true },
    }, { headers });
    const id = via.result?.task?.id;
    assert.ok(id, JSON.stringify(via));
    const start = await until("the task starts", async () => {
      const lines = (await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)).trim()
        .split("\n").map((l) => JSON.parse(l));
      return lines.find((l) => l.event_type === "task_start" && l.task_id === id);
    });
    assert.deepEqual([start.origin, start.lane, start.trust], ["event", "bg", "untrusted"]);
  } finally {
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});
