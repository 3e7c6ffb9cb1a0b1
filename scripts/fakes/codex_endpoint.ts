/**
 * A fake OpenAI Responses endpoint for the real Codex CLI, offline on loopback (README
 * "Coding-agent CLIs as the model"). `POST /v1/responses`, answered with the SSE events codex 0.169
 * accepted. Scripted on the request's input:
 *
 * - the last input item is a `function_call_output` → "Tool said: <its output>"
 * - the user text holds "MCPTEST" → a `function_call` of the first tool in the first
 *   `namespace` tool (the MCP server's), input = the JSON object after "MCPTEST "
 *   (`MCPTEST@<namespace>/<tool>`: that namespace's tool)
 * - otherwise → "Hello from fake OpenAI."
 *
 * Every request is recorded.
 */

export interface RecordedResponsesRequest {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
}

export interface CodexEndpoint {
  readonly url: string;
  readonly requests: RecordedResponsesRequest[];
  close(): Promise<void>;
}

export function startCodexEndpoint(): CodexEndpoint {
  const requests: RecordedResponsesRequest[] = [];
  const abort = new AbortController();
  let seq = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: abort.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const headers = Object.fromEntries(req.headers.entries());
      let body: Record<string, unknown> | null = null;
      if (req.method === "POST") {
        try {
          body = await req.json();
        } catch {
          body = null;
        }
      }
      requests.push({ path: url.pathname, headers, body });
      if (req.method !== "POST" || url.pathname !== "/v1/responses") {
        return new Response(null, { status: 404 });
      }
      const input = Array.isArray(body?.input) ? body.input as Record<string, unknown>[] : [];
      const last = input[input.length - 1] ?? {};
      const model = String(body?.model ?? "fake-model");
      const id = `resp_${++seq}`;
      let item: Record<string, unknown>;
      if (last.type === "function_call_output") {
        const out = typeof last.output === "string" ? last.output : JSON.stringify(last.output);
        item = message(`msg_${seq}`, `Tool said: ${out}`);
      } else {
        const text = userText(input);
        const named = /MCPTEST@(\S+)\/(\S+)/.exec(text);
        const mcp = named
          ? { namespace: named[1], name: named[2] }
          : text.includes("MCPTEST")
          ? firstMcpTool(body?.tools)
          : null;
        item = mcp
          ? {
            type: "function_call",
            id: `fc_${seq}`,
            call_id: `call_${seq}`,
            namespace: mcp.namespace,
            name: mcp.name,
            arguments: JSON.stringify(inputAfter(text, "MCPTEST")),
            status: "completed",
          }
          : message(`msg_${seq}`, "Hello from fake OpenAI.");
      }
      return new Response(sse(id, model, item), {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const port = (server.addr as Deno.NetAddr).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    async close() {
      abort.abort();
      await server.finished;
    },
  };
}

function message(id: string, text: string): Record<string, unknown> {
  return {
    type: "message",
    id,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
}

function userText(input: Record<string, unknown>[]): string {
  const texts: string[] = [];
  for (const it of input) {
    if (it.role !== "user") continue;
    const c = it.content;
    if (typeof c === "string") texts.push(c);
    else if (Array.isArray(c)) {
      for (const p of c as Record<string, unknown>[]) {
        if (typeof p.text === "string") texts.push(p.text);
      }
    }
  }
  return texts.join("\n");
}

function firstMcpTool(tools: unknown): { namespace: string; name: string } | null {
  if (!Array.isArray(tools)) return null;
  for (const t of tools as Record<string, unknown>[]) {
    if (t.type === "namespace" && String(t.name).startsWith("mcp__") && Array.isArray(t.tools)) {
      const first = (t.tools as Record<string, unknown>[])[0];
      if (first && typeof first.name === "string") {
        return { namespace: String(t.name), name: first.name };
      }
    }
  }
  return null;
}

function inputAfter(text: string, marker: string): Record<string, unknown> {
  const rest = text.slice(text.lastIndexOf(marker) + marker.length);
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

function sse(id: string, model: string, item: Record<string, unknown>): string {
  const ev = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const base = { id, object: "response", model, status: "in_progress", output: [] };
  let out = ev("response.created", { response: base });
  out += ev("response.output_item.added", {
    output_index: 0,
    item: { ...item, status: "in_progress" },
  });
  if (item.type === "message") {
    const text = (item.content as { text: string }[])[0].text;
    const part = { type: "output_text", text: "", annotations: [] };
    out += ev("response.content_part.added", {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part,
    });
    out += ev("response.output_text.delta", {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      delta: text,
    });
    out += ev("response.output_text.done", {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      text,
    });
  }
  out += ev("response.output_item.done", { output_index: 0, item });
  out += ev("response.completed", {
    response: {
      ...base,
      status: "completed",
      output: [item],
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 27,
      },
    },
  });
  return out;
}
