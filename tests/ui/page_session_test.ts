/**
 * The live page in a real browser (Debian chromium, headless) following a scripted session: text
 * streaming, folded thinking, a tool call whose input bytes the page counts from
 * `tool-call-progress`, its artifact with collapsible content, an image attachment fetched from
 * its url, an input-required wait answered from the page's own box (a SendMessage naming the
 * task), the response artifact, turns, tokens and heartbeat health. Then the same page at 360 px
 * and in dark mode. Screenshots go to the test's temp folder.
 */
import assert from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { screenshot, startChromium } from "../helpers/browser.ts";
import { type Doc, inPage, shotsDir, SNAP_FILES, SNAP_TOOL, textOf, waitPage } from "./helpers.ts";

const SCRIPT = {
  tasks: [{
    turns: [
      {
        steps: [
          { thinking: "The user wants a chart. I should look at the data first. " },
          { thinking: "A shell command will list it." },
          { text: "Let me look at the data " },
          { text: "before drawing anything.", delay_ms: 50 },
          {
            tool_call: {
              id: "toolu_ls",
              name: "bash",
              input: { command: "printf 'hello from the tool: %s\\n' data-ü-✓" },
              chunks: 4,
              chunk_delay_ms: 300,
            },
          },
          { usage: { input_tokens: 1200, output_tokens: 80 } },
        ],
      },
      {
        steps: [
          { text: "Here is the chart." },
          { tool_call: { id: "toolu_snap", name: "snap", input: { what: "chart" } } },
          { usage: { input_tokens: 1500, output_tokens: 40 } },
        ],
      },
      {
        steps: [{
          tool_call: {
            id: "toolu_ask",
            name: "request-input",
            input: { prompt: "Which colour should the bars be?" },
          },
        }],
      },
      {
        steps: [
          { text: "Done: the chart is drawn " },
          { text: "in the colour you chose — ✓ 日本語 too." },
          { usage: { input_tokens: 1700, output_tokens: 30 } },
        ],
      },
    ],
  }],
};

