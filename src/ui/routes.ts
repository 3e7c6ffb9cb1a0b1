/**
 * The door's routes for the live page (docs/live-page.md):
 *
 * - `GET /ui`, `GET /ui/<file>`, and `GET /` when the request accepts `text/html`: the page's
 *   files. They hold no session data, so they are served without a token even on an
 *   authenticated door; every data call the page makes carries its token.
 * - `GET /ui/status`: what the page needs beyond the event stream — the caller's scopes (which
 *   controls to show), the tokens the session has spent, the heartbeat interval, and the lane
 *   and origin of the tasks it names. Behind the door's token gate, with the
 *   `murmur.WatchSession` scope: it tells nothing a watcher could not already see.
 *
 * JSON-RPC at `POST /` and the agent card are untouched: the page is one more client of them.
 */
import { SCOPES } from "../a2a/methods.ts";
import type { Session } from "../session/session.ts";
import { type Asset, pageAssets } from "./assets.ts";

export const UI_PATH = "/ui";
export const UI_STATUS_PATH = "/ui/status";
/** `?task=` values `/ui/status` answers at most; the rest are ignored. */
export const STATUS_TASKS_MAX = 100;

/**
 * The page may run its own modules, talk to this door, and show images it fetched itself
 * (attachments arrive as blobs, since an authenticated door needs the token on them).
 */
const PAGE_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // Revalidated each load (ETag): a rebuilt binary serves its own page at once.
  "cache-control": "no-cache",
};

/** Browsers navigating to a page send `Accept: text/html,…`; API clients do not. */
function acceptsHtml(req: Request): boolean {
  return (req.headers.get("accept") ?? "").toLowerCase().includes("text/html");
}

/** The page file a request asks for, or null when it is not a page request. */
export function pageFile(req: Request, url: URL): string | null {
  if (req.method !== "GET" && req.method !== "HEAD") return null;
  const p = url.pathname;
  if (p === "/" && acceptsHtml(req)) return "index.html";
  if (p === UI_PATH || p === `${UI_PATH}/`) return "index.html";
  if (p.startsWith(`${UI_PATH}/`) && p !== UI_STATUS_PATH) return p.slice(UI_PATH.length + 1);
  return null;
}

/** Serves a page file (404 when `/ui/<name>` names none). */
export async function servePage(req: Request, name: string): Promise<Response> {
  const asset: Asset | undefined = (await pageAssets()).get(name);
  if (!asset) return new Response(null, { status: 404 });
  const headers = { ...PAGE_HEADERS, "content-type": asset.contentType, etag: asset.etag };
  const match = req.headers.get("if-none-match");
  if (match !== null && match.split(",").some((t) => t.trim().replace(/^W\//, "") === asset.etag)) {
    return new Response(null, { status: 304, headers });
  }
  const body = req.method === "HEAD" ? null : asset.body as BodyInit;
  return new Response(body, {
    headers: { ...headers, "content-length": String(asset.body.length) },
  });
}

export interface StatusCaller {
  /** null on a door without authentication. */
  credential: string | null;
  scopes: ReadonlySet<string> | null;
}

export interface UiStatus {
  sessionId: string;
  capsule: { name: string; version: string; transport: string; driver: string };
  /** Whether the door asks for a token. */
  authenticated: boolean;
  credential: string | null;
  /** The methods the caller's token reaches: every door method on a public door. */
  scopes: string[];
  /** `MURMUR_HEARTBEAT_MS`: the page judges a connection's health against it. */
  heartbeatMs: number;
  /**
   * Input and output tokens of every driver call so far, as `inference.max_session_tokens`
   * counts them (estimated at 4 characters a token when a driver reports no usage).
   */
  tokens: { used: number; ceiling: number | null };
  /**
   * Lane, origin and source of each task asked for with `?task=` that the registry holds, and
   * its request: the task's text as the model receives it, its first REQUEST_CHARS characters.
   */
  tasks: Record<string, { lane: string; origin: string; source: string; request: string }>;
  /**
   * The input of each tool call asked for with `?call=<task id>/<call id>` that the task still
   * holds (src/session/call_inputs.ts): compact JSON, cut at 2,000 characters. The page shows a
   * call's command beside its result.
   */
  calls: Record<string, string>;
  /**
   * The id of the newest event when this status was made: the page paints its first picture of
   * the session once its stream has caught up to it (app.js), not before.
   */
  lastId: number;
  /** Tool sources that are down now (docs/mcp.md); absent when there are none. */
  sourceErrors?: { kind: string; source: string; message: string }[];
}

/** How much of a task's request `/ui/status` gives (the page shows it above the task's work). */
export const REQUEST_CHARS = 2000;

export function uiStatus(
  session: Session,
  url: URL,
  caller: StatusCaller,
  heartbeatMs: number,
): UiStatus {
  const m = session.manifest;
  const down = session.sourceErrors();
  const tasks: UiStatus["tasks"] = {};
  for (const id of url.searchParams.getAll("task").slice(0, STATUS_TASKS_MAX)) {
    const t = session.registry.get(id);
    if (t) {
      tasks[t.id] = {
        lane: t.lane,
        origin: t.origin,
        source: t.source,
        request: t.text.length > REQUEST_CHARS ? `${t.text.slice(0, REQUEST_CHARS)}…` : t.text,
      };
    }
  }
  return {
    sessionId: session.id,
    capsule: {
      name: m.name,
      version: m.version,
      transport: m.inference.transport,
      driver: m.inference.driver,
    },
    authenticated: caller.scopes !== null,
    credential: caller.credential,
    scopes: SCOPES.filter((s) => caller.scopes === null || caller.scopes.has(s)),
    heartbeatMs,
    tokens: { used: session.spend.used, ceiling: session.spend.ceiling ?? null },
    tasks,
    ...(down.length > 0 && { sourceErrors: down }),
    calls: callInputs(session, url),
    lastId: session.log.lastId,
  };
}

/** `?call=<task id>/<call id>` → the inputs the tasks hold (at most STATUS_TASKS_MAX asked). */
function callInputs(session: Session, url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of url.searchParams.getAll("call").slice(0, STATUS_TASKS_MAX)) {
    const at = key.indexOf("/");
    if (at < 0) continue;
    const input = session.registry.get(key.slice(0, at))?.callInputs?.get(key.slice(at + 1));
    if (input !== undefined) out[key] = input;
  }
  return out;
}

/** The page's address for a door at `localhost:<port>` (printed by `mur run -v` and `mur ps`). */
export function pageUrl(address: string): string {
  return `http://${address}${UI_PATH}`;
}
