/**
 * The live page's connection in a real browser, through a loopback TCP proxy the test controls:
 *
 * - the proxy cuts every connection twice mid-task: the page says so, reconnects with
 *   `Last-Event-ID` set to the last id it applied, and ends with every event exactly once;
 * - the proxy stops reading while a 20,000-event task floods the door: the page gets `lagged`, says how many
 *   events the capsule dropped for it, reconnects to replay what is still buffered, says what is
 *   gone (a `gap`), and accounts for every id (received + lost = last id);
 * - a 20,000-event task streamed live: the page keeps up, its DOM stays bounded.
 */
import assert from "node:assert/strict";
import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, streamRequest } from "../helpers/sse.ts";
import { screenshot, startChromium } from "../helpers/browser.ts";
import { TcpProxy } from "../helpers/tcp_proxy.ts";
import { inPage, shotsDir, textOf, waitPage } from "./helpers.ts";

const PARTS = 60;

async function send(cap: Capsule, text: string): Promise<string> {
  const sent = await cap.rpc("SendMessage", {
    ...userMessage(text),
    configuration: { returnImmediately: true },
  });
  return (sent.result as { task: { id: string } }).task.id;
}

/** The id of a task's terminal status, read from the capsule's own replay. */
async function terminalId(cap: Capsule, taskId: string): Promise<number> {
  const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
  const all = await collect(res, (e) => {
    const su = (e.data.result as Record<string, Record<string, unknown>>).statusUpdate;
    return su?.taskId === taskId &&
      (su.status as { state: string }).state === "TASK_STATE_COMPLETED";
  }, 90_000);
  return all[all.length - 1].id!;
}

async function pageCounters(page: import("playwright-core").Page) {
  return await inPage(page, (doc) => {
    const d = doc.getElementById("events").dataset;
    return {
      received: Number(d.received),
      lost: Number(d.lost),
      lastId: Number(d.lastId),
      duplicates: Number(d.duplicates),
    };
  });
}

Deno.test({
  name:
    "page: the connection is cut twice mid-task; it reconnects with Last-Event-ID, no event lost or doubled",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("reconnect");
    const steps = Array.from({ length: PARTS }, (_, i) => ({ text: `p${i + 1} `, delay_ms: 60 }));
    const cap = await startCapsule({
      manifest: {
        name: "reconnect",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      },
      script: { tasks: [{ turns: [{ steps }] }] },
      env: { MURMUR_HEARTBEAT_MS: "1000" },
    });
    const proxy = TcpProxy.start(Number(cap.ready.url.split(":").pop()));
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      await page.goto(`${proxy.base}/ui`);
      await waitPage(
        page,
        "the live connection",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      const id = await send(cap, "count for me");
      const body = `.task[data-task="${id}"] .item.text .text-body`;

      for (const [n, at] of [[1, "p15 "], [2, "p35 "]] as const) {
        await waitPage(
          page,
          `text up to ${at}`,
          (doc, a) => (doc.querySelector(a.body)?.textContent ?? "").includes(a.at),
          { body, at },
        );
        proxy.cut();
        await waitPage(
          page,
          `reconnect ${n}`,
          (doc, k) =>
            [...doc.querySelectorAll('.notice[data-kind="connection"]')]
              .filter((e) => e.textContent.includes("reconnected")).length === k,
          n,
        );
      }
      await waitPage(
        page,
        "the completed task",
        (doc, i) =>
          doc.querySelector(`.task[data-task="${i}"] .state`)?.textContent === "completed",
        id,
      );

      const expected = Array.from({ length: PARTS }, (_, i) => `p${i + 1} `).join("");
      assert.equal(await textOf(page, body), expected);
      const last = await terminalId(cap, id);
      assert.deepEqual(await pageCounters(page), {
        received: last,
        lost: 0,
        lastId: last,
        duplicates: 0,
      });
      // The first request replays from 0; each reconnect asked for what followed its last id.
      assert.equal(proxy.lastEventIds[0], 0);
      const resumed = proxy.lastEventIds.filter((x) => x > 0);
      assert.ok(resumed.length >= 2, `reconnects sent Last-Event-ID: ${proxy.lastEventIds}`);
      const lost = await inPage(
        page,
        (doc) =>
          [...doc.querySelectorAll('.notice[data-kind="connection"] .notice-text')]
            .map((e) => e.textContent),
      );
      for (const x of resumed.slice(0, 2)) {
        assert.ok(
          lost.some((t: string) => t.includes(`connection lost after event id ${x}`)),
          `a notice names id ${x}: ${lost}`,
        );
      }
      await screenshot(page, shots, "after-two-reconnects");
    } finally {
      await chrome.close();
      await proxy.close();
      await cap.close();
    }
  },
});

