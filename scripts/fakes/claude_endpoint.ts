/**
 * A fake Anthropic Messages endpoint for the real Claude Code CLI, offline on loopback
 * (docs/process-transport.md). Scripted on the last user message:
 *
 * - "Reply with ONLY the suggestion" (the CLI's prompt-suggestion call) → "Run the test suite"
 * - the last user message holds a `tool_result` → "Tool said: <its text>"
 * - "MCPTEST" → a `tool_use` of the first `mcp__*` tool (`MCPTEST@<name>`: the tool of that
 *   name); its input is the JSON object that follows the marker when there is one, else `{}`
 * - "THINKTEST" → a thinking block, then text
 * - "FAIL429" / "FAIL401" → that HTTP error with the documented error body
 * - "SLOWTEST" → forty text deltas `tick <n> `, `slowDeltaMs` apart
 * - otherwise → "Hello from the fake server." in three deltas
 *
 * With `rateLimitHeaders`, answers to OAuth (bearer) requests carry the unified rate-limit
 * headers that make the CLI print a `rate_limit_event`. Every request is recorded.
 */

export interface ClaudeEndpointOptions {
  rateLimitHeaders?: boolean;
  /** Delay between SSE events of a SLOWTEST answer. Default 100. */
  slowDeltaMs?: number;
}

export interface RecordedMessagesRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  /** What the script matched on: the last user message's text. */
  userText: string;
}

export interface ClaudeEndpoint {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedMessagesRequest[];
  close(): Promise<void>;
}

type Block =
  | { type: "text"; text: string[] }
  | { type: "thinking"; thinking: string[] }
  | { type: "tool_use"; id: string; name: string; json: string[] };

let toolSeq = 0;

export function startClaudeEndpoint(opts: ClaudeEndpointOptions = {}): ClaudeEndpoint {
  const requests: RecordedMessagesRequest[] = [];
  const abort = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: abort.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const headers = Object.fromEntries(req.headers.entries());
      if (req.method === "HEAD" || url.pathname === "/api/hello") {
        requests.push({
          method: req.method,
          path: url.pathname,
          headers,
          body: null,
          userText: "",
        });
        return new Response(null, { status: 200 });
      }
      if (req.method !== "POST" || url.pathname !== "/v1/messages") {
        requests.push({
          method: req.method,
          path: url.pathname,
          headers,
          body: null,
          userText: "",
        });
        return new Response(null, { status: 404 });
      }
      let body: Record<string, unknown> | null = null;
      try {
        body = await req.json();
      } catch {
        body = null;
      }
      const { text, toolResult } = lastUser(body);
      requests.push({ method: req.method, path: url.pathname, headers, body, userText: text });
      const model = String(body?.model ?? "claude-fake");
      if (text.includes("FAIL429")) return apiError(429, "rate_limit_error", "fake: rate limited");
      if (text.includes("FAIL401")) return apiError(401, "authentication_error", "fake: bad key");

      let blocks: Block[];
      let stop = "end_turn";
      let delayMs = 0;
      if (text.includes("Reply with ONLY the suggestion")) {
        blocks = [{ type: "text", text: ["Run the test suite"] }];
      } else if (toolResult !== null) {
        blocks = [{ type: "text", text: ["Tool said: ", toolResult] }];
      } else if (text.includes("MCPTEST")) {
        const tools = Array.isArray(body?.tools) ? body.tools as { name?: string }[] : [];
        const named = /MCPTEST@(\S+)/.exec(text)?.[1];
        const tool = named
          ? tools.find((t) => t.name === named) ?? { name: named }
          : tools.find((t) => t.name?.startsWith("mcp__"));
        const input = JSON.stringify(inputAfter(text, named ? `MCPTEST@${named}` : "MCPTEST"));
        const half = Math.ceil(input.length / 2);
        blocks = [
          { type: "text", text: ["Calling the tool."] },
          {
            type: "tool_use",
            id: `toolu_fake_${++toolSeq}`,
            name: tool?.name ?? "mcp__none__none",
            json: [input.slice(0, half), input.slice(half)],
          },
        ];
        stop = "tool_use";
      } else if (text.includes("THINKTEST")) {
        blocks = [
          { type: "thinking", thinking: ["Let me ", "think about it."] },
          { type: "text", text: ["Thought it ", "through."] },
        ];
      } else if (text.includes("SLOWTEST")) {
        blocks = [{
          type: "text",
          text: Array.from({ length: 40 }, (_, i) => `tick ${i} `),
        }];
        delayMs = opts.slowDeltaMs ?? 100;
      } else {
        blocks = [{ type: "text", text: ["Hello ", "from the fake ", "server."] }];
      }
      const resHeaders = new Headers({ "content-type": "text/event-stream" });
      const oauth = (req.headers.get("authorization") ?? "").startsWith("Bearer ");
      if (opts.rateLimitHeaders && oauth) {
        for (const [k, v] of Object.entries(rateLimitHeaders())) resHeaders.set(k, v);
      }
      return new Response(sse(model, blocks, stop, delayMs, abort.signal), { headers: resHeaders });
    },
  );
  const port = (server.addr as Deno.NetAddr).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    async close() {
      abort.abort();
      await server.finished;
    },
  };
}

