/**
 * Debian's chromium, headless, started by pid with a fresh profile and driven over the DevTools
 * protocol by `playwright-core` (connectOverCDP), for the live page's browser tests (tests/ui/)
 * and its bench row (scripts/bench/page.ts). The process is ours, not `chromium.launch`'s, so
 * whoever starts it kills it by pid, and the flags are exactly these: without the
 * background-networking ones chromium keeps dialling out to a network this machine lacks. No
 * browser is ever downloaded: `MUR_CHROMIUM` or /usr/bin/chromium (`apt-get install chromium`).
 */
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = Deno.env.get("MUR_CHROMIUM") ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  "--remote-debugging-port=0",
];

export interface Chromium {
  browser: Browser;
  pid: number;
  /** A new page in its own context (own storage), at the given viewport. */
  page(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/** Starts chromium and connects to it; throws with its stderr when it does not come up. */
export async function startChromium(): Promise<Chromium> {
  const profile = await Deno.makeTempDir({ prefix: "mur-chromium-" });
  const proc = new Deno.Command(CHROMIUM, {
    args: [...FLAGS, `--user-data-dir=${profile}`, "about:blank"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = proc.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let err = "";
  let ws: string | null = null;
  const timer = setTimeout(() => kill(proc.pid), 30_000);
  while (ws === null) {
    const { done, value } = await reader.read();
    if (done) break;
    err += value;
    ws = /DevTools listening on (ws:\/\/\S+)/.exec(err)?.[1] ?? null;
  }
  clearTimeout(timer);
  // Keep draining stderr so chromium never blocks on a full pipe.
  const drained = (async () => {
    try {
      while (!(await reader.read()).done) { /* discard */ }
    } catch { /* closed */ }
  })();
  if (ws === null) {
    kill(proc.pid);
    await proc.status;
    await drained;
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    throw new Error(`chromium did not start:\n${err.slice(-2000)}`);
  }
  const browser = await chromium.connectOverCDP(ws);
  return {
    browser,
    pid: proc.pid,
    async page(viewport = { width: 1100, height: 900 }) {
      const ctx = await browser.newContext({ viewport });
      return await ctx.newPage();
    },
    async close() {
      await Promise.race([
        browser.close().catch(() => {}),
        new Promise((r) => setTimeout(r, 3000)),
      ]);
      kill(proc.pid);
      await proc.status;
      await drained;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

function kill(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* already gone */ }
}
