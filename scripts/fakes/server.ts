/**
 * A fake model provider on loopback: one `Deno.serve` that speaks one provider's wire format,
 * records every request it receives (so tests check what a driver sent), and answers each with
 * the next scripted turn, rendered in that format, with faults injected where the turn asks.
 */
import type { FakeTurn, WireChunk } from "./plan.ts";
import { anthropicWire } from "./anthropic.ts";
import { openaiChatWire } from "./openai_chat.ts";
import { openaiResponsesWire } from "./openai_responses.ts";

/** One provider's wire format. */
export interface ProviderWire {
  /** The one path the provider serves, e.g. `/v1/messages`. */
  path: string;
  authorized(req: Request, apiKey: string | undefined): boolean;
  errorBody(status: number, message: string | undefined, req: Request): unknown;
  /** The provider's in-stream error event. */
  streamErrorEvent(message?: string): string;
  /** An event whose data is not valid JSON. */
  malformedEvent(): string;
  render(turn: FakeTurn, model: string): WireChunk[];
}

export type FakeProviderKind = "anthropic" | "openai-chat" | "openai-responses";

export const WIRES: Record<FakeProviderKind, ProviderWire> = {
  "anthropic": anthropicWire,
  "openai-chat": openaiChatWire,
  "openai-responses": openaiResponsesWire,
};

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (`null` when it was not JSON). */
  body: Record<string, unknown> | null;
}

export interface FakeProviderOptions {
  kind: FakeProviderKind;
  /** When set, a request without this key is refused 401 as the provider would. */
  apiKey?: string;
  /** The turns to answer with, in request order, or a function choosing one per request. */
  turns: FakeTurn[] | ((req: RecordedRequest, index: number) => FakeTurn);
  /** Default 0: an OS-assigned port. */
  port?: number;
  hostname?: string;
}

export interface FakeProvider {
  /** The base URL a driver's `endpoint` takes, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every request received, in order (including refused ones). */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export function startFakeProvider(opts: FakeProviderOptions): FakeProvider {
  const wire = WIRES[opts.kind];
  const requests: RecordedRequest[] = [];
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let answered = 0;

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });

  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const text = await req.text();
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    const recorded: RecordedRequest = {
      method: req.method,
      path: url.pathname,
      headers: Object.fromEntries(req.headers),
      body,
    };
    requests.push(recorded);
    if (url.pathname !== wire.path) {
      return json(404, wire.errorBody(404, `no route ${url.pathname}`, req));
    }
    if (req.method !== "POST") return json(405, wire.errorBody(400, "POST only", req));
    if (!wire.authorized(req, opts.apiKey)) return json(401, wire.errorBody(401, undefined, req));
    if (body === null) return json(400, wire.errorBody(400, "body is not JSON", req));

    const index = answered++;
    const turn = typeof opts.turns === "function" ? opts.turns(recorded, index) : opts.turns[index];
    if (!turn) {
      return json(
        400,
        wire.errorBody(400, `fake provider: no scripted turn for request ${index + 1}`, req),
      );
    }
    const fault = turn.fault;
    if (fault?.kind === "status") {
      const headers: Record<string, string> = {};
      if (fault.retryAfterSecs !== undefined) headers["retry-after"] = String(fault.retryAfterSecs);
      return json(fault.status, wire.errorBody(fault.status, fault.message, req), headers);
    }
    const model = typeof body.model === "string" ? body.model : "fake-model";
    const chunks = wire.render(turn, model);
    return new Response(streamOf(chunks, turn), {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "request-id": `req_fake${index}`,
      },
    });
  };

  /**
   * Write the rendered chunks with their pauses, injecting the turn's fault. Pull-based, so a
   * chunk is produced only once the server has taken the previous one: a cut then happens after
   * the earlier events really went out, not while they still sat in the stream's queue.
   */
  const streamOf = (chunks: WireChunk[], turn: FakeTurn) => {
    const enc = new TextEncoder();
    const fault = turn.fault?.kind === "status" ? undefined : turn.fault;
    let next = 0;
    let events = 0;
    let faulted = false;
    let ctl: ReadableStreamDefaultController<Uint8Array> | undefined;
    const finish = (how: "close" | "cut") => {
      if (ctl) open.delete(ctl);
      if (how === "close") ctl?.close();
      // Erroring the body makes Deno drop the connection without the final chunk.
      else ctl?.error("fake provider: connection cut (injected fault)");
    };
    return new ReadableStream<Uint8Array>({
      start(controller) {
        ctl = controller;
        open.add(controller);
      },
      async pull(controller) {
        while (next < chunks.length) {
          if (fault && !faulted && events === fault.afterEvents) {
            faulted = true;
            if (fault.kind === "cut") {
              await sleep(20); // let the events already taken reach the socket
              return finish("cut");
            }
            if (fault.kind === "stall") return await new Promise<void>(() => {}); // until close()
            if (fault.kind === "end") return finish("close");
            if (fault.kind === "stream-error") {
              controller.enqueue(enc.encode(wire.streamErrorEvent(fault.message)));
              return finish("close");
            }
            controller.enqueue(enc.encode(wire.malformedEvent()));
            return;
          }
          const chunk = chunks[next++];
          if (typeof chunk !== "string") {
            await sleep(chunk.delayMs);
            continue;
          }
          events++;
          controller.enqueue(enc.encode(chunk));
          return;
        }
        finish("close");
      },
      cancel() {
        if (ctl) open.delete(ctl);
      },
    }, { highWaterMark: 0 });
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const server = Deno.serve({
    hostname: opts.hostname ?? "127.0.0.1",
    port: opts.port ?? 0,
    onListen: () => {},
  }, handler);
  const port = server.addr.port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const c of open) {
        try {
          c.close(); // a stalled or paused stream ends, so shutdown does not wait on it
        } catch { /* already closed */ }
      }
      open.clear();
      await server.shutdown();
    },
  };
}
