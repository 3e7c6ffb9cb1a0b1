/**
 * The body cap (docs/door.md): a JSON-RPC body over 8 MiB is refused with 413, from its
 * Content-Length before anything is read, or as soon as the bytes read pass the cap.
 */
import { json } from "./responses.ts";

/** Request bodies over this are refused with 413 before they are read (docs/door.md). */
export const BODY_CAP_BYTES = 8 * 1024 * 1024;

export function tooLarge(): Response {
  return json(
    413,
    JSON.stringify({
      error: "payload_too_large",
      message:
        `this door reads request bodies of at most ${BODY_CAP_BYTES} bytes (8 MiB); send a smaller message`,
    }),
  );
}

/** The body, or why it was not read whole: over the cap, or cut before its announced end. */
export async function readCapped(req: Request): Promise<Uint8Array | "too-large" | "cut"> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > BODY_CAP_BYTES) return "too-large";
  if (declared !== null) {
    // A declared length within the cap bounds what the HTTP layer hands over: read it whole, in
    // one call (reading the body as a stream costs a promise and a chunk per read, about a
    // tenth of a replay's time at the door).
    try {
      return new Uint8Array(await req.arrayBuffer());
    } catch {
      return "cut";
    }
  }
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let n = 0;
  const reader = req.body.getReader();
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await reader.read();
    } catch {
      // The body ended before its Content-Length (or its chunked framing broke).
      return "cut";
    }
    const { done, value } = step;
    if (done) break;
    n += value.length;
    if (n > BODY_CAP_BYTES) {
      await reader.cancel().catch(() => {});
      return "too-large";
    }
    chunks.push(value);
  }
  const out = new Uint8Array(n);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}
