/**
 * Sending and steering from the live page, in a real browser (docs/live-page.md "Sending and
 * steering"): a task typed into the page's new-task box runs and completes on the page; a working
 * task's steer box (shown because the card lists the steer extension) sends a steer while the
 * task is held on a gated shell command, the box says how it was taken once the gate opens, the
 * task's card draws the `steer-taken` line, and the trace's `steer_taken` says the model read it
 * after turn 1. The held command waits for a file the test writes, so nothing depends on timing.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { screenshot, startChromium } from "../helpers/browser.ts";
import { call, traceOf, waitTask } from "../door/helpers.ts";
import { until } from "../helpers/until.ts";
import { inPage, shotsDir, textOf, waitPage } from "./helpers.ts";

/** A shell command that returns once the test writes `go` in the workdir (bounded: 120 s). */
const HOLD =
  "i=0; while [ ! -f go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo held";

const working = (t: { status: { state: string } }) => t.status.state === "TASK_STATE_WORKING";

Deno.test({
  name:
    "page: a task sent from the page completes on it; a working task steered from its card takes the steer at its next turn",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("send-steer");
    const cap = await startCapsule({
      manifest: {
        name: "steered",
        version: "0.1.0",
        inference: { max_turns: 3 },
        lifecycle: {
          task_acceptance: "queue",
          after_task: "sleep",
          queue_depth: 5,
          shell_grace_secs: 300,
        },
        capabilities: { shell: { allow: ["bash"] } },
      },
      script: {
        tasks: [
          { match: "^hello", turns: [{ steps: [{ text: "hello back ✓ 日本語" }] }] },
          {
            match: "^work",
            turns: [
              { steps: [{ tool_call: { id: "h1", name: "bash", input: { command: HOLD } } }] },
              { steps: [{ text: "done as steered" }] },
            ],
          },
        ],
      },
    });
    const chrome = await startChromium();
    try {
      const page = await chrome.page({ width: 900, height: 800 });
      const failures: string[] = [];
      page.on("pageerror", (e) => failures.push(e.message));
      page.on("console", (m) => m.type() === "error" && failures.push(m.text()));
      await page.goto(`${cap.base}/ui`);
      await waitPage(page, "the live connection", (doc) => {
        return doc.getElementById("conn")?.dataset.kind === "live";
      });
      await waitPage(page, "the new-task box", (doc) => !doc.getElementById("send").hidden);

      // A new task from the page: the box says which task it made; the page shows it complete.
      await page.fill("#send-text", "hello from the page");
      await page.click("#send button[type=submit]");
      await waitPage(page, "the sent task's id", (doc) => {
        return !!doc.querySelector("#send .send-outcome")?.dataset.task;
      });
      const first = await inPage(
        page,
        (doc) => doc.querySelector("#send .send-outcome").dataset.task as string,
      );
      assert.match(first, /^tsk_/);
      assert.equal(await textOf(page, "#send .send-outcome"), `sent: task ${first}`);
      const card1 = `.task[data-task="${first}"]`;
      await waitPage(page, "the sent task completed on the page", (doc, c) => {
        return doc.querySelector(`${c} .state`)?.textContent === "completed";
      }, card1);
      assert.equal(await textOf(page, `${card1} .response-body`), "hello back ✓ 日本語");
      // What the task was asked comes with the next GET /ui/status.
      await waitPage(page, "the task's request", (doc, c) => {
        return doc.querySelector(`${c} .task-request`)?.textContent === "hello from the page";
      }, card1);
      // An ended task has no steer box.
      assert.equal(
        await inPage(page, (doc, c) => doc.querySelector(`${c} form.steer`).hidden, card1),
        true,
      );

      // A task held on a gate: WORKING, its card offers the steer box.
      await page.fill("#send-text", "work on the deploy");
      await page.click("#send button[type=submit]");
      await waitPage(page, "the second task's id", (doc, prev) => {
        const id = doc.querySelector("#send .send-outcome")?.dataset.task;
        return !!id && id !== prev;
      }, first);
      const second = await inPage(
        page,
        (doc) => doc.querySelector("#send .send-outcome").dataset.task as string,
      );
      await waitTask(cap.base, second, working);
      const card2 = `.task[data-task="${second}"]`;
      await waitPage(page, "the steer box on the working task", (doc, c) => {
        const f = doc.querySelector(`${c} form.steer`);
        return !!f && !f.hidden && !f.querySelector(".steer-text").hidden;
      }, card2);
      const text = "use the staging branch, not main ✓";
      await page.fill(`${card2} .steer-text`, text);
      await page.click(`${card2} form.steer button[type=submit]`);
      // The door took the steer (the task's history holds it) before the gate opens.
      await until("the steer in the task's history", async () => {
        const h = await call(cap.base, "GetTask", { id: second, historyLength: 10 });
        const msgs = (h.json?.result?.history ?? []) as { parts: { text?: string }[] }[];
        return msgs.some((m) => m.parts.some((p) => p.text === text)) || undefined;
      });
      assert.equal(
        await textOf(page, `${card2} .steer-outcome`),
        "steer sent: the task reads it at its next turn boundary",
      );
      await Deno.writeTextFile(`${cap.ready.workdir}/go`, "");
      await waitPage(page, "how the steer was taken", (doc, c) => {
        return /^steer taken/.test(doc.querySelector(`${c} .steer-outcome`)?.textContent ?? "");
      }, card2);
      assert.equal(
        await textOf(page, `${card2} .steer-outcome`),
        `steer taken: task ${second} read it before turn 2`,
      );
      await waitPage(page, "the steered task completed", (doc, c) => {
        return doc.querySelector(`${c} .state`)?.textContent === "completed";
      }, card2);
      const items = await textOf(page, `${card2} .items`);
      assert.match(items, /steer read before turn 2/);
      assert.equal(await textOf(page, `${card2} .response-body`), "done as steered");
      await screenshot(page, shots, "steered");

      // The task read the steer after turn 1, before the model's next call.
      const trace = await traceOf(cap);
      const taken = trace.find((l) => l.event_type === "steer_taken");
      assert.ok(taken, "no steer_taken line");
      assert.equal(taken.task_id, second);
      assert.equal(taken.turn, 1);
      assert.equal(taken.text_bytes, new TextEncoder().encode(text).length);
      assert.deepEqual(failures, []);
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
