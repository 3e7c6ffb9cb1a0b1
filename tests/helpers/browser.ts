/** Test helper: the chromium the browser tests drive (scripts/chromium.ts), and screenshots. */
import type { Page } from "playwright-core";
export { CHROMIUM, type Chromium, startChromium } from "../../scripts/chromium.ts";

/**
 * Saves a screenshot in `dir` and says where (the test's own temp folder): the viewport, or the
 * whole page when `fullPage` (slow on a page many screens tall).
 */
export async function screenshot(
  page: Page,
  dir: string,
  name: string,
  fullPage = false,
): Promise<string> {
  const path = `${dir}/${name}.png`;
  await page.screenshot({ path, fullPage });
  console.log(`screenshot: ${path}`);
  return path;
}
