/**
 * The tests' one SSE reader: the product's own (src/watch/sse.ts `sseEvents`, the framing
 * `mur watch` reads with), turned into the shape tests assert on — `{id, data}` with the id a
 * number and the data parsed JSON, comments (heartbeats) reported apart. Tests that check bytes
 * (raw_sse.ts, reliability/helpers/http.ts) read the socket themselves and hand the de-chunked
 * body here, so what they parse is parsed as a client does.
 */
import { sseEvents } from "../../src/watch/sse.ts";

export const STREAM_URI =
  "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";

export interface SseEvent {
  id: number | null;
  data: Record<string, unknown>;
}

/** An event or comment from sseEvents, in the tests' shape. */
export type SseItem = { event: SseEvent } | { comment: string };

/** Events and comments of a byte stream, in order, as they arrive. */
export async function* sseItems(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseItem> {
  for await (const item of sseEvents(body)) {
    if ("comment" in item) yield { comment: item.comment };
    else {
      yield {
        event: { id: item.id === undefined ? null : Number(item.id), data: JSON.parse(item.data) },
      };
    }
  }
}

/**
 * Reads SSE events from a response body; comments (heartbeats) are counted separately. Leaving
 * early cancels the body, which closes the connection: a test that stops reading hangs up.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  onComment?: (text: string) => void,
): AsyncGenerator<SseEvent> {
  for await (const item of sseItems(body)) {
    if ("comment" in item) onComment?.(item.comment);
    else yield item.event;
  }
}

/** The `data` of every complete event in a whole body (the bytes a raw client kept). */
export async function sseData(body: Uint8Array): Promise<string[]> {
  const out: string[] = [];
  for await (const item of sseEvents(once(body))) if (!("comment" in item)) out.push(item.data);
  return out;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** POSTs a streaming method and returns the response (caller reads the body). */
export function streamRequest(
  base: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
  id: string | number = "s1",
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(base + "/", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    signal,
  });
}

/** Collects events until `until` says stop or the stream ends, bounded by `ms`. */
export async function collect(
  res: Response,
  until: (e: SseEvent, all: SseEvent[]) => boolean = () => false,
  ms = 15_000,
  onComment?: (text: string) => void,
): Promise<SseEvent[]> {
  const all: SseEvent[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const reading = (async () => {
      for await (const e of readSse(res.body!, onComment)) {
        all.push(e);
        if (until(e, all)) break;
      }
    })();
    await Promise.race([
      reading,
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error(`stream not done in ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await res.body?.cancel().catch(() => {});
  }
  return all;
}

/** The frame under metadata[STREAM_URI] of an event, if any. */
export function frameOf(e: SseEvent): Record<string, unknown> | undefined {
  const r = e.data.result as Record<string, Record<string, unknown>>;
  const holder = r?.statusUpdate ?? r?.message;
  const md = holder?.metadata as Record<string, Record<string, unknown>> | undefined;
  return md?.[STREAM_URI];
}

/**
 * An artifact frame's keys, every one present and in this order (docs/protocol.md "Standard
 * events"), written out once for the tests that check them.
 */
export const ARTIFACT_FRAME_KEYS = [
  "frame",
  "toolName",
  "content",
  "fenceSource",
  "toolCallId",
  "isError",
  "durationMs",
  "exitCode",
  "truncated",
  "attachments",
];
