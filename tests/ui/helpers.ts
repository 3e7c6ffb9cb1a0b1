/**
 * Shared pieces of the live page's browser tests: a capsule manifest that exercises every kind of
 * event the page draws, a tiny PNG a command tool returns, and DOM waits with a bound.
 */
import type { Page } from "playwright-core";

/** A real 64×40 PNG (checkerboard), so the browser decodes it and reports its size. */
export const PNG_B64 =
  "iVBORw0KGgoAAAANSUhEUgAAAEAAAAAoCAIAAADBrGu+AAAAVUlEQVR42u3XoQ0AIAwEwC7CbCyJZykGYIGiaiBc8vJFT30arc80a0Sa2/oBAAAAAFACvHLoqQ8AAAAAUANYYgAAAAD/gCUGAAAA8A9YYgAAAIAvARsJLW/TDzhV8gAAAABJRU5ErkJggg==";

/** A command tool printing an MCP CallToolResult with one image. */
export const SNAP_TOOL = {
  name: "snap",
  description: "Takes a picture of the chart",
  input_schema: { type: "object" },
  command: ["./tools/snap.sh"],
};
export const SNAP_FILES = {
  "tools/snap.sh":
    `#!/bin/sh\ncat >/dev/null\nprintf '{"content":[{"type":"text","text":"chart.png saved"},` +
    `{"type":"image","mimeType":"image/png","data":"${PNG_B64}"}]}'\n`,
};

/**
 * The page's `document` inside `waitPage` and `inPage` callbacks. Loosely typed: the tests are
 * type-checked with Deno's library, not the DOM's (the page's own code is checked with the DOM
 * library by src/ui/page/dom_check.json).
 */
// deno-lint-ignore no-explicit-any
export type Doc = any;

/** `fn` as an expression the page evaluates, called with its `document` and `arg`. */
function inBrowser<A>(fn: (doc: Doc, arg: A) => unknown, arg: A | undefined): string {
  return `(${fn.toString()})(document, ${JSON.stringify(arg ?? null)})`;
}

/**
 * Waits until `fn` (run in the page) returns something truthy, failing after `ms` with `what`
 * and the page's text. Polls with DevTools evaluation (the page's CSP forbids the `eval` that
 * Playwright's waitForFunction uses for a string predicate).
 */
export async function waitPage<A>(
  page: Page,
  what: string,
  fn: (doc: Doc, arg: A) => unknown,
  arg?: A,
  ms = 30_000,
): Promise<void> {
  const expr = inBrowser(fn, arg);
  const deadline = Date.now() + ms;
  for (;;) {
    if (await page.evaluate(expr)) return;
    if (Date.now() > deadline) {
      const text = await page.locator("body").innerText().catch(() => "(no page text)");
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}\n--- page text ---\n${text.slice(0, 4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** Runs `fn` in the page and returns what it returned (JSON-serialisable). */
export async function inPage<T, A = null>(
  page: Page,
  fn: (doc: Doc, arg: A) => T,
  arg?: A,
): Promise<T> {
  return await page.evaluate(inBrowser(fn, arg)) as T;
}

/** The text of the first element matching `selector` (empty when none). */
export async function textOf(page: Page, selector: string): Promise<string> {
  return await inPage(page, (doc, s) => doc.querySelector(s)?.textContent ?? "", selector);
}

/** Page files are not data: the test folder for screenshots outlives the capsule's. */
export async function shotsDir(name: string): Promise<string> {
  return await Deno.makeTempDir({ prefix: `mur-ui-${name}-` });
}
