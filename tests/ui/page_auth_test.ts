/**
 * The live page on an authenticated door, in a real browser: the page's files come without a
 * token (they hold no data), everything else takes one. The page asks for the token once, sends
 * it as `Authorization: Bearer`, shows only the controls the token's scopes allow (a token
 * without CancelTask gets no cancel button), keeps it out of the URL and out of local storage
 * unless "remember" is ticked, and says so when a token cannot watch the session.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";
import { screenshot, startChromium } from "../helpers/browser.ts";
import { inPage, shotsDir, textOf, waitPage } from "./helpers.ts";

const CREDENTIALS = {
  // Watches and answers, but may not cancel.
  helper: { scopes: ["murmur.WatchSession", "GetTask", "SendMessage"] },
  // Lists tasks, may not watch.
  lister: { scopes: ["ListTasks"] },
};

async function login(page: Page, token: string, remember = false): Promise<void> {
  await waitPage(page, "the token form", (doc) => !doc.getElementById("login").hidden);
  await page.fill("#token", token);
  if (remember) await page.check("#remember");
  await page.click("#login button[type=submit]");
}

async function waitingTask(cap: Capsule, op: string): Promise<string> {
  const sent = await cap.rpc("SendMessage", {
    ...userMessage("ask me something"),
    configuration: { returnImmediately: true },
  }, { token: op });
  return (sent.result as { task: { id: string } }).task.id;
}

Deno.test({
  name:
    "page on an authenticated door: token asked once, controls follow scopes, never stored unless remembered",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("auth");
    const cap = await startCapsule({
      manifest: {
        name: "guarded",
        version: "0.1.0",
        network: { authentication: { credentials: CREDENTIALS } },
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        tools: [{ builtin: "request-input" }],
      },
      script: {
        tasks: [{
          turns: [
            {
              steps: [{
                tool_call: { id: "ask", name: "request-input", input: { prompt: "Which one?" } },
              }],
            },
            { steps: [{ text: "Thanks." }] },
          ],
        }],
      },
    });
    const tokens = cap.ready.tokens!;
    const chrome = await startChromium();
    try {
      // The page is served without a token; its data is not.
      const html = await fetch(`${cap.base}/`, { headers: { accept: "text/html" } });
      assert.equal(html.status, 200);
      assert.match(await html.text(), /<title>mur · live session<\/title>/);
      const ui = await fetch(`${cap.base}/ui`);
      assert.equal(ui.status, 200);
      await ui.body?.cancel();
      const status = await fetch(`${cap.base}/ui/status`);
      assert.equal(status.status, 401);
      await status.body?.cancel();
      const lister = await fetch(`${cap.base}/ui/status`, {
        headers: { authorization: `Bearer ${tokens.lister}` },
      });
      assert.equal(lister.status, 403);
      assert.equal((await lister.json()).error, "insufficient_scope");

      const id = await waitingTask(cap, tokens.operator);
      const card = `.task[data-task="${id}"]`;

      // A token that may answer but not cancel: an answer box, no cancel button.
      const page = await chrome.page({ width: 900, height: 700 });
      const logged: string[] = [];
      page.on("console", (m) => logged.push(m.text()));
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`${cap.base}/ui`);
      await login(page, tokens.helper);
      await waitPage(page, "the waiting task", (doc, c) => {
        const form = doc.querySelector(`${c} form.answer`);
        return !!form && !form.hidden;
      }, card);
      assert.equal(await textOf(page, `${card} .state`), "input-required");
      assert.equal(await page.$(`${card} button.cancel:not([hidden])`), null, "no cancel button");
      assert.equal(await inPage(page, (doc) => doc.getElementById("login").hidden), true);
      assert.equal(await inPage(page, () => JSON.stringify({ ...localStorage })), "{}");
      for (const u of [page.url(), ...requests]) assert.ok(!u.includes(tokens.helper), u);
      for (const l of logged) assert.ok(!l.includes(tokens.helper), l);
      await screenshot(page, shots, "helper-no-cancel", true);

      // The operator's token, remembered: a cancel button that cancels.
      const op = await chrome.page({ width: 900, height: 700 });
      await op.goto(`${cap.base}/ui`);
      await login(op, tokens.operator, true);
      await waitPage(
        op,
        "the cancel button",
        (doc, c) => !!doc.querySelector(`${c} button.cancel:not([hidden])`),
        card,
      );
      assert.equal(
        await inPage(op, () => localStorage.getItem("mur.door-token")),
        tokens.operator,
      );
      await op.click(`${card} button.cancel`);
      await waitPage(
        op,
        "the canceled task",
        (doc, c) => doc.querySelector(`${c} .state`)?.textContent === "canceled",
        card,
      );
      const got = await cap.rpc("GetTask", { id }, { token: tokens.operator });
      assert.equal(
        (got.result as { status: { state: string } }).status.state,
        "TASK_STATE_CANCELED",
      );
      // The helper's page saw it too, and its answer box went away.
      await waitPage(
        page,
        "the canceled task on the helper's page",
        (doc, c) =>
          doc.querySelector(`${c} .state`)?.textContent === "canceled" &&
          doc.querySelector(`${c} form.answer`).hidden,
        card,
      );

      // Remembered: a reload connects without asking; "Forget token" clears it.
      await op.reload();
      await waitPage(
        op,
        "the live connection after reload",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      assert.equal(
        await inPage(op, (doc) => doc.getElementById("login").hidden),
        true,
      );
      await op.click("#forget");
      await waitPage(op, "the token form again", (doc) => !doc.getElementById("login").hidden);
      assert.equal(await inPage(op, () => localStorage.getItem("mur.door-token")), null);

      // A token that cannot watch: the page says why and asks again.
      const no = await chrome.page({ width: 900, height: 700 });
      await no.goto(`${cap.base}/ui`);
      await login(no, tokens.lister);
      await waitPage(
        no,
        "the refusal",
        (doc) =>
          (doc.getElementById("login-why")?.textContent ?? "").includes(
            "does not reach murmur.WatchSession",
          ) && !doc.getElementById("login").hidden,
      );
      await screenshot(no, shots, "lister-refused");
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
