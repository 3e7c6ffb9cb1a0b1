/**
 * A small stand-in for a capsule's door, for testing the CLI side before (and apart from) the real
 * runtime: a Deno.serve on 127.0.0.1:0 that serves the agent card, answers JSON-RPC calls the test
 * scripts, and writes murmur.WatchSession streams byte for byte in docs/protocol.md's "Event form"
 * (`id: N\ndata: {...}\n\n`, `:heartbeat\n\n`).
 */
import { CAPSULE_URI, STREAM_URI } from "../../src/events/frames.ts";

export interface StreamWriter {
  /** One event: an optional `id:` line, then the JSON-RPC response carrying `result`. */
  event(id: number | null, result: unknown): Promise<void>;
  heartbeat(): Promise<void>;
  raw(text: string): Promise<void>;
}

export interface SeenRequest {
  method: string;
  headers: Headers;
  body: unknown;
}

export interface FakeDoorOptions {
  sessionId: string;
  /** When set, every POST needs `Authorization: Bearer <token>`, and the card omits the session. */
  token?: string;
  /** Runs for each murmur.WatchSession connection; the stream ends when it returns. */
  watch?: (w: StreamWriter) => Promise<void>;
  /** Answers other JSON-RPC methods: return `{result}` or `{error}`. */
  rpc?: (method: string, params: unknown) => { result?: unknown; error?: unknown };
  /** The session id the card claims (defaults to sessionId). */
  cardSessionId?: string | null;
}

export interface FakeDoor {
  port: number;
  /** `localhost:<port>`, as a running record holds it. */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

const enc = new TextEncoder();

function card(sessionId: string | null, withCapsule: boolean) {
  const exts: unknown[] = [{
    uri: "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1",
    required: false,
    params: { methods: [] },
  }];
  if (withCapsule) {
    exts.push({ uri: CAPSULE_URI, required: false, params: sessionId ? { sessionId } : {} });
  }
  exts.push({ uri: STREAM_URI, required: false, params: { frames: [] } });
  return { name: "fake", version: "0.0.1", capabilities: { streaming: true, extensions: exts } };
}

export function startFakeDoor(opts: FakeDoorOptions): FakeDoor {
  const requests: SeenRequest[] = [];
  const cardId = opts.cardSessionId === undefined ? opts.sessionId : opts.cardSessionId;
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method === "GET" && url.pathname === "/.well-known/agent-card.json") {
        return Response.json(card(cardId, !opts.token));
      }
      if (req.method !== "POST" || url.pathname !== "/") return new Response(null, { status: 404 });
      const body = await req.json().catch(() => null);
      requests.push({ method: body?.method, headers: req.headers, body });
      if (opts.token && req.headers.get("authorization") !== `Bearer ${opts.token}`) {
        return Response.json(
          {
            error: "unauthenticated",
            message:
              "this door takes a token this capsule's runtime minted, as Authorization: Bearer <token>",
          },
          { status: 401 },
        );
      }
      const id = body?.id ?? null;
      if (body?.method === "GetExtendedAgentCard") {
        return Response.json({ jsonrpc: "2.0", id, result: card(cardId, true) });
      }
      if (body?.method === "murmur.WatchSession" && opts.watch) {
        const script = opts.watch;
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            const w: StreamWriter = {
              event(eid, result) {
                const line = JSON.stringify({ jsonrpc: "2.0", id, result });
                controller.enqueue(
                  enc.encode(`${eid === null ? "" : `id: ${eid}\n`}data: ${line}\n\n`),
                );
                return Promise.resolve();
              },
              heartbeat() {
                controller.enqueue(enc.encode(":heartbeat\n\n"));
                return Promise.resolve();
              },
              raw(text) {
                controller.enqueue(enc.encode(text));
                return Promise.resolve();
              },
            };
            try {
              await script(w);
            } finally {
              try {
                controller.close();
              } catch { /* the client went away first */ }
            }
          },
        });
        return new Response(stream, {
          headers: {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "A2A-Extensions": "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1, " +
              STREAM_URI,
          },
        });
      }
      const answer = opts.rpc?.(body?.method, body?.params) ??
        { error: { code: -32601, message: "Method not found" } };
      return Response.json({ jsonrpc: "2.0", id, ...answer });
    },
  );
  return {
    port: server.addr.port,
    url: `localhost:${server.addr.port}`,
    requests,
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}

// ---- StreamResponse builders, as the seed writes them ----------------------------------------

let msgSeq = 0;
const msgId = () => `msg_0199c4e2f1b87a01b2c3d4e5f607${(msgSeq++).toString(16).padStart(4, "0")}`;
const TS = "2026-10-13T09:00:00.123Z";

export function status(taskId: string, contextId: string, state: string, text?: string) {
  return {
    statusUpdate: {
      taskId,
      contextId,
      status: {
        state,
        ...(text === undefined ? {} : {
          message: {
            messageId: msgId(),
            contextId,
            taskId,
            role: "ROLE_AGENT",
            parts: [{ mediaType: "text/plain", text }],
          },
        }),
        timestamp: TS,
      },
    },
  };
}

/** A task frame, carried by a TASK_STATE_WORKING statusUpdate with no message. */
export function taskFrame(taskId: string, contextId: string, frame: Record<string, unknown>) {
  return {
    statusUpdate: {
      taskId,
      contextId,
      status: { state: "TASK_STATE_WORKING", timestamp: TS },
      metadata: { [STREAM_URI]: frame },
    },
  };
}

/** A connection frame, carried by a `message` with no contextId. */
export function connectionFrame(frame: Record<string, unknown>) {
  return {
    message: {
      messageId: msgId(),
      role: "ROLE_AGENT",
      parts: [{ mediaType: "text/plain", text: String(frame.frame) }],
      metadata: { [STREAM_URI]: frame },
    },
  };
}

export function responseArtifact(taskId: string, contextId: string, text: string) {
  return {
    artifactUpdate: {
      taskId,
      contextId,
      artifact: {
        artifactId: "response",
        name: "response",
        parts: [{ text, mediaType: "text/plain" }],
      },
      lastChunk: true,
    },
  };
}

export function artifact(fields: {
  toolName: string;
  content: string;
  fenceSource?: string | null;
  toolCallId?: string | null;
  isError?: boolean;
  durationMs?: number | null;
  exitCode?: number | null;
  truncated?: boolean;
}) {
  return {
    frame: "artifact",
    toolName: fields.toolName,
    content: fields.content,
    fenceSource: fields.fenceSource ?? null,
    toolCallId: fields.toolCallId ?? null,
    isError: fields.isError ?? false,
    durationMs: fields.durationMs ?? null,
    exitCode: fields.exitCode ?? null,
    truncated: fields.truncated ?? false,
    attachments: [],
  };
}
