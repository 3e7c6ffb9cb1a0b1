/**
 * The live page served by a `mur edge` for a session it reads from Redis (docs/edge.md), in a
 * real browser: the page at `/sessions/<id>/ui` asks for the token, follows the session through
 * the edge, shows its tasks, an image attachment (forwarded to the capsule) and an input prompt,
 * takes the answer (a SendMessage the edge forwards) and shows the task complete. Every request
 * the page makes stays under the session's path on the edge.
 */
import assert from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { screenshot, startChromium } from "../helpers/browser.ts";
import { until } from "../helpers/until.ts";
import { shotsDir, SNAP_FILES, SNAP_TOOL, textOf, waitPage } from "./helpers.ts";

const KEY = "an edge and its capsules share this key, 32+ bytes";

const SCRIPT = {
  tasks: [{
    turns: [
      {
        steps: [
          { text: "Here is the chart." },
          { tool_call: { id: "toolu_snap", name: "snap", input: { what: "chart" } } },
        ],
      },
      {
        steps: [{
          tool_call: { id: "toolu_ask", name: "request-input", input: { prompt: "Which colour?" } },
        }],
      },
      { steps: [{ text: "Drawn in the colour you chose — ✓." }] },
    ],
  }],
};

Deno.test({
  name:
    "page on an edge: token, the session's tasks, an image, an input answered, through the edge",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("edge");
    const redis = await TestRedis.start();
    const cap = await startCapsule({
      manifest: {
        name: "edge-charts",
        version: "2.0.0",
        network: {
          authentication: {
            credentials: { viewer: { scopes: ["murmur.WatchSession", "GetTask", "SendMessage"] } },
          },
        },
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        capabilities: { shell: { allow: ["bash"] } },
        tools: [{ builtin: "request-input" }, SNAP_TOOL],
        cluster: { redis: redis.url },
      },
      files: SNAP_FILES,
      script: SCRIPT,
      env: { MURMUR_CLUSTER_KEY: KEY, MURMUR_HEARTBEAT_MS: "1000" },
    });
    const edge = await startEdgeProc(redis.url, { MURMUR_CLUSTER_KEY: KEY });
    const chrome = await startChromium();
    try {
      const at = `${edge.url}/sessions/${cap.ready.session_id}`;
      await until("the session on the edge", async () => {
        const r = await fetch(`${at}/.well-known/agent-card.json`);
        await r.body?.cancel();
        return r.status === 200 || undefined;
      });
      // The page's files without a token, on both of the door's page paths; its data with one.
      const html = await fetch(`${at}/`, { headers: { accept: "text/html" } });
      assert.equal(html.status, 200);
      assert.match(
        await html.text(),
        new RegExp(`src="/sessions/${cap.ready.session_id}/ui/app.js"`),
      );
      const status = await fetch(`${at}/ui/status`);
      assert.equal(status.status, 401);
      await status.body?.cancel();

      const page = await chrome.page({ width: 900, height: 700 });
      const failures: string[] = [];
      page.on("pageerror", (e) => failures.push(e.message));
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`${at}/ui`);
      await waitPage(page, "the token form", (doc) => !doc.getElementById("login").hidden);
      await page.fill("#token", cap.ready.tokens!.viewer);
      await page.click("#login button[type=submit]");
      await waitPage(
        page,
        "the live connection",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      assert.equal(await textOf(page, "#session"), cap.ready.session_id);
      assert.match(await textOf(page, "#capsule"), /edge-charts 2\.0\.0/);

      const sent = await cap.rpc("SendMessage", {
        ...userMessage("Draw me a chart"),
        configuration: { returnImmediately: true },
      }, { token: cap.ready.tokens!.operator });
      const taskId = (sent.result as { task: { id: string } }).task.id;
      const card = `.task[data-task="${taskId}"]`;
      await waitPage(page, "the input-required prompt", (doc, c) => {
        const form = doc.querySelector(`${c} form.answer`);
        return !!form && !form.hidden;
      }, card);
      assert.equal(await textOf(page, `${card} .prompt-text`), "Which colour?");
      // The image: the page fetched it through the edge, which forwarded it to the capsule.
      const snap = `${card} .item.tool[data-call="toolu_snap"]`;
      await waitPage(page, "the attachment image", (doc, s) => {
        const img = doc.querySelector(`${s} img`);
        return !!img && img.complete && img.naturalWidth === 64;
      }, snap);
      await screenshot(page, shots, "edge-waiting-for-input", true);

      await page.fill(`${card} textarea`, "Blue");
      await page.click(`${card} form.answer button[type=submit]`);
      await waitPage(
        page,
        "the completed task",
        (doc, c) => doc.querySelector(`${c} .state`)?.textContent === "completed",
        card,
      );
      assert.equal(
        await textOf(page, `${card} .response-body`),
        "Drawn in the colour you chose — ✓.",
      );
      await screenshot(page, shots, "edge-completed", true);

      const base = `${at}/`;
      const outside = requests.filter((u) => !u.startsWith(base) && !u.startsWith("blob:"));
      assert.deepEqual(outside, []);
      assert.ok(requests.some((u) => u.startsWith(`${at}/attachments/`)), requests.join("\n"));
      assert.ok(requests.some((u) => u.startsWith(`${at}/ui/status`)), requests.join("\n"));
      assert.deepEqual(failures, []);
    } finally {
      await chrome.close();
      await edge.kill();
      await cap.close();
      await redis.close();
    }
  },
});
