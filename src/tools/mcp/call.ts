/**
 * One call of an MCP server's tool (docs/mcp.md "Calls"): made with a progress token (the SDK
 * sends one when a progress handler is given; server-everything reports progress only then),
 * `timeout_secs` (the SDK then sends `notifications/cancelled`) and the task's cancel signal
 * (the same). What the server answered — content, `isError`, a JSON-RPC error — reached the
 * tool and is fenced under `tool:mcp__<server>__<tool>`; a timeout, a cancel, a connection
 * lost are runtime messages, unfenced, as for every tool (docs/tools.md).
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../errors.ts";
import { fence } from "../fence.ts";
import { notReached, type ToolContext, type ToolResult } from "../types.ts";
import type { ListedTool } from "./listing.ts";
import { boundText, readContent } from "./result.ts";
import type { McpSource } from "./source.ts";

export async function callMcpTool(
  source: McpSource,
  tool: ListedTool,
  input: Record<string, unknown>,
  ctx: ToolContext,
  now: () => number,
): Promise<ToolResult> {
  const started = now();
  const server = source.name;
  const client = source.client();
  if (typeof client === "string") {
    return { ...notReached(`tool '${tool.name}' was not called: ${client}`), mcpServer: server };
  }
  if (ctx.signal.aborted) {
    return { ...notReached(`tool '${tool.name}' canceled before it started`), mcpServer: server };
  }
  let raw: Record<string, unknown>;
  try {
    raw = await client.callTool({ name: tool.remote, arguments: input }, undefined, {
      signal: ctx.signal,
      timeout: source.cfg.timeoutMs,
      onprogress: (p: { progress: number; total?: number; message?: string }) =>
        ctx.progress?.({
          progress: p.progress,
          ...(p.total !== undefined && { total: p.total }),
          ...(p.message !== undefined && { message: p.message }),
        }),
    });
  } catch (e) {
    // An HTTP server that gave no JSON-RPC answer (gone, or a session it lost): connect again.
    if (!(e instanceof McpError) && !ctx.signal.aborted) source.lost(client, errorMessage(e));
    return { ...failure(e, tool, source, ctx, now() - started), mcpServer: server };
  }
  const content = readContent(raw);
  const bounded = await boundText(content.text, ctx.workdir, `mcp-${server}`, now());
  const fenceSource = `tool:${tool.name}`;
  return {
    content: fence(fenceSource, bounded.text),
    fenceSource,
    isError: content.isError,
    exitCode: null,
    truncated: bounded.truncated,
    durationMs: now() - started,
    images: content.images,
    mcpServer: server,
  };
}

/** Why a call has no result: the server's own error (fenced), or the runtime's message. */
function failure(
  e: unknown,
  tool: ListedTool,
  source: McpSource,
  ctx: ToolContext,
  ms: number,
): ToolResult {
  if (ctx.signal.aborted) {
    return notReached(
      `tool '${tool.name}' was stopped because the task was canceled (the server was sent notifications/cancelled)`,
      ms,
    );
  }
  const code = e instanceof McpError ? (e as { code: number }).code : null;
  if (code === ErrorCode.RequestTimeout) {
    return notReached(
      `tool '${tool.name}' timed out after ${
        source.cfg.timeoutMs / 1000
      } s (mcp_servers.${source.name}.timeout_secs) and was cancelled; its outcome is unknown`,
      ms,
    );
  }
  if (code === ErrorCode.ConnectionClosed) {
    return notReached(
      `tool '${tool.name}' failed: the MCP server '${source.name}' closed its connection during the call; its outcome is unknown`,
      ms,
    );
  }
  if (code !== null) {
    // The server answered with a JSON-RPC error: its words, untrusted like any result.
    const fenceSource = `tool:${tool.name}`;
    return {
      ...notReached(fence(fenceSource, `MCP error ${code}: ${errorMessage(e)}`), ms),
      fenceSource,
    };
  }
  return notReached(`tool '${tool.name}' failed: ${errorMessage(e)}`, ms);
}
