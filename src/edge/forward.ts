/**
 * An edge forwards what changes a session (SendMessage, SendStreamingMessage, CancelTask,
 * murmur.StopSession) to the capsule's own door, at the address the capsule published: the same
 * body, the headers the door reads, the door's answer streamed back as it comes. The capsule's
 * door checks the token again; the edge adds nothing and keeps nothing.
 */
import { rebaseStream } from "./rebase_stream.ts";

/** Request headers the door reads (docs/protocol.md; docs/door.md). */
const PASSED = [
  "authorization",
  "accept",
  "content-type",
  "a2a-version",
  "a2a-extensions",
  "last-event-id",
];
// Not `x-murmur-task-origin` nor `x-murmur-task-trust`: an edge's callers are outside callers, and
// a peer's claim is the capsule runtime's to stamp, never theirs (src/door/peer_tasks.ts). Dropped,
// a request reaches the door as origin `event`, untrusted.
/** Answer headers a client reads. */
const RETURNED = ["content-type", "cache-control", "a2a-extensions", "www-authenticate"];

/** The request as the door is to get it: the JSON-RPC POST, or the HTTP+JSON route's. */
export interface Forwarded {
  method: string;
  /** Path and query on the door (`/`, `/tasks/<id>:cancel`, …). */
  path: string;
  body: BodyInit | null;
}

/**
 * Sends the request to the capsule's door; a door that does not answer is `unreachable`'s
 * answer in the caller's binding.
 */
export async function forward(
  door: string,
  req: Request,
  to: Forwarded,
  unreachable: (message: string) => Response,
  /** Published files' urls naming the door → naming the edge (rebase_stream.ts). */
  rebase?: { from: string; to: string },
): Promise<Response> {
  const headers = new Headers();
  for (const h of PASSED) {
    const v = req.headers.get(h);
    if (v !== null) headers.set(h, v);
  }
  if (to.body !== null && !headers.has("content-type")) {
    headers.set("content-type", "application/json");
  }
  let res: Response;
  try {
    res = await fetch(new URL(to.path, door), { method: to.method, headers, body: to.body });
  } catch (e) {
    return unreachable(
      `the capsule's door at ${door} did not answer (${
        (e as Error).message
      }); the session may have ended`,
    );
  }
  const out = new Headers();
  for (const h of RETURNED) {
    const v = res.headers.get(h);
    if (v !== null) out.set(h, v);
  }
  const body = rebase && res.body
    ? res.body.pipeThrough(rebaseStream(rebase.from, rebase.to))
    : res.body;
  return new Response(body, { status: res.status, headers: out });
}

/** A GET the capsule's door answers with bytes (an attachment), passed through as it comes. */
export async function forwardGet(door: string, path: string, req: Request): Promise<Response> {
  const headers = new Headers();
  const auth = req.headers.get("authorization");
  if (auth !== null) headers.set("authorization", auth);
  let res: Response;
  try {
    res = await fetch(new URL(path, door), { headers });
  } catch {
    return new Response(null, { status: 502 });
  }
  const out = new Headers();
  for (const h of ["content-type", "content-length", "content-disposition"]) {
    const v = res.headers.get(h);
    if (v !== null) out.set(h, v);
  }
  return new Response(res.body, { status: res.status, headers: out });
}
