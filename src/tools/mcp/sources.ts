/**
 * Every `mcp_servers:` entry of a capsule (docs/mcp.md): connected at launch at most
 * CONNECT_CONCURRENCY at a time, each within its own startup limit; their tools offered to the
 * ToolBox as one `ToolSource`; their errors kept (the tasks' `sourceErrors`) and handed on (the
 * launch's `W-MCP-001` lines, the `source_error` trace lines).
 */
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import type { Tool, ToolContext, ToolResult } from "../types.ts";
import { callMcpTool } from "./call.ts";
import type { ListedTool } from "./listing.ts";
import { McpSource, type McpSourceDeps, type SourceError, type SourcePhase } from "./source.ts";

export const CONNECT_CONCURRENCY = 4;
/** Source errors kept for the tasks, newest last. */
const MAX_ERRORS = 50;

/** Tools that come and go (ToolBox offers them after its own, before skills). */
export interface ToolSource {
  tools(): Tool[];
  /** The server a tool of this source comes from. */
  sourceOf?(name: string): string | undefined;
  /** Where the error log stands now. */
  errorMark?(): number;
  /** Errors of sources not up now, and every error since `mark`. */
  errorsSince?(mark: number): SourceError[];
}

export interface McpSourcesOptions extends Omit<McpSourceDeps, "onError"> {
  onError?(e: SourceError, phase: SourcePhase): void;
  now?: () => number;
}

export class McpSources implements ToolSource {
  readonly sources: McpSource[];
  readonly #errors: { seq: number; e: SourceError }[] = [];
  #seq = 0;
  /** Each source's newest error: what a task started while it is not up is told. */
  readonly #last = new Map<string, SourceError>();
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
    return this.#seq;
  }

  /**
   * A task's `sourceErrors`: the newest error of each source that is not up now, then every error
   * since `mark` (at most MAX_ERRORS are kept), each message once.
   */
  errorsSince(mark: number): SourceError[] {
    const out: SourceError[] = [];
    const seen = new Set<string>();
    const add = (e: SourceError) => {
      const key = `${e.source}\n${e.message}`;
      if (!seen.has(key)) out.push(e);
      seen.add(key);
    };
    for (const s of this.sources) {
      const last = this.#last.get(s.name);
      if (last && s.state !== "up") add(last);
    }
    for (const x of this.#errors) if (x.seq > mark) add(x.e);
    return out;
  }

  sourceOf(name: string): string | undefined {
    return this.sources.find((s) => s.tools().some((t) => t.name === name))?.name;
  }

  #error(e: SourceError, phase: SourcePhase): void {
    this.#errors.push({ seq: ++this.#seq, e });
    if (this.#errors.length > MAX_ERRORS) this.#errors.shift();
    this.#last.set(e.source, e);
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
