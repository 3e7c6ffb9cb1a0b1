/**
 * Every `openapi_services:` entry (docs/mcp.md "OpenAPI services"): each document read at launch
 * (in parallel), its operations offered as tools through the ToolBox's `ToolSource`; a service
 * whose document cannot be read or checked is told (the launch's `W-MCP-001` line, a
 * `source_error` line of kind `openapi`, the tasks' `sourceErrors`) and offers nothing.
 */
import { errorMessage } from "../../errors.ts";
import type { OpenApiService } from "../../manifest/openapi_services.ts";
import { type SourceError, SourceErrorLog, type SourcePhase } from "../source_errors.ts";
import type { ToolSource } from "../tool_source.ts";
import type { Tool } from "../types.ts";
import { callOperation } from "./call.ts";
import { loadDocument } from "./load.ts";
import { operationsOf } from "./operations.ts";

export class OpenApiSources implements ToolSource {
  readonly #tools = new Map<string, { tool: Tool; service: string }>();
  readonly #up = new Set<string>();
  readonly #errors = new SourceErrorLog();
  #onError: ((e: SourceError, phase: SourcePhase) => void) | undefined;

  constructor(
    readonly services: OpenApiService[],
    o: { onError?(e: SourceError, phase: SourcePhase): void; now?: () => number } = {},
  ) {
    this.#onError = o.onError;
    this.#now = o.now ?? Date.now;
  }

  readonly #now: () => number;

  set onError(f: (e: SourceError, phase: SourcePhase) => void) {
    this.#onError = f;
  }

  async start(): Promise<void> {
    await Promise.all(this.services.map((s) => this.#load(s)));
  }

  async #load(svc: OpenApiService): Promise<void> {
    const tell = (message: string) => {
      const e: SourceError = { kind: "openapi", source: svc.name, message };
      this.#errors.add(e);
      this.#onError?.(e, "launch");
    };
    let loaded;
    try {
      loaded = await loadDocument(svc);
    } catch (e) {
      return tell(errorMessage(e));
    }
    const { operations, notes } = operationsOf(loaded.doc, svc);
    for (const note of notes) tell(note);
    if (operations.length) this.#up.add(svc.name);
    for (const op of operations) {
      const tool: Tool = {
        name: op.name,
        description: op.description,
        inputSchema: op.inputSchema,
        call: (input, ctx) => callOperation(op, loaded.baseUrl, svc, input, ctx, this.#now),
      };
      this.#tools.set(op.name, { tool, service: svc.name });
    }
  }

  tools(): Tool[] {
    return [...this.#tools.values()].map((t) => t.tool);
  }

  sourceOf(name: string): string | undefined {
    return this.#tools.get(name)?.service;
  }

  errorMark(): number {
    return this.#errors.mark();
  }

  errorsSince(mark: number): SourceError[] {
    return this.#errors.since(mark, (name) => !this.#up.has(name));
  }
}