/**
 * When the fake's windows reset, in whole seconds as the headers give them: ahead of now, as a
 * real endpoint's are. The CLI leaves a window whose reset has passed out of its
 * `rate_limit_event` (fixed times in these headers passed on 2026-12-05, and the seven-day window
 * went missing from every run after).
 */
export const RATE_LIMIT_RESETS = (() => {
  const now = Math.floor(Date.now() / 1000);
  return { fiveHour: now + 3 * 3600, sevenDay: now + 3 * 86_400 };
})();

/**
 * The unified headers observed to trigger `rate_limit_event` (observed from Claude Code 2.1.328).
 */
export function rateLimitHeaders(): Record<string, string> {
  const p = "anthropic-ratelimit-unified";
  const { fiveHour, sevenDay } = RATE_LIMIT_RESETS;
  return {
    [`${p}-status`]: "allowed_warning",
    [`${p}-reset`]: String(fiveHour),
    [`${p}-representative-claim`]: "five_hour",
    [`${p}-5h-utilization`]: "0.91",
    [`${p}-5h-reset`]: String(fiveHour),
    [`${p}-5h-status`]: "allowed_warning",
    [`${p}-5h-surpassed-threshold`]: "0.9",
    [`${p}-7d-utilization`]: "0.2",
    [`${p}-7d-reset`]: String(sevenDay),
    [`${p}-7d-status`]: "allowed",
    [`${p}-fallback`]: "available",
    [`${p}-overage-status`]: "rejected",
    [`${p}-overage-disabled-reason`]: "org_level_disabled",
  };
}

function inputAfter(text: string, marker: string): Record<string, unknown> {
  const at = text.indexOf(marker);
  const rest = text.slice(at + marker.length).trim();
  const start = rest.indexOf("{");
  const end = rest.lastIndexOf("}");
  if (start < 0 || end < start) return {};
  try {
    const v = JSON.parse(rest.slice(start, end + 1));
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** The last user message's text blocks joined, and its tool_result text if it has one. */
function lastUser(
  body: Record<string, unknown> | null,
): { text: string; toolResult: string | null } {
  const messages = Array.isArray(body?.messages) ? body.messages as Record<string, unknown>[] : [];
  const last = [...messages].reverse().find((m) => m.role === "user");
  if (!last) return { text: "", toolResult: null };
  if (typeof last.content === "string") return { text: last.content, toolResult: null };
  const blocks = Array.isArray(last.content) ? last.content as Record<string, unknown>[] : [];
  const texts: string[] = [];
  let toolResult: string | null = null;
  for (const b of blocks) {
    if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
    if (b.type === "tool_result") {
      const c = b.content;
      toolResult = typeof c === "string"
        ? c
        : Array.isArray(c)
        ? (c as Record<string, unknown>[]).filter((x) => x.type === "text").map((x) => x.text)
          .join("\n")
        : "";
    }
  }
  return { text: texts.join("\n"), toolResult };
}

function apiError(status: number, type: string, message: string): Response {
  return Response.json({ type: "error", error: { type, message } }, { status });
}

function sse(
  model: string,
  blocks: Block[],
  stop: string,
  delayMs: number,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const events: [string, unknown][] = [];
  const id = `msg_fake_${crypto.randomUUID().slice(0, 8)}`;
  events.push(["message_start", {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 1 },
    },
  }]);
  blocks.forEach((b, index) => {
    if (b.type === "text") {
      events.push(["content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      }]);
      for (const t of b.text) {
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: t },
        }]);
      }
    } else if (b.type === "thinking") {
      events.push(["content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "" },
      }]);
      for (const t of b.thinking) {
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: t },
        }]);
      }
      events.push(["content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" },
      }]);
    } else {
      events.push(["content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
      }]);
      for (const j of b.json) {
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: j },
        }]);
      }
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push(["message_delta", {
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 9 },
  }]);
  events.push(["message_stop", { type: "message_stop" }]);
  let i = 0;
  return new ReadableStream({
    async pull(controller) {
      if (i >= events.length || signal.aborted) {
        controller.close();
        return;
      }
      if (delayMs && i > 0) await new Promise((r) => setTimeout(r, delayMs));
      const [name, data] = events[i++];
      controller.enqueue(enc.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`));
    },
  });
}
