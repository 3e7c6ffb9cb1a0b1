/**
 * Approvals on the live page, in a real browser (docs/live-page.md "Approvals"): a task waiting
 * for a tool call's approval shows the call with Approve and Deny instead of the answer box; the
 * operator's Deny (with a reason) reaches the model as the call's result and the call never
 * runs; Approve runs it; a token that may send messages but is not the operator's is refused at
 * the door, the card says so, and the call still waits.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { startCapsule } from "../helpers/capsule.ts";
import { screenshot, startChromium } from "../helpers/browser.ts";
import { call, submit, traceOf, waitTask } from "../door/helpers.ts";
import { inPage, shotsDir, textOf, waitPage } from "./helpers.ts";

async function login(page: Page, token: string): Promise<void> {
  await waitPage(page, "the token form", (doc) => !doc.getElementById("login").hidden);
  await page.fill("#token", token);
  await page.click("#login button[type=submit]");
}

const pending = (t: { status: { state: string } }) =>
  t.status.state === "TASK_STATE_INPUT_REQUIRED";
const ended = (t: { status: { state: string } }) =>
  ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(t.status.state);

Deno.test({
  name:
    "page: a pending approval shows Approve and Deny; Deny with a reason reaches the model, Approve runs the call; a non-operator token is refused",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("approval");
    const cap = await startCapsule({
      manifest: {
        name: "gated",
        version: "0.1.0",
        network: {
          authentication: {
            credentials: {
              helper: { scopes: ["murmur.WatchSession", "GetTask", "SendMessage"] },
            },
          },
        },
        lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
        capabilities: { shell: { allow: ["bash"] } },
        approvals: { tools: { bash: { approve: "ask", commands: ["git push *", "touch *"] } } },
      },
      script: {
        tasks: [
          {
            match: "^push",
            turns: [
              {
                steps: [{
                  tool_call: { id: "p", name: "bash", input: { command: "git push origin main" } },
                }],
              },
              { steps: [{ text: "push handled" }] },
            ],
          },
          {
            match: "^touch",
            turns: [
              {
                steps: [{
                  tool_call: { id: "t", name: "bash", input: { command: "touch approved.txt" } },
                }],
              },
              { steps: [{ text: "touched" }] },
            ],
          },
        ],
      },
    });
    const tokens = cap.ready.tokens!;
    const op = tokens.operator;
    const chrome = await startChromium();
    try {
      const push = await submit(cap.base, "push", { token: op });
      await waitTask(cap.base, push.id, pending, 15_000, op);
      const card = `.task[data-task="${push.id}"]`;

      // A token that may send messages but is not the operator's: the buttons are there, the
      // door refuses, the card says so, and the call still waits.
      const helper = await chrome.page({ width: 900, height: 700 });
      await helper.goto(`${cap.base}/ui`);
      await login(helper, tokens.helper);
      await waitPage(helper, "the approval controls", (doc, c) => {
        const s = doc.querySelector(`${c} section.approval`);
        return !!s && !s.hidden;
      }, card);
      await helper.click(`${card} button.approve`);
      await waitPage(
        helper,
        "the refusal on the card",
        (doc, c) => (doc.querySelector(`${c} .task-error`)?.textContent ?? "").length > 0,
        card,
      );
      assert.match(
        await textOf(helper, `${card} .task-error`),
        /^the approval was not taken: SendMessage: only the operator answers an approval; credential 'helper' cannot/,
      );
      const still = await call(cap.base, "GetTask", { id: push.id }, { token: op });
      assert.equal(still.json.result.status.state, "TASK_STATE_INPUT_REQUIRED");

      // The operator's page: the call as a person reads it, no answer box; Deny with a reason.
      const page = await chrome.page({ width: 900, height: 700 });
      await page.goto(`${cap.base}/ui`);
      await login(page, op);
      await waitPage(page, "the approval controls", (doc, c) => {
        const s = doc.querySelector(`${c} section.approval`);
        return !!s && !s.hidden;
      }, card);
      assert.equal(await textOf(page, `${card} .approval-tool`), "bash");
      assert.equal(await textOf(page, `${card} .approval-what`), "git push origin main");
      assert.equal(await textOf(page, `${card} .state`), "input-required");
      assert.equal(
        await inPage(page, (doc, c) => doc.querySelector(`${c} form.answer`).hidden, card),
        true,
      );
      await screenshot(page, shots, "approval-pending");
      await page.fill(`${card} input.deny-reason`, "no pushes on Friday — ask Ana");
      await page.click(`${card} button.deny`);
      await waitPage(
        page,
        "the denied task completed",
        (doc, c) => doc.querySelector(`${c} .state`)?.textContent === "completed",
        card,
      );
      assert.equal(
        await inPage(page, (doc, c) => doc.querySelector(`${c} section.approval`).hidden, card),
        true,
      );
      const denied = (await traceOf(cap)).find((l) => l.event_type === "approval_resolved");
      assert.equal(denied?.outcome, "denied");
      assert.equal(denied?.by, "operator");
      assert.equal(denied?.reason, "no pushes on Friday — ask Ana");
      // The model read the denial as the call's result: the call's folded result on the page.
      await page.click(`${card} .item.tool summary`);
      await waitPage(
        page,
        "the opened result",
        (doc, c) =>
          (doc.querySelector(`${c} .item.tool pre`)?.textContent ?? "").includes(
            "denied by the operator: no pushes on Friday — ask Ana. The call did not run",
          ),
        card,
      );

      // Approve: the call runs.
      const touch = await submit(cap.base, "touch", { token: op });
      await waitTask(cap.base, touch.id, pending, 15_000, op);
      const card2 = `.task[data-task="${touch.id}"]`;
      await waitPage(page, "the second approval", (doc, c) => {
        const s = doc.querySelector(`${c} section.approval`);
        return !!s && !s.hidden;
      }, card2);
      await page.click(`${card2} button.approve`);
      await waitTask(cap.base, touch.id, ended, 15_000, op);
      await waitPage(
        page,
        "the approved task completed",
        (doc, c) => doc.querySelector(`${c} .state`)?.textContent === "completed",
        card2,
      );
      assert.ok(await Deno.stat(`${cap.ready.workdir}/approved.txt`).then(() => true, () => false));
      await screenshot(page, shots, "approval-done", true);
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});

Deno.test({
  name:
    "page: on a public door the page follows with no token, and Approve asks for the operator's approval token once; with it the call runs",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cap = await startCapsule({
      manifest: {
        name: "open-gated",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
        capabilities: { shell: { allow: ["bash"] } },
        approvals: { tools: { bash: { approve: "ask", commands: ["touch *"] } } },
      },
      script: {
        tasks: [{
          turns: [
            {
              steps: [{
                tool_call: { id: "t", name: "bash", input: { command: "touch approved.txt" } },
              }],
            },
            { steps: [{ text: "touched" }] },
          ],
        }],
      },
    });
    const chrome = await startChromium();
    try {
      const task = await submit(cap.base, "touch");
      await waitTask(cap.base, task.id, pending, 15_000);
      const card = `.task[data-task="${task.id}"]`;
      const page = await chrome.page({ width: 900, height: 700 });
      await page.goto(`${cap.base}/ui`);
      await waitPage(page, "the approval controls", (doc, c) => {
        const s = doc.querySelector(`${c} section.approval`);
        return !!s && !s.hidden;
      }, card);
      // No token yet: the door refuses the answer, and the page asks for the operator's.
      await page.click(`${card} button.approve`);
      await waitPage(page, "the token form", (doc) => !doc.getElementById("login").hidden);
      assert.match(
        await textOf(page, "#login-why"),
        /^Answering an approval on this door takes the operator's token\. SendMessage: only the operator answers an approval, and on this public door that takes the operator's token: approval_token in the session's running record/,
      );
      const still = await call(cap.base, "GetTask", { id: task.id });
      assert.equal(still.json.result.status.state, "TASK_STATE_INPUT_REQUIRED");
      assert.equal(await Deno.stat(`${cap.ready.workdir}/approved.txt`).catch(() => null), null);

      await login(page, cap.ready.approval_token!);
      await waitPage(page, "the approval controls again", (doc, c) => {
        const s = doc.querySelector(`${c} section.approval`);
        return !!s && !s.hidden && doc.getElementById("login").hidden;
      }, card);
      await page.click(`${card} button.approve`);
      await waitTask(cap.base, task.id, ended, 15_000);
      await waitPage(
        page,
        "the approved task completed",
        (doc, c) => doc.querySelector(`${c} .state`)?.textContent === "completed",
        card,
      );
      assert.ok(await Deno.stat(`${cap.ready.workdir}/approved.txt`).then(() => true, () => false));
      const resolved = (await traceOf(cap)).find((l) => l.event_type === "approval_resolved");
      assert.equal(resolved?.by, "operator");
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
