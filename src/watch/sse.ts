/**
 * Server-sent events from a response body: `{id, data}` per event, and `{comment}` per comment
 * line (the heartbeat, `:heartbeat`). Framing is the standard's (./sse_parser.ts), so CRLF, split
 * chunks and multi-line data all parse.
 */
import { SseParser } from "./sse_parser.ts";

export interface SseEvent {
  /** The event's own `id:` line, when it had one (ids do not carry over between events here). */
  id?: string;
  data: string;
}

/** A comment line without its `:`. On a capsule's stream the heartbeat is the only one. */
export interface SseComment {
  comment: string;
}

/**
 * Yields each event as soon as its blank line arrives; ends when the body ends. The body is any
 * async iterable of bytes (a fetch body, or src/http/http1_client.ts's, which loads no web
 * streams); leaving early (capsule-closed) ends the iteration, which closes the connection.
 */
export async function* sseEvents(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<SseEvent | SseComment> {
  const queue: (SseEvent | SseComment)[] = [];
  const parser = new SseParser({
    event: (id, data) => queue.push({ id, data }),
    // A heartbeat follows everything the door had queued for this connection when it was
    // written (docs/streams.md); `mur watch --task` reads it as "the replay is over".
    comment: (c) => queue.push({ comment: c }),
  });
  const dec = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(dec.decode(bytes, { stream: true }));
    while (queue.length) yield queue.shift()!;
  }
  parser.feed(dec.decode());
  while (queue.length) yield queue.shift()!;
}
