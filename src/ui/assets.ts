/**
 * The live page's files (src/ui/page/), shipped in the binary: read once from src/ui/page/ (src/module_root.ts finds it from
 * source and from the bundle), which works under `deno run` and in a `deno compile` binary alike (scripts/build.ts includes
 * `src/`, so the page is in its embedded file system). No build step: the browser gets the files
 * exactly as they are in the repository.
 */

import { sourceFile } from "../module_root.ts";

/** Files the door serves under `/ui/`, with their media types. `index.html` is the page itself. */
export const PAGE_FILES: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "client.js": "text/javascript; charset=utf-8",
  "model.js": "text/javascript; charset=utf-8",
  "sse.js": "text/javascript; charset=utf-8",
  "view.js": "text/javascript; charset=utf-8",
  "approval.js": "text/javascript; charset=utf-8",
  "steer.js": "text/javascript; charset=utf-8",
  "icon.svg": "image/svg+xml",
};

export interface Asset {
  body: Uint8Array;
  contentType: string;
  /** Strong ETag: the first 16 hex digits of the file's SHA-256. */
  etag: string;
}

async function load(): Promise<Map<string, Asset>> {
  const out = new Map<string, Asset>();
  for (const [name, contentType] of Object.entries(PAGE_FILES)) {
    const body = await Deno.readFile(sourceFile(`ui/page/${name}`));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body as BufferSource));
    const hex = [...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
    out.set(name, { body, contentType, etag: `"${hex}"` });
  }
  return out;
}

let loaded: Promise<Map<string, Asset>> | null = null;

/** Every page file, read on first use and kept (about 60 KiB). */
export function pageAssets(): Promise<Map<string, Asset>> {
  loaded ??= load();
  return loaded;
}

/** The page's size as a browser downloads it: every file, uncompressed. */
export async function pageBytes(): Promise<number> {
  let n = 0;
  for (const a of (await pageAssets()).values()) n += a.body.length;
  return n;
}
