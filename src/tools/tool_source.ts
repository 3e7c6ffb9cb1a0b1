/**
 * Tools that come and go: an MCP server's (src/tools/mcp/), an OpenAPI service's
 * (src/tools/openapi/). The ToolBox reads every source at each `specs()` and offers their tools
 * after its own, before skills (docs/mcp.md).
 */
import type { SourceError } from "./source_errors.ts";
import type { Tool } from "./types.ts";

export interface ToolSource {
  tools(): Tool[];
  /** The server or service a tool of this source comes from. */
  sourceOf?(name: string): string | undefined;
  /** Where the source's error log stands now. */
  errorMark?(): number;
  /** Errors of sources not up now, and every error since `mark`. */
  errorsSince?(mark: number): SourceError[];
}