Deno.test({
  name:
    "page: a stalled connection gets lagged — the page says how many were dropped, replays, says what is gone",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("lagged");
    const cap = await startCapsule({
      manifest: {
        name: "lagged",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      },
      script: {
        tasks: [{
          // ~9 MiB: the door's socket, the proxy's and the view's 256 KiB buffer hold about
          // 1,300 of these before the queue of 128 overflows.
          turns: [{ steps: [{ text: "y".repeat(300), repeat: 20_000 }, { text: " the end" }] }],
        }],
      },
      env: { MURMUR_HEARTBEAT_MS: "1000" },
    });
    const proxy = TcpProxy.start(Number(cap.ready.url.split(":").pop()));
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      await page.goto(`${proxy.base}/ui`);
      await waitPage(
        page,
        "the live connection",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      proxy.pause();
      const id = await send(cap, "flood");
      const last = await terminalId(cap, id); // the task has ended at the door
      proxy.resume();

      await waitPage(
        page,
        "the lagged notice",
        (doc) => !!doc.querySelector('.notice[data-kind="lagged"]'),
        undefined,
        60_000,
      );
      await waitPage(
        page,
        "the completed task",
        (doc, i) =>
          doc.querySelector(`.task[data-task="${i}"] .state`)?.textContent === "completed",
        id,
        60_000,
      );
      const lagged = await textOf(page, '.notice[data-kind="lagged"] .notice-text');
      const dropped = Number(/dropped ([\d,]+) live events?/.exec(lagged)?.[1].replace(/,/g, ""));
      assert.ok(dropped >= 1, lagged);
      const gap = await textOf(page, '.notice[data-kind="gap"] .notice-text');
      const gone = Number(/^([\d,]+) events? \(ids/.exec(gap)?.[1].replace(/,/g, ""));
      const c = await pageCounters(page);
      assert.equal(c.lastId, last);
      assert.equal(c.duplicates, 0);
      // Every id is accounted for: applied, or reported lost by the gap.
      assert.equal(c.received + c.lost, last);
      assert.ok(c.lost >= dropped, `lost ${c.lost} ≥ dropped ${dropped}`);
      assert.equal(gone, c.lost, gap);
      assert.match(
        await textOf(page, "#events"),
        new RegExp(`received, ${c.lost.toLocaleString("en")} lost · last id ${last}$`),
      );
      assert.ok((await textOf(page, `.task[data-task="${id}"] .text-body`)).endsWith("y the end"));
      await screenshot(page, shots, "lagged");
    } finally {
      await chrome.close();
      await proxy.close();
      await cap.close();
    }
  },
});

Deno.test({
  name:
    "page: a 21,000-event session at 2,500 events a second — every event applied, the DOM stays bounded",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const shots = await shotsDir("flood");
    // 300 tool calls, then 20,000 text frames in bursts of 50 (a queue of 128 is never at risk
    // from a reader that keeps up; one that does not lags, and the test sees it as lost events).
    const calls = Array.from({ length: 300 }, (_, i) => ({
      tool_call: { id: `toolu_${i}`, name: "missing-tool", input: { i } },
      delay_ms: 5,
    }));
    const bursts = Array.from({ length: 400 }, () => [
      { delay_ms: 20 },
      { text: "y".repeat(99) + " ", repeat: 50 },
    ]).flat();
    const cap = await startCapsule({
      manifest: {
        name: "flood",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      },
      script: { tasks: [{ turns: [{ steps: calls }, { steps: [...bursts, { text: "done" }] }] }] },
    });
    const chrome = await startChromium();
    try {
      const page = await chrome.page();
      await page.goto(`${cap.base}/ui`);
      await waitPage(
        page,
        "the live connection",
        (doc) => doc.getElementById("conn")?.dataset.kind === "live",
      );
      const id = await send(cap, "flood");
      await waitPage(
        page,
        "the completed task",
        (doc, i) =>
          doc.querySelector(`.task[data-task="${i}"] .state`)?.textContent === "completed",
        id,
        120_000,
      );
      const last = await terminalId(cap, id);
      assert.ok(last > 20_000, `${last} events`);
      assert.deepEqual(await pageCounters(page), {
        received: last,
        lost: 0,
        lastId: last,
        duplicates: 0,
      });
      // Bounded DOM: 150 items per task, 32 K characters per text, whatever the event count.
      const shape = await inPage(page, (doc) => ({
        elements: doc.getElementsByTagName("*").length,
        items: doc.querySelectorAll(".item").length,
        dropped: doc.querySelector(".task .dropped")?.textContent ?? "",
        text: doc.querySelector(".item.text .text-body")?.textContent ?? "",
        cut: doc.querySelector(".item.text")?.dataset.cut ?? "",
      }));
      assert.equal(shape.items, 150);
      assert.ok(shape.elements < 1500, `${shape.elements} elements`);
      assert.match(shape.dropped, /^[\d,]+ earlier items not shown/);
      assert.equal(shape.text.length, 32 * 1024);
      assert.ok(shape.text.endsWith("y done"));
      assert.equal(
        shape.cut,
        `${(20_000 * 100 + 4 - 32 * 1024).toLocaleString("en")} earlier characters not shown`,
      );
      // Still answering: a folded result opens at a click.
      await page.click(".item.tool summary");
      await waitPage(
        page,
        "an opened result",
        (doc) => (doc.querySelector(".item.tool pre")?.textContent ?? "").includes("missing-tool"),
      );
      await screenshot(page, shots, "flood");
    } finally {
      await chrome.close();
      await cap.close();
    }
  },
});
