/**
 * The live page (docs/live-page.md) as an edge serves it for one session, under
 * `/sessions/<id>/ui`: the door's files, with the page's own links in index.html moved under the
 * session's path (the page's scripts find their door from their own URL: src/ui/page/client.js).
 * The files hold no session data: served without a token, as the door serves them.
 */
import { pageAssets } from "../ui/assets.ts";
import { pageFile, servePage } from "../ui/routes.ts";

/** The page file `rest` (the path under the session) asks for, or null. */
export function edgePageFile(req: Request, rest: string): string | null {
  return pageFile(req, new URL(rest, "http://edge"));
}

export async function serveEdgePage(req: Request, name: string, basePath: string) {
  if (name !== "index.html") return await servePage(req, name);
  const asset = (await pageAssets()).get(name)!;
  const html = new TextDecoder().decode(asset.body).replaceAll('"/ui/', `"${basePath}/ui/`);
  const res = await servePage(req, name);
  const headers = new Headers(res.headers);
  await res.body?.cancel();
  // Its own tag: the bytes differ from the door's.
  const etag = `"${asset.etag.replaceAll('"', "")}-${basePath.split("/").pop()}"`;
  headers.set("etag", etag);
  const match = req.headers.get("if-none-match");
  if (match !== null && match.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) {
    return new Response(null, { status: 304, headers });
  }
  const body = new TextEncoder().encode(html);
  headers.set("content-length", String(body.length));
  return new Response(req.method === "HEAD" ? null : body, { status: 200, headers });
}
