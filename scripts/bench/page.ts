/**
 * The live page's bench row (issue 17), self-contained: its size as a browser downloads it, and
 * its cost to the capsule — mur's K=100 WatchSession flood throughput with the page open in a
 * real headless chromium beside the 100 watchers, over the same flood without it, alternated
 * within one `mur run` so the ratio is measured against the run's own spread (the noise).
 *
 * Returns a markdown section for BENCHMARKS.md; anything that cannot run (no chromium, a failed
 * flood) becomes a "not available: <why>" line, never a failed bench.
 */
import { pageAssets } from "../../src/ui/assets.ts";
import { type Chromium, startChromium } from "../chromium.ts";
import { checkRun, COMPLETED, type Ctx } from "./measure.ts";
import { type MurTaskKind, taskText, writeCapsule } from "./mur_capsule.ts";
import { kill, murCmd, spawnReady } from "./procs.ts";
import { median } from "./stats.ts";

const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };
/** Flood pairs (without, with) per run, alternating which goes first. */
const PAIRS = 4;

export interface PageFigures {
  bytes: number;
  files: number;
  without: number[];
  withPage: number[];
  /** Events the page reported lost over the floods it followed (it should keep up). */
  pageLost: number;
}

/** The section's markdown, from what was measured. */
export function pageSection(
  f: PageFigures | null,
  why: string | null,
  bytes: number,
  files: number,
) {
  const size = `${(bytes / 1024).toFixed(1)} KiB in ${files} files (uncompressed; no build step)`;
  const head = "## The live page\n\n" +
    "The page the door serves at `/ui` (src/ui/page/), and its cost to the capsule: mur's K=100 " +
    "WatchSession flood with the page open in headless chromium beside the 100 watchers, over " +
    "the same flood without it, alternated within one `mur run` (scripts/bench/page.ts).\n\n";
  if (!f) return `${head}- Page size: ${size}\n- Cost: not available: ${why}\n`;
  const wo = median(f.without);
  const wi = median(f.withPage);
  const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
  const noise = Math.max(spread(f.without), spread(f.withPage));
  const ratio = wi / wo;
  const verdict = Math.abs(1 - ratio) <= noise
    ? "within the noise"
    : ratio > 1
    ? "above the noise (faster with the page)"
    : "below the noise: the page costs throughput";
  const list = (xs: number[]) => xs.map((x) => Math.round(x).toLocaleString("en")).join(", ");
  return head +
    `| measure | value |\n| --- | --- |\n` +
    `| page size | ${size} |\n` +
    `| K=100 events/s without the page (median of ${f.without.length}) | ${
      Math.round(wo).toLocaleString("en")
    } (${list(f.without)}) |\n` +
    `| K=100 events/s with the page open (median of ${f.withPage.length}) | ${
      Math.round(wi).toLocaleString("en")
    } (${list(f.withPage)}) |\n` +
    `| with / without | ${ratio.toFixed(3)}× |\n` +
    `| noise (largest spread of either set, (max − min) / median) | ±${
      (noise * 100).toFixed(1)
    } % |\n` +
    `| events the page reported lost while following the floods | ${f.pageLost} |\n\n` +
    `Goal: the page changes throughput by less than the noise — ${verdict}.\n`;
}

export async function benchPage(ctx: Ctx, dir: string): Promise<string> {
  const assets = await pageAssets();
  let bytes = 0;
  for (const a of assets.values()) bytes += a.body.length;
  const files = assets.size;
  ctx.log(`page: ${bytes} bytes in ${files} files`);
  let chrome: Chromium | null = null;
  let pid = 0;
  try {
    try {
      chrome = await startChromium();
    } catch (e) {
      return pageSection(
        null,
        `chromium did not start (${(e as Error).message.split("\n")[0]})`,
        bytes,
        files,
      );
    }
    const n = ctx.plan.floodN[100] ?? 3000;
    const kind: MurTaskKind = { mode: "watch", n, rate: 0, gateMs: 0 };
    const capDir = await Deno.makeTempDir({ dir, prefix: "page-" });
    const manifest = await writeCapsule(capDir, [kind]);
    const s = await spawnReady({
      name: "mur run (page)",
      cmd: murCmd(manifest, `${capDir}/wd`),
      env: { MURMUR_HOME: `${capDir}/home`, NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "1000" },
      core: 0,
      readyTimeoutMs: 30_000,
    });
    pid = s.pid;
    const host = "127.0.0.1";
    const port = Number(String(s.ready.url).split(":").pop());
    let seq = 0;
    let lastId = 0;
    const flood = async () => {
      const r = checkRun(
        await ctx.lg.run({
          host,
          port,
          k: 100,
          preamble: 1,
          startMarker: '"frame":"text"',
          endMarker: COMPLETED,
          idleMs: 3_000,
          timeoutMs: 60_000,
          request: {
            path: "/",
            headers: { ...HEADERS, "Accept": "text/event-stream", "Last-Event-ID": String(lastId) },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "murmur.WatchSession",
              params: {},
            }),
          },
          trigger: {
            url: `http://${host}:${port}/`,
            headers: HEADERS,
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: ++seq,
              method: "SendMessage",
              params: {
                message: {
                  messageId: `page-${seq}`,
                  role: "ROLE_USER",
                  parts: [{ text: taskText(kind) }],
                },
                configuration: { returnImmediately: true },
              },
            }),
          },
        }),
      );
      lastId = Math.max(lastId, r.maxId);
      return r.rate;
    };
    const page = await chrome.page();
    const open = async () => {
      await page.goto(`http://${host}:${port}/ui`);
      const deadline = Date.now() + 20_000;
      while ((await page.evaluate(`document.getElementById("conn")?.dataset.kind`)) !== "live") {
        if (Date.now() > deadline) throw new Error("the page did not connect within 20 s");
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const lost = async () =>
      Number(await page.evaluate(`document.getElementById("events").dataset.lost`));
    // Warm both paths once, unmeasured.
    await flood();
    await open();
    await flood();
    const f: PageFigures = { bytes, files, without: [], withPage: [], pageLost: 0 };
    for (let i = 0; i < PAIRS; i++) {
      for (const withPage of i % 2 === 0 ? [false, true] : [true, false]) {
        if (withPage) await open();
        else await page.goto("about:blank");
        const before = withPage ? await lost() : 0;
        const rate = await flood();
        if (withPage) {
          // The page has seen the flood's end before it counts as followed.
          const want = lastId;
          const deadline = Date.now() + 30_000;
          while (
            Number(await page.evaluate(`document.getElementById("events").dataset.lastId`)) < want
          ) {
            if (Date.now() > deadline) throw new Error("the page did not reach the flood's end");
            await new Promise((r) => setTimeout(r, 50));
          }
          f.pageLost += (await lost()) - before;
        }
        (withPage ? f.withPage : f.without).push(rate);
        ctx.log(`  page ${withPage ? "open" : "closed"}: ${Math.round(rate)} events/s`);
      }
    }
    return pageSection(f, null, bytes, files);
  } catch (e) {
    return pageSection(null, (e as Error).message, bytes, files);
  } finally {
    if (pid) kill(pid);
    await chrome?.close();
  }
}
