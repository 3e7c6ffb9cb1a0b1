/**
 * Published files on the live page in a real browser (Debian chromium, headless): a scripted
 * capsule publishes report.md and chart.png (inline) and a 5 MiB file (a `url` part) and a data
 * value; the page lists each under "Files" as a download link, and a click downloads the bytes —
 * the inline ones from the page itself, the url one fetched from the door with the page's token.
 */
import assert from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { startChromium } from "../helpers/browser.ts";
import { inPage, waitPage } from "./helpers.ts";
import { BIG, PNG_BYTES, publishingCapsule } from "../door/publish_fixture.ts";

Deno.test({
  name:
    "page: published files are download links; a click downloads the bytes (a url file through the door)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const p = publishingCapsule();
    const cap = await startCapsule({
      manifest: {
        name: "files",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        inference: p.inference,
        ...p.extra,
      },
      script: p.script,
    });
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      const failures: string[] = [];
      page.on("pageerror", (e) => failures.push(e.message));
      await page.goto(`${cap.base}/ui`);
      await waitPage(
        page,
        "the live connection",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      const sent = await cap.rpc("SendMessage", {
        ...userMessage("make files"),
        configuration: { returnImmediately: true },
      });
      const taskId = (sent.result as { task: { id: string } }).task.id;
      const card = `.task[data-task="${taskId}"]`;
      await waitPage(
        page,
        "four published files",
        (doc, c) => doc.querySelectorAll(`${c} .files-list li`).length === 4,
        card,
      );
      const listed = await inPage(
        page,
        (doc, c) => [...doc.querySelectorAll(`${c} .files-list li`)].map((li) => li.textContent),
        card,
      );
      assert.deepEqual(listed, [
        "report.md text/markdown · 23 B",
        "chart.png image/png · 11 B",
        "big.bin application/octet-stream",
        "stats application/json",
      ]);
      const download = async (name: string, saved = name) => {
        const [d] = await Promise.all([
          page.waitForEvent("download", { timeout: 30_000 }),
          page.locator(`${card} .files-list a`, { hasText: name }).click(),
        ]);
        assert.equal(d.suggestedFilename(), saved);
        const path = await d.path();
        return await Deno.readFile(path);
      };
      assert.equal(
        new TextDecoder().decode(await download("report.md")),
        "# Report\n\nAll good ✓\n",
      );
      assert.deepEqual([...await download("chart.png")], PNG_BYTES);
      const big = await download("big.bin");
      assert.equal(big.length, BIG);
      assert.ok(big.every((b) => b === 0x7a));
      assert.deepEqual(
        JSON.parse(new TextDecoder().decode(await download("stats", "stats.json"))),
        {
          rows: 3,
          ok: true,
        },
      );
      assert.deepEqual(failures, []);
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
