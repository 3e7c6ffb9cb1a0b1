/**
 * The tool bridge: the capsule's tools offered to a harness as an MCP server (Streamable HTTP,
 * JSON responses) on 127.0.0.1, guarded by a per-run bearer token. Every `tools/call` goes to the
 * loop's dispatch, which decides, runs and fences; a refusal comes back as an `isError` result so
 * the harness reports it as its own failed tool call.
 *
 * The bridge remembers each call (fence source, duration, error) so the runtime can tie the
 * harness's later report of the result to it: by `_meta["claudecode/toolUseId"]` when the
 * harness sends one, else by tool name and arguments.
 */
import { errorMessage } from "../../errors.ts";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  isInitializeRequest,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { encodeBase64 } from "./base64.ts";
import type { ToolCall, ToolSpec } from "../types.ts";
import type { ToolResult } from "../../tools/types.ts";

export const BRIDGE_SERVER_NAME = "murmur";
const MAX_IN_FLIGHT = 16;
const TOOL_USE_META = "claudecode/toolUseId";

export interface BridgeCallRecord {
  callId: string;
  /** True when the id came from the harness (`_meta`), false when the bridge minted it. */
  idFromHarness: boolean;
  name: string;
  args: Record<string, unknown>;
  fenceSource: string | null;
  isError: boolean;
  durationMs: number;
  /** Set once the harness's report of the result was paired with this call. */
  matched: boolean;
}

export interface BridgeOptions {
  tools: ToolSpec[];
  dispatch(call: ToolCall, signal: AbortSignal): Promise<ToolResult>;
  /** Any accepted request (the harness is alive even when its stdout is quiet). */
  onActivity?(): void;
  /** A tools/call began (+1) or ended (-1). */
  onInFlight?(delta: 1 | -1): void;
  /**
   * Resolves when a call of this tool may run: after the harness's stdout announced it
   * (call_order.ts), so a call's frames never trail what the call itself caused.
   */
  ready?(name: string): Promise<void>;
  /** Clock for durations (tests). */
  now?: () => number;
  /** The token; random when absent. */
  token?: string;
}

interface McpSession {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
}

export class ToolBridge {
  readonly token: string;
  readonly url: string;
  readonly toolNames: string[];
  #httpServer: Deno.HttpServer;
  #sessions = new Map<string, McpSession>();
  #calls: BridgeCallRecord[] = [];
  #inFlight = 0;
  #minted = 0;
  #abort = new AbortController();
  #opts: BridgeOptions;

