/**
 * The capsule's MCP servers at launch (docs/mcp.md): connected before the session begins (in
 * parallel, bounded, each within its startup limit), so the first turn is offered their tools;
 * a server that fails (then or later) is a `warning[W-MCP-001]` line and a `source_error` trace
 * line (those of the launch once the trace has begun), and the session goes on without its tools. Loaded only by a manifest with
 * `mcp_servers:`.
 */
import { warningLine } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import type { SourceError, SourcePhase } from "../tools/mcp/source.ts";
import { McpSources } from "../tools/mcp/sources.ts";
import type { TraceWriter } from "../trace_writer.ts";

export interface McpLaunch {
  sources: McpSources;
  /** From now on errors go to the trace; the launch's are written first. */
  traceTo(trace: TraceWriter, sessionEventId: string): void;
}

export async function startMcp(
  manifest: Manifest,
  p: { logsDir: string; workdirRoot: string; warn(line: string): void },
): Promise<McpLaunch | null> {
  const configs = manifest.mcpServers ?? [];
  if (configs.length === 0) return null;
  const pending: { e: SourceError; phase: SourcePhase }[] = [];
  const sources = new McpSources(configs, {
    logsDir: p.logsDir,
    // The capsule's filesystem scope: the workdir (docs/mcp.md "Roots").
    roots: [p.workdirRoot],
    hostEnv: Deno.env.toObject(),
    onError: (e, phase) => {
      pending.push({ e, phase });
      p.warn(warningLine("W-MCP-001", `MCP server '${e.source}': ${e.message}`));
    },
  });
  await sources.start();
  return {
    sources,
    traceTo(trace, sessionEventId) {
      const write = (e: SourceError, phase: SourcePhase) =>
        trace.write("source_error", sessionEventId, { ...e, phase });
      for (const x of pending.splice(0)) write(x.e, x.phase);
      sources.onError = (e, phase) => {
        write(e, phase);
        p.warn(warningLine("W-MCP-001", `MCP server '${e.source}': ${e.message}`));
      };
    },
  };
}