Deno.test({
  name:
    "page: a scripted session — text, folded thinking, tool progress and result, image, input answered from the page, answer, tokens",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("session");
    const cap = await startCapsule({
      manifest: {
        name: "chart-maker",
        version: "1.2.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        capabilities: { shell: { allow: ["bash"] } },
        tools: [{ builtin: "request-input" }, SNAP_TOOL],
      },
      files: SNAP_FILES,
      script: SCRIPT,
      env: { MURMUR_HEARTBEAT_MS: "1000" },
    });
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      const failures: string[] = [];
      page.on("pageerror", (e) => failures.push(e.message));
      page.on("console", (m) => m.type() === "error" && failures.push(m.text()));
      await page.goto(`${cap.base}/ui`);
      await waitPage(
        page,
        "the live connection",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      assert.match(await textOf(page, "#capsule"), /chart-maker 1\.2\.0 \(http\)/);
      assert.equal(await textOf(page, "#session"), cap.ready.session_id);

      const sent = await cap.rpc("SendMessage", {
        ...userMessage("Draw me a chart"),
        configuration: { returnImmediately: true },
      });
      const taskId = (sent.result as { task: { id: string } }).task.id;
      const card = `.task[data-task="${taskId}"]`;

      // The wait for input: the page shows the prompt and a box to answer in.
      await waitPage(page, "the input-required prompt", (doc, c) => {
        const form = doc.querySelector(`${c} form.answer`);
        return !!form && !form.hidden;
      }, card);
      assert.equal(await textOf(page, `${card} .state`), "input-required");
      assert.equal(await textOf(page, `${card} .prompt-text`), "Which colour should the bars be?");
      assert.match(await page.title(), /^\(1 waiting\) chart-maker/);

      // Thinking is there, folded.
      const thinking = await inPage(page, (doc, c) => {
        const d = doc.querySelector(`${c} .item.thinking details`);
        return { open: d.open, text: d.querySelector(".thinking-body").textContent };
      }, card);
      assert.deepEqual(thinking, {
        open: false,
        text:
          "The user wants a chart. I should look at the data first. A shell command will list it.",
      });
      // Text blocks as streamed, one block per turn.
      const texts = await inPage(
        page,
        (doc, c) =>
          [...doc.querySelectorAll(`${c} .item.text .text-body`)].map((e) => e.textContent),
        card,
      );
      assert.deepEqual(texts, [
        "Let me look at the data before drawing anything.",
        "Here is the chart.",
      ]);

      // The bash call: its input size came from tool-call-progress frames; then its artifact.
      const bash = `${card} .item.tool[data-call="toolu_ls"]`;
      const input = JSON.stringify({ command: "printf 'hello from the tool: %s\\n' data-ü-✓" });
      const meta = await textOf(page, `${bash} .tool-meta`);
      assert.match(meta, /^exit 0 · [\d,]+ ms · input (\d+) B$/);
      assert.equal(Number(/input (\d+) B/.exec(meta)![1]), new TextEncoder().encode(input).length);
      // The result is folded; opening it from the keyboard shows exactly what the model read.
      assert.equal(
        await inPage(page, (doc, b) => doc.querySelector(`${b} details`).open, bash),
        false,
      );
      await page.focus(`${bash} summary`);
      await page.keyboard.press("Enter");
      await waitPage(
        page,
        "the opened result",
        (doc, b) =>
          (doc.querySelector(`${b} pre`)?.textContent ?? "").includes("hello from the tool"),
        bash,
      );
      const content = await textOf(page, `${bash} pre`);
      assert.match(content, /^<untrusted-content source=tool:bash>/);
      assert.match(content, /Exit code: 0/);
      assert.match(content, /hello from the tool: data-ü-✓/);

      // The image attachment, fetched from its url and decoded by the browser.
      const snap = `${card} .item.tool[data-call="toolu_snap"]`;
      await waitPage(page, "the attachment image", (doc, s) => {
        const img = doc.querySelector(`${s} img`);
        return !!img && img.complete && img.naturalWidth > 0;
      }, snap);
      const img = await inPage(page, (doc, s) => {
        const i = doc.querySelector(`${s} img`);
        return { w: i.naturalWidth, h: i.naturalHeight, alt: i.getAttribute("alt") };
      }, snap);
      assert.deepEqual(img, { w: 64, h: 40, alt: "image/png attachment, 142 B" });
      await screenshot(page, shots, "waiting-for-input", true);

      // Answer from the page, by keyboard: type, Tab to the button, Enter.
      await page.focus(`${card} textarea`);
      await page.keyboard.type("Blue, please");
      await page.keyboard.press("Tab");
      assert.equal(await inPage(page, (doc) => doc.activeElement?.textContent), "Send answer");
      await page.keyboard.press("Enter");

      await waitPage(
        page,
        "the completed task",
        (doc, c) => doc.querySelector(`${c} .state`)?.textContent === "completed",
        card,
      );
      assert.equal(
        await textOf(page, `${card} .response-body`),
        "Done: the chart is drawn in the colour you chose — ✓ 日本語 too.",
      );
      const statuses = await inPage(
        page,
        (doc, c) => [...doc.querySelectorAll(`${c} .item.status`)].map((e) => e.textContent),
        card,
      );
      assert.deepEqual(statuses, [
        "inference turn 1",
        "inference turn 2",
        "inference turn 3",
        "Which colour should the bars be?",
        "resumed",
        "inference turn 4",
        "task completed",
      ]);
      assert.match(
        await textOf(page, `${card} .task-meta`),
        /^bg lane · origin event · turn 4 · context ctx_/,
      );
      assert.equal(await page.$(`${card} form.answer:not([hidden])`), null);
      assert.equal(
        await page.$(`${card} button.cancel:not([hidden])`),
        null,
        "no cancel once ended",
      );
      // The reply reached the task as the answer to its question.
      const task = await cap.rpc("GetTask", { id: taskId });
      assert.equal(
        (task.result as { status: { state: string } }).status.state,
        "TASK_STATE_COMPLETED",
      );

      // Tokens the session spent: the scripted usage, and turn 3 (no usage step) estimated at 4
      // characters a token on top. The heartbeat's health (a 1 s heartbeat here).
      await waitPage(
        page,
        "the tokens",
        (doc, least) => Number(doc.getElementById("tokens")?.dataset.used) > least,
        1200 + 80 + 1500 + 40 + 1700 + 30,
      );
      await waitPage(
        page,
        "the heartbeat's health",
        (doc) =>
          doc.getElementById("lastbyte")?.dataset.health === "ok" &&
          /^\d+ s ago$/.test(doc.getElementById("lastbyte")?.textContent ?? ""),
      );
      await screenshot(page, shots, "completed", true);

      // 360 px wide: nothing overflows sideways; dark mode follows prefers-color-scheme.
      await page.setViewportSize({ width: 360, height: 800 });
      const overflow = await inPage(
        page,
        (doc) => doc.documentElement.scrollWidth - doc.documentElement.clientWidth,
      );
      assert.equal(overflow, 0, "no horizontal scroll at 360 px");
      await screenshot(page, shots, "narrow-360");
      const background = (doc: Doc) => doc.defaultView.getComputedStyle(doc.body).backgroundColor;
      const light = await inPage(page, background);
      await page.emulateMedia({ colorScheme: "dark" });
      assert.notEqual(await inPage(page, background), light);
      await screenshot(page, shots, "dark-360");
      assert.deepEqual(failures, [], "no error in the page");
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
