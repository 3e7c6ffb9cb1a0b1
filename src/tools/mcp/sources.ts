/**
 * Every `mcp_servers:` entry of a capsule (docs/mcp.md): connected at launch at most
 * CONNECT_CONCURRENCY at a time, each within its own startup limit; their tools offered to the
 * ToolBox as one `ToolSource`; their errors kept (the tasks' `sourceErrors`) and handed on (the
 * launch's `W-MCP-001` lines, the `source_error` trace lines).
 */
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import type { Tool, ToolContext, ToolResult } from "../types.ts";
import type { ToolSource } from "../tool_source.ts";
import { callMcpTool } from "./call.ts";
import type { ListedTool } from "./listing.ts";
import { McpSource, type McpSourceDeps } from "./source.ts";
import { type SourceError, SourceErrorLog, type SourcePhase } from "../source_errors.ts";

export const CONNECT_CONCURRENCY = 4;

export interface McpSourcesOptions extends Omit<McpSourceDeps, "onError"> {
  onError?(e: SourceError, phase: SourcePhase): void;
  now?: () => number;
}

export class McpSources implements ToolSource {
  readonly sources: McpSource[];
  readonly #errors = new SourceErrorLog();
  /** Tool objects by name, rebuilt when a source's list changes. */
  #cache = new Map<string, { listed: ListedTool; tool: Tool }>();
  #onError: ((e: SourceError, phase: SourcePhase) => void) | undefined;
  readonly #now: () => number;

  constructor(configs: McpServerConfig[], o: McpSourcesOptions) {
    this.#onError = o.onError;
    this.#now = o.now ?? Date.now;
    this.sources = configs.map((c) =>
      new McpSource(c, { ...o, onError: (e, phase) => this.#error(e, phase) })
    );
  }

  /** Starts every source, CONNECT_CONCURRENCY at once; never throws (failures are told). */
  async start(): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < this.sources.length) await this.sources[next++].start();
    };
    await Promise.all(
      Array.from({ length: Math.min(CONNECT_CONCURRENCY, this.sources.length) }, worker),
    );
  }

  /** Where errors go from now on (the session's trace, once it has begun). */
  set onError(f: (e: SourceError, phase: SourcePhase) => void) {
    this.#onError = f;
  }

  errorMark(): number {
    return this.#errors.mark();
  }

  /** A task's `sourceErrors`: servers not up now, then every error since `mark`. */
  errorsSince(mark: number): SourceError[] {
    return this.#errors.since(
      mark,
      (name) => this.sources.find((s) => s.name === name)?.state !== "up",
    );
  }

  sourceOf(name: string): string | undefined {
    return this.sources.find((s) => s.tools().some((t) => t.name === name))?.name;
  }

  #error(e: SourceError, phase: SourcePhase): void {
    this.#errors.add(e);
    this.#onError?.(e, phase);
  }

  tools(): Tool[] {
    const out: Tool[] = [];
    for (const s of this.sources) {
      for (const listed of s.tools()) {
        let hit = this.#cache.get(listed.name);
        if (!hit || hit.listed !== listed) {
          hit = { listed, tool: this.#tool(s, listed) };
          this.#cache.set(listed.name, hit);
        }
        out.push(hit.tool);
      }
    }
    return out;
  }

  #tool(source: McpSource, listed: ListedTool): Tool {
    const now = this.#now;
    return {
      name: listed.name,
      description: listed.description,
      inputSchema: listed.inputSchema,
      call: (input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> =>
        callMcpTool(source, listed, input, ctx, now),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.sources.map((s) => s.close()));
  }
}
