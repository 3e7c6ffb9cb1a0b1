/**
 * An SSE response and the two request headers every stream endpoint reads, shared by the door
 * (src/door/streams.ts) and `mur edge` (src/edge/server.ts), so both answer with the same headers:
 * `A2A-Extensions` naming the stream extension activates it; `Last-Event-ID` resumes a stream.
 */
import { STREAM_URI } from "../events/frames.ts";

/** The request named the stream extension in any A2A-Extensions line (exact match). */
export function activates(headers: Headers): boolean {
  const raw = headers.get("a2a-extensions");
  if (!raw) return false;
  return raw.split(",").map((s) => s.trim()).filter(Boolean).includes(STREAM_URI);
}

/** `Last-Event-ID` as a u64, or undefined when absent or not a number. */
export function lastEventId(headers: Headers): number | undefined {
  const raw = headers.get("last-event-id");
  if (raw === null) return undefined;
  const v = raw.trim();
  if (!/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** An SSE body with the headers every stream answers with, and the extensions it used. */
export function sseResponse(body: ReadableStream<Uint8Array>, extensions: string[]): Response {
  const headers = new Headers({
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
  });
  if (extensions.length) headers.set("A2A-Extensions", extensions.join(", "));
  return new Response(body, { headers });
}
