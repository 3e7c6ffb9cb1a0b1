/**
 * The live page's first picture and its last (docs/live-page.md): in a real browser (Debian
 * chromium, headless), a page opened on a session that already ran five tasks paints them all at
 * once, each under its request, marking `<body data-ready>` — waited on as state, never on time —
 * and never says "No task yet" meanwhile; a tool call shows the command it ran (GET /ui/status
 * `calls`); a page open while the session ends says it ended, with its status, and does not
 * reconnect, on the capsule's door and through an edge.
 */
import assert from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { startChromium } from "../helpers/browser.ts";
import { until } from "../helpers/until.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { inPage, textOf, waitPage } from "./helpers.ts";

const SCRIPT = {
  tasks: [
    { match: "fail", turns: [{ steps: [{ error: "provider overloaded" }] }] },
    { turns: [{ steps: [{ text: "Done — ✓ 日本語." }] }] },
  ],
};

const REQUESTS = [
  "Summarise README.md",
  "Count the ж in ✓ docs/",
  "please fail loudly",
  "List the open issues, newest first",
  "Write a haiku about the page",
];

Deno.test({
  name:
    "page: the first paint shows the five tasks a session ran, each with its request; never 'No task yet' before",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cap = await startCapsule({
      manifest: {
        name: "painted",
        version: "1.0.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 8 },
      },
      script: SCRIPT,
    });
    const chrome = await startChromium();
    try {
      const ids: string[] = [];
      for (const text of REQUESTS) {
        const sent = await cap.rpc("SendMessage", {
          ...userMessage(text),
          configuration: { returnImmediately: true },
        });
        ids.push((sent.result as { task: { id: string } }).task.id);
      }
      for (const id of ids) {
        await until(`task ${id} to end`, async () => {
          const t = await cap.rpc("GetTask", { id }) as { result: { status: { state: string } } };
          return /COMPLETED|FAILED/.test(t.result.status.state) || undefined;
        });
      }
      const page = await chrome.page();
      const failures: string[] = [];
      page.on("pageerror", (e) => failures.push(e.message));
      await page.goto(`${cap.base}/ui`, { waitUntil: "domcontentloaded" });
      // Before the stream caught up the page says it is loading, never that there is no task.
      const early = await inPage(page, (doc) => ({
        empty: doc.getElementById("empty").hidden,
        loading: !doc.getElementById("loading").hidden || doc.body.dataset.ready === "true",
      }));
      assert.deepEqual(early, { empty: true, loading: true });
      await waitPage(page, "the first paint", (doc) => doc.body.dataset.ready === "true");
      // Read in one evaluation, at the moment of the first paint's mark.
      const shown = await inPage(page, (doc) => ({
        tasks: [...doc.querySelectorAll("article.task")].map((a) => ({
          id: a.dataset.task,
          state: a.dataset.state,
        })),
        empty: doc.getElementById("empty").hidden,
        loading: doc.getElementById("loading").hidden,
        conn: doc.getElementById("conn").textContent,
      }));
      assert.equal(shown.empty, true);
      assert.equal(shown.loading, true);
      assert.equal(shown.conn, "live");
      // Newest first; each in the state it ended in.
      assert.deepEqual(
        shown.tasks,
        ids.map((id, i) => ({ id, state: i === 2 ? "failed" : "completed" })).reverse(),
      );
      // Each task's request, above what it did (GET /ui/status `request`, asked once per task).
      for (const [i, id] of ids.entries()) {
        await waitPage(
          page,
          `task ${id}'s request`,
          (doc, a) =>
            doc.querySelector(`.task[data-task="${a.id}"] .task-request`)?.textContent === a.text,
          { id, text: REQUESTS[i] },
        );
      }
      assert.deepEqual(failures, []);
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});

Deno.test({
  name: "page: a session that ends says so with its status, and the page does not reconnect",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cap = await startCapsule({
      manifest: {
        name: "ending",
        version: "1.0.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      },
      script: SCRIPT,
      env: { MURMUR_HEARTBEAT_MS: "500" },
    });
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      await page.goto(`${cap.base}/ui`);
      await waitPage(page, "the first paint", (doc) => doc.body.dataset.ready === "true");
      const sent = await cap.rpc("SendMessage", {
        ...userMessage("Summarise README.md"),
        configuration: { returnImmediately: true },
      });
      const id = (sent.result as { task: { id: string } }).task.id;
      await waitPage(
        page,
        "the task completed",
        (doc, t) => doc.querySelector(`.task[data-task="${t}"]`)?.dataset.state === "completed",
        id,
      );
      const posts: string[] = [];
      page.on("request", (r) => {
        if (r.method() === "POST") posts.push(r.url());
      });
      // What `mur stop` does: StopSession through the door, then SIGTERM.
      const stop = await cap.rpc("murmur.StopSession", {});
      assert.ok(!stop.error, JSON.stringify(stop));
      cap.kill("SIGTERM");
      await waitPage(
        page,
        "the session ended",
        (doc) => doc.getElementById("conn").dataset.kind === "ended",
      );
      assert.equal(await textOf(page, "#conn"), "session ended: status ok");
      assert.equal(await inPage(page, (doc) => doc.getElementById("conn").dataset.status), "ok");
      assert.match(await textOf(page, "#notices"), /the session ended: status ok/);
      // The capsule is gone; the page's clock ticks on (each second), and no reconnect is made:
      // two ticks are longer than the first reconnect's backoff (250 ms ± 20 %).
      assert.equal((await cap.finished()).code, 0);
      const before = await textOf(page, "#lastbyte");
      await waitPage(page, "two ticks of the page's clock", (doc, b) => {
        const s = /^(\d+) s ago$/.exec(doc.getElementById("lastbyte").textContent);
        return s !== null && Number(s[1]) >= 2 && doc.getElementById("lastbyte").textContent !== b;
      }, before);
      assert.deepEqual(posts, [], "no request after the session ended");
      assert.equal(await inPage(page, (doc) => doc.getElementById("conn").dataset.kind), "ended");
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});

Deno.test({
  name: "page: a tool call shows the command it ran beside its result",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const command = "printf 'from the tool: %s\\n' ж✓ && echo \"$((6 * 7))\"";
    const cap = await startCapsule({
      manifest: {
        name: "commands",
        version: "1.0.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        capabilities: { shell: { allow: ["bash"] } },
      },
      script: {
        tasks: [{
          turns: [
            { steps: [{ tool_call: { id: "toolu_sh", name: "bash", input: { command } } }] },
            { steps: [{ text: "It printed 42." }] },
          ],
        }],
      },
    });
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      await page.goto(`${cap.base}/ui`);
      await waitPage(page, "the first paint", (doc) => doc.body.dataset.ready === "true");
      const sent = await cap.rpc("SendMessage", {
        ...userMessage("Run the command"),
        configuration: { returnImmediately: true },
      });
      const id = (sent.result as { task: { id: string } }).task.id;
      const call = `.task[data-task="${id}"] .item.tool[data-call="toolu_sh"]`;
      await waitPage(
        page,
        "the call's command",
        (doc, c) => {
          const el = doc.querySelector(`${c} .tool-input`);
          return !!el && !el.hidden && el.textContent !== "";
        },
        call,
      );
      assert.equal(await textOf(page, `${call} .tool-input`), command);
      assert.equal(await textOf(page, `${call} .tool-name`), "bash");
      // The door holds it for the page: compact JSON by `<task>/<call>`.
      const status =
        await (await fetch(`${cap.base}/ui/status?call=${id}/toolu_sh&call=${id}/nope`))
          .json();
      assert.deepEqual(status.calls, { [`${id}/toolu_sh`]: JSON.stringify({ command }) });
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});

Deno.test({
  name: "page on an edge: the session's end reaches the page through the edge, with its status",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const KEY = "an edge and its capsules share this key, 32+ bytes";
    const redis = await TestRedis.start();
    const cap = await startCapsule({
      manifest: {
        name: "edge-ending",
        version: "1.0.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        cluster: { redis: redis.url },
      },
      script: SCRIPT,
      env: { MURMUR_CLUSTER_KEY: KEY },
    });
    const edge = await startEdgeProc(redis.url, { MURMUR_CLUSTER_KEY: KEY });
    const chrome = await startChromium();
    try {
      const at = await sessionOn(edge, cap.ready.session_id);
      const page = await chrome.page();
      await page.goto(`${at}/ui`);
      await waitPage(page, "the first paint", (doc) => doc.body.dataset.ready === "true");
      await waitPage(
        page,
        "the live stream",
        (doc) => doc.getElementById("conn").dataset.kind === "live",
      );
      await cap.rpc("murmur.StopSession", {});
      cap.kill("SIGTERM");
      await waitPage(
        page,
        "the session ended",
        (doc) => doc.getElementById("conn").dataset.kind === "ended",
      );
      assert.equal(await textOf(page, "#conn"), "session ended: status ok");
    } finally {
      await chrome.close();
      await edge.kill();
      await cap.close();
      await redis.close();
    }
  },
});
