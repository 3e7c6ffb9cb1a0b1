/**
 * The door's page routes over plain HTTP: `GET /ui` and `GET /` for a browser serve the page
 * with its security headers and ETag; every page file is served with its media type; `GET /`
 * without `text/html`, `POST /` and the card are exactly as before; `/ui/status` answers the
 * caller's scopes, the tokens spent, and the lanes of the tasks it names.
 */
import assert from "node:assert/strict";
import { REQUEST_CHARS } from "../../src/ui/routes.ts";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { PAGE_FILES } from "../../src/ui/assets.ts";
import { OPERATOR_METHODS } from "../helpers/methods.ts";

Deno.test("page routes: files, headers, ETag; JSON-RPC and the card unchanged; /ui/status", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "routes",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: {
      tasks: [{
        turns: [{ steps: [{ text: "hi" }, { usage: { input_tokens: 7, output_tokens: 3 } }] }],
      }],
    },
  });
  try {
    const page = await fetch(`${cap.base}/`, { headers: { accept: "text/html,*/*;q=0.8" } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(
      page.headers.get("content-security-policy")!,
      /default-src 'none'; script-src 'self'/,
    );
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    const etag = page.headers.get("etag")!;
    const html = await page.text();
    assert.equal(await (await fetch(`${cap.base}/ui`)).text(), html);
    const again = await fetch(`${cap.base}/ui`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    await again.body?.cancel();
    for (const [name, type] of Object.entries(PAGE_FILES)) {
      const r = await fetch(`${cap.base}/ui/${name}`);
      assert.equal(r.status, 200, name);
      assert.equal(r.headers.get("content-type"), type, name);
      assert.ok((await r.arrayBuffer()).byteLength > 0, name);
    }
    for (const path of ["/ui/nope.js", "/ui/../deno.json", "/ui/sub/app.js"]) {
      const r = await fetch(`${cap.base}${path}`);
      assert.equal(r.status, 404, path);
      await r.body?.cancel();
    }
    // Everything that is not the page answers as before.
    const plain = await fetch(`${cap.base}/`);
    assert.equal(plain.status, 404);
    await plain.body?.cancel();
    const card = await fetch(`${cap.base}/.well-known/agent-card.json`, {
      headers: { accept: "text/html" },
    });
    assert.equal(card.headers.get("content-type"), "application/json");
    assert.equal((await card.json()).name, "routes");
    const rpc = await cap.rpc("SendMessage", userMessage("hello"));
    const task = (rpc.result as { task: { id: string; status: { state: string } } }).task;
    assert.equal(task.status.state, "TASK_STATE_COMPLETED");
    const post = await fetch(`${cap.base}/ui/status`, { method: "POST" });
    assert.equal(post.status, 405);
    await post.body?.cancel();

    const status = await (await fetch(`${cap.base}/ui/status?task=${task.id}&task=tsk_nope`))
      .json();
    assert.deepEqual(status, {
      sessionId: cap.ready.session_id,
      capsule: { name: "routes", version: "0.1.0", transport: "http", driver: "scripted" },
      authenticated: false,
      credential: null,
      scopes: [...OPERATOR_METHODS],
      heartbeatMs: 15000,
      tokens: { used: 10, ceiling: null },
      tasks: { [task.id]: { lane: "bg", origin: "event", source: "a2a", request: "hello" } },
      calls: {},
      // The newest event: the page's first paint waits for its stream to reach it.
      lastId: status.lastId,
    });
    const watched = await cap.rpc("murmur.PollSession", { cursor: 0 }) as {
      result: { cursor: number };
    };
    assert.equal(status.lastId, watched.result.cursor);
    assert.ok(status.lastId >= 3, String(status.lastId));
    // A long request is cut at REQUEST_CHARS, marked with an ellipsis.
    const long = "ж✓".repeat(1500);
    const big = (await cap.rpc("SendMessage", userMessage(long))).result as {
      task: { id: string };
    };
    const s2 = await (await fetch(`${cap.base}/ui/status?task=${big.task.id}`)).json();
    assert.equal(s2.tasks[big.task.id].request, `${long.slice(0, REQUEST_CHARS)}…`);
  } finally {
    await cap.close();
  }
});
