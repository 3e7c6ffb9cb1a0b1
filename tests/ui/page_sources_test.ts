/**
 * Tool sources on the live page (docs/mcp.md "sourceErrors"), in a real browser (Debian
 * chromium, headless): a capsule whose MCP server dies at start and whose good server answers;
 * the page's header names the dead server and why, and `/ui/status` carries the same
 * `sourceErrors`; a capsule without tool sources has none (the key absent).
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { startChromium } from "../helpers/browser.ts";
import { hostileArgv } from "../tools/mcp/servers.ts";
import { textOf, waitPage } from "./helpers.ts";

Deno.test({
  name: "page: an MCP server that could not start is named in the header",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dead = hostileArgv("die-at-start", "/dev/null");
    const good = hostileArgv("ok", "/dev/null");
    const cap = await startCapsule({
      manifest: {
        name: "sources",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        // The fake server runs on this Deno, whose binary lives under the operator's HOME, which
        // containment does not mount (docs/containment.md): these tests are about MCP, not it.
        containment: "advisory",
        mcp_servers: {
          broken: { command: dead[0], args: dead.slice(1) },
          fine: { command: good[0], args: good.slice(1) },
        },
      },
    });
    const chrome = await startChromium();
    try {
      const status = await (await fetch(`${cap.base}/ui/status`)).json();
      assert.deepEqual(status.sourceErrors.map((e: { source: string }) => e.source), ["broken"]);
      const page = await chrome.page();
      await page.goto(`${cap.base}/ui`);
      await waitPage(page, "the sources list", (doc) => !doc.getElementById("sources")?.hidden);
      const text = await textOf(page, "#sources");
      assert.match(text, /^MCP server broken unavailable: the server exited with code 3/);
      assert.ok(!text.includes("fine"));
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
