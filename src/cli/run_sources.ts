/**
 * The capsule's tool sources at launch (docs/mcp.md): its MCP servers, connected before the
 * session begins (in parallel, bounded, each within its startup limit; a process capsule's
 * harness is handed them instead), and its OpenAPI services' documents, read. A source that
 * fails (then or later) is a warning line (`W-MCP-001`, `W-API-001`) and a `source_error` trace
 * line (those of the launch once the trace has begun), and the session goes on without its
 * tools. Loaded only by a manifest with `mcp_servers:` or `openapi_services:`.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import { warningLine } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import { McpSources } from "../tools/mcp/sources.ts";
import { OpenApiSources } from "../tools/openapi/sources.ts";
import type { SourceError, SourcePhase } from "../tools/source_errors.ts";
import type { ToolSource } from "../tools/tool_source.ts";
import type { TraceWriter } from "../trace_writer.ts";

export interface SourcesLaunch {
  sources: ToolSource[];
  /** From now on errors go to the trace; the launch's are written first. */
  traceTo(trace: TraceWriter, sessionEventId: string): void;
  /** Stops the MCP servers. */
  close(): Promise<void>;
}

export async function startSources(
  manifest: Manifest,
  p: {
    logsDir: string;
    workdirRoot: string;
    harness: boolean;
    warn(line: string): void;
    /** The session's containment: stdio servers run under it, its scope is their root. */
    containment?: ContainmentPolicy;
  },
): Promise<SourcesLaunch | null> {
  const servers = p.harness ? [] : manifest.mcpServers ?? [];
  const services = manifest.openApiServices ?? [];
  if (servers.length === 0 && services.length === 0) return null;
  const pending: { e: SourceError; phase: SourcePhase }[] = [];
  const warn = (e: SourceError) =>
    p.warn(warningLine(
      e.kind === "mcp" ? "W-MCP-001" : "W-API-001",
      `${e.kind === "mcp" ? "MCP server" : "OpenAPI service"} '${e.source}': ${e.message}`,
    ));
  const onError = (e: SourceError, phase: SourcePhase) => {
    pending.push({ e, phase });
    warn(e);
  };
  const mcp = servers.length
    ? new McpSources(servers, {
      logsDir: p.logsDir,
      // The capsule's filesystem scope (its first writable path), else the workdir (docs/mcp.md
      // "Roots").
      roots: [p.containment?.writable[0] ?? p.workdirRoot],
      containment: p.containment,
      networkAllow: manifest.containment?.networkAllow ?? null,
      hostEnv: Deno.env.toObject(),
      onError,
    })
    : null;
  const api = services.length ? new OpenApiSources(services, { onError }) : null;
  await Promise.all([mcp?.start(), api?.start()]);
  return {
    sources: [...(mcp ? [mcp] : []), ...(api ? [api] : [])],
    traceTo(trace, sessionEventId) {
      const write = (e: SourceError, phase: SourcePhase) =>
        trace.write("source_error", sessionEventId, { ...e, phase });
      for (const x of pending.splice(0)) write(x.e, x.phase);
      const later = (e: SourceError, phase: SourcePhase) => {
        write(e, phase);
        warn(e);
      };
      if (mcp) mcp.onError = later;
      if (api) api.onError = later;
    },
    close: async () => await mcp?.close(),
  };
}