  private constructor(opts: BridgeOptions, token: string) {
    this.#opts = opts;
    this.token = token;
    this.toolNames = opts.tools.map((t) => t.name);
    this.#httpServer = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
    }, (req) => this.#handle(req));
    const addr = this.#httpServer.addr as Deno.NetAddr;
    this.url = `http://127.0.0.1:${addr.port}/bridge`;
  }

  static start(opts: BridgeOptions): ToolBridge {
    const token = opts.token ?? randomToken();
    return new ToolBridge(opts, token);
  }

  /** Every call the bridge dispatched, in arrival order. */
  get calls(): readonly BridgeCallRecord[] {
    return this.#calls;
  }

  /** The call the harness named by id, once. */
  takeById(id: string): BridgeCallRecord | null {
    const rec = this.#calls.find((c) => !c.matched && c.idFromHarness && c.callId === id);
    if (!rec) return null;
    rec.matched = true;
    return rec;
  }

  /** The first unpaired call with this tool name and equal arguments, once. */
  takeByNameArgs(name: string, args: unknown): BridgeCallRecord | null {
    const want = canonicalJson(args ?? {});
    const rec = this.#calls.find((c) =>
      !c.matched && c.name === name && canonicalJson(c.args) === want
    );
    if (!rec) return null;
    rec.matched = true;
    return rec;
  }

  async close(): Promise<void> {
    this.#abort.abort();
    for (const s of this.#sessions.values()) {
      await s.transport.close().catch(() => {});
      await s.server.close().catch(() => {});
    }
    this.#sessions.clear();
    await this.#httpServer.shutdown();
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname !== "/bridge") return new Response(null, { status: 404 });
    if (req.headers.get("authorization") !== `Bearer ${this.token}`) {
      return Response.json({ error: "unauthorized" }, { status: 401 });
    }
    this.#opts.onActivity?.();
    // No server-initiated stream: every answer comes back on its POST.
    if (req.method === "GET") {
      return new Response(null, { status: 405, headers: { allow: "POST, DELETE" } });
    }
    const sessionId = req.headers.get("mcp-session-id");
    if (req.method !== "POST") {
      const s = sessionId ? this.#sessions.get(sessionId) : undefined;
      if (!s) return new Response(null, { status: 404 });
      return await s.transport.handleRequest(req);
    }
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return jsonRpcError(null, -32700, "Parse error", 400);
    }
    if (sessionId) {
      const s = this.#sessions.get(sessionId);
      if (!s) return jsonRpcError(null, -32001, "Session not found", 404);
      return await s.transport.handleRequest(req, { parsedBody: body });
    }
    if (isInitializeRequest(body)) {
      const s = this.#newSession();
      return await s.transport.handleRequest(req, { parsedBody: body });
    }
    // A request outside any session: Claude Code's `server/discover` probe. Method-not-found
    // makes it fall back to `initialize`.
    const id = (body as { id?: string | number } | null)?.id ?? null;
    if (id === null) return new Response(null, { status: 202 });
    return jsonRpcError(id, -32601, "Method not found", 200);
  }

  #newSession(): McpSession {
    const server = new Server(
      { name: BRIDGE_SERVER_NAME, version: "1.0.0" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.#opts.tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: { type: "object", ...t.inputSchema } as { type: "object" },
      })),
    }));
    server.setRequestHandler(
      CallToolRequestSchema,
      (request: CallToolRequest) => this.#call(request.params),
    );
    const session: McpSession = {
      server,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id: string) => {
          this.#sessions.set(id, session);
        },
        onsessionclosed: (id: string) => {
          this.#sessions.delete(id);
        },
      }),
    };
    server.connect(session.transport);
    return session;
  }

  async #call(params: {
    name: string;
    arguments?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
  }): Promise<CallToolResult> {
    const metaId = params._meta?.[TOOL_USE_META];
    const idFromHarness = typeof metaId === "string" && metaId.length > 0;
    const callId = idFromHarness ? metaId as string : `bridge_${++this.#minted}`;
    const args = params.arguments ?? {};
    const now = this.#opts.now ?? Date.now;
    const record: BridgeCallRecord = {
      callId,
      idFromHarness,
      name: params.name,
      args,
      fenceSource: null,
      isError: true,
      durationMs: 0,
      matched: false,
    };
    this.#calls.push(record);
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      return refusal(`too many tool calls in flight (limit ${MAX_IN_FLIGHT}); retry later`);
    }
    this.#inFlight++;
    this.#opts.onInFlight?.(1);
    let started = now();
    try {
      if (this.#opts.ready) {
        await this.#opts.ready(params.name);
        started = now();
      }
      const result = await this.#opts.dispatch(
        { id: callId, name: params.name, input: args },
        this.#abort.signal,
      );
      record.fenceSource = result.fenceSource;
      record.isError = result.isError;
      record.durationMs = result.durationMs;
      const content: CallToolResult["content"] = [{ type: "text", text: result.content }];
      for (const img of result.images) {
        content.push({ type: "image", data: encodeBase64(img.data), mimeType: img.mediaType });
      }
      return { content, isError: result.isError };
    } catch (e) {
      // Fail closed: a dispatch that could not decide is a refusal.
      record.durationMs = now() - started;
      return refusal(`tool call failed: ${errorMessage(e)}`);
    } finally {
      this.#inFlight--;
      this.#opts.onInFlight?.(-1);
      this.#opts.onActivity?.();
    }
  }
}

function refusal(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function jsonRpcError(
  id: string | number | null,
  code: number,
  message: string,
  status: number,
): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status });
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** JSON with sorted object keys, for comparing arguments. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0
    );
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}
