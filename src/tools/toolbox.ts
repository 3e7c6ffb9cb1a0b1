/**
 * The capsule's tools as the loop sees them: what is offered to the model (`specs()`) and one
 * `dispatch()` that answers every call with a ToolResult and never throws. Pre-dispatch checks
 * run in this order (docs/tools.md): declared at all → required fields → read_only; the
 * policy hook is the loop's. What reached a tool is fenced under `tool:<name>`.
 */
import { errorMessage } from "../errors.ts";
import type { ToolCall, ToolSpec } from "./types.ts";
import type { CapabilitiesConfig, ToolConfig } from "../manifest/types.ts";
import { CommandTool } from "./command.ts";
import { DetachedShells } from "./detached.ts";
import { fence } from "./fence.ts";
import { ReadOnlyGuard } from "./read_only.ts";
import type { BackgroundResult } from "./background.ts";
import { ShellTool } from "./shell.ts";
import type { SkillShelf } from "./skills.ts";
import type { ToolSource } from "./tool_source.ts";
import type { SourceError } from "./source_errors.ts";
import {
  notReached,
  type Tool,
  type ToolContext,
  type ToolRefusal,
  type ToolResult,
} from "./types.ts";

export interface ToolBoxOptions {
  capabilities: CapabilitiesConfig;
  /** The manifest's `tools:`; a builtin is offered when the session registers its Tool. */
  tools: ToolConfig[];
  /** `lifecycle.shell_grace_secs`. */
  shellGraceSecs: number;
  /** Where a detached command's result ends up, from the lifecycle (default `delivered`). */
  background?: BackgroundResult;
  /** Tools the session implements (e.g. `request-input`); also `register()` later. */
  extra?: Tool[];
  /** Where detached shells are tracked; one per session. */
  detached?: DetachedShells;
  now?: () => number;
  /** Environment for shell tools (default: mur's own minus credentials). */
  shellEnv?: Record<string, string>;
  /**
   * The capsule's skills (docs/manifest.md "artifacts"), offered after every other tool; a name another tool
   * holds is that tool's (dispatch order: command tools and shell tools, then skills).
   */
  skills?: SkillShelf;
  /**
   * Tools that come and go (MCP servers, docs/mcp.md), offered after the registered tools and
   * before skills; a name a registered tool holds is that tool's.
   */
  sources?: ToolSource[];
}

export class ToolBox {
  readonly detached: DetachedShells;
  readonly #tools = new Map<string, Tool>();
  /** Offer order: shell tools, then `tools:` in manifest order, then other registered tools. */
  readonly #order: string[] = [];
  /** Builtins the manifest declares, in place, waiting for the session's implementation. */
  readonly #builtinSlots = new Set<string>();
  readonly #readOnly: string[];
  readonly #now: () => number;
  readonly #skills: SkillShelf | undefined;
  readonly #sources: ToolSource[] = [];

  constructor(o: ToolBoxOptions) {
    this.#sources.push(...(o.sources ?? []));
    this.#skills = o.skills;
    this.detached = o.detached ?? new DetachedShells();
    this.#readOnly = o.capabilities.filesystem.readOnly;
    this.#now = o.now ?? Date.now;
    for (const binary of o.capabilities.shell.allow) {
      this.#add(
        new ShellTool({
          binary,
          graceSecs: o.shellGraceSecs,
          background: o.background,
          registry: this.detached,
          now: o.now,
          env: o.shellEnv,
        }),
      );
    }
    for (const t of o.tools) {
      if (t.kind === "command") this.#add(new CommandTool(t, { now: o.now }));
      else {
        this.#builtinSlots.add(t.name);
        this.#order.push(t.name);
      }
    }
    for (const t of o.extra ?? []) this.register(t);
  }

  /** Adds a tool the session implements. A name already taken is a programming error. */
  register(tool: Tool): void {
    if (this.#tools.has(tool.name)) throw new Error(`tool '${tool.name}' is registered twice`);
    this.#tools.set(tool.name, tool);
    if (!this.#builtinSlots.has(tool.name)) this.#order.push(tool.name);
  }

  #add(tool: Tool): void {
    this.#tools.set(tool.name, tool);
    this.#order.push(tool.name);
  }

  /** Adds a source of tools that come and go (an MCP server's, read at every `specs()`). */
  addSource(source: ToolSource): void {
    this.#sources.push(source);
  }

  /** What the model is offered: name, description, input schema, in a stable order. */
  specs(): ToolSpec[] {
    const tools = this.#order.filter((n) => this.#tools.has(n)).map((n) => this.#tools.get(n)!);
    const sourced = this.#sourced().filter((t) => !this.#tools.has(t.name));
    const taken = new Set(sourced.map((t) => t.name));
    const skills = (this.#skills?.list() ?? []).filter((s) =>
      !this.#tools.has(s.name) && !taken.has(s.name)
    );
    return [...tools, ...sourced, ...skills].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
  }

  /** The tool a call names: a registered tool, else a source's, else a skill. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name) ?? this.#sourced().find((t) => t.name === name) ??
      this.#skills?.find(name);
  }

  #sourced(): Tool[] {
    return this.#sources.flatMap((s) => s.tools());
  }

  /** The MCP server a tool comes from (its `tool_call` line's `server`). */
  sourceOf(name: string): string | undefined {
    if (this.#tools.has(name)) return undefined;
    for (const s of this.#sources) {
      const server = s.sourceOf?.(name);
      if (server !== undefined) return server;
    }
    return undefined;
  }

  /** Where each source's error log stands (a task's start). */
  sourceErrorMark(): number[] {
    return this.#sources.map((s) => s.errorMark?.() ?? 0);
  }

  /** A task's `sourceErrors` (docs/mcp.md): sources down now, and errors since `mark`. */
  sourceErrors(mark: number[]): SourceError[] {
    return this.#sources.flatMap((s, i) => s.errorsSince?.(mark[i] ?? 0) ?? []);
  }

  /** Whether a tool, not a skill, holds `name`: a registered one or a source's (docs/mcp.md). */
  has(name: string): boolean {
    return this.#tools.has(name) || this.sourceOf(name) !== undefined;
  }

  isShell(name: string): boolean {
    return this.#tools.get(name) instanceof ShellTool;
  }

  /**
   * The checks before any policy hook, in this order (docs/tools.md): declared at all →
   * required fields → read_only. A refusal result, or null when the call may go on.
   */
  precheck(call: ToolCall, ctx: ToolContext): ToolResult | null {
    const tool = this.get(call.name);
    if (!tool) return notReached(`tool '${call.name}' is not declared in manifest allowlist`, 0);
    const started = this.#now();
    const input = call.input ?? {};

    const missing = missingFields(input, tool.inputSchema);
    if (missing.length) {
      const reason = `tool '${tool.name}' was not called: missing required field${
        missing.length > 1 ? "s" : ""
      } ${missing.map((m) => `'${m}'`).join(", ")}; call it again with ${
        missing.length > 1 ? "them" : "it"
      }`;
      return {
        ...notReached(reason, this.#now() - started),
        refusal: { kind: "missing_fields", missing, reason },
      };
    }

    const refusal = this.#readOnlyRefusal(tool, input, ctx.workdir);
    if (refusal) return { ...notReached(refusal.reason, this.#now() - started), refusal };
    return null;
  }

  /** Answers one call. Never throws: a tool's failure is an error result the model sees. */
  async dispatch(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    const refused = this.precheck(call, ctx);
    if (refused) return refused;
    const tool = this.get(call.name)!;
    const started = this.#now();
    const input = call.input ?? {};
    let result: ToolResult;
    try {
      result = await tool.call(input, ctx);
    } catch (e) {
      const why = errorMessage(e);
      return notReached(`tool '${tool.name}' failed: ${why}`, this.#now() - started);
    }
    // Output that came from the tool is untrusted data; a runtime message about a call that
    // never ran (no exit code to report) is not (docs/tools.md: dispatch failures are not fenced).
    // A skill fences itself: an operator's text is not fenced at all (docs/manifest.md "artifacts").
    const reached = !result.isError || result.exitCode !== null;
    if (result.fenceSource === null && reached && !result.skill) {
      const source = `tool:${tool.name}`;
      result = { ...result, content: fence(source, result.content), fenceSource: source };
    }
    return { ...result, durationMs: this.#now() - started };
  }

  #readOnlyRefusal(
    tool: Tool,
    input: Record<string, unknown>,
    workdir: string,
  ): Extract<ToolRefusal, { kind: "read_only" }> | null {
    // A tool artifact may add subtrees of its own (docs/manifest.md "Artifact capabilities").
    const own = tool instanceof CommandTool ? tool.readOnly : [];
    if (!this.#readOnly.length && !own.length) return null;
    const guard = new ReadOnlyGuard([...this.#readOnly, ...own], workdir);
    const shell = tool instanceof ShellTool;
    let hit;
    if (shell) {
      if (typeof input.command !== "string") return null;
      hit = guard.checkShell(tool.name, input.command, tool.interpreter);
    } else hit = guard.checkInput(input, tool.inputSchema);
    if (!hit) return null;
    const capsule = new ReadOnlyGuard(this.#readOnly, workdir).rules.includes(hit.rule);
    const reason =
      `refused: this ${tool.name} call would write to '${hit.path}' (${hit.signal}), ` +
      `which is inside the read-only path '${hit.rule}' (${
        capsule
          ? "capabilities.filesystem.read_only"
          : `the capabilities.filesystem.read_only of artifact '${tool.name}'`
      }). Nothing was run; write somewhere else instead.`;
    return { kind: "read_only", call: shell ? "shell" : "tool", target: tool.name, ...hit, reason };
  }
}

/** Required fields of `schema` the input does not carry. */
export function missingFields(
  input: Record<string, unknown>,
  schema: Record<string, unknown>,
): string[] {
  const required = Array.isArray(schema.required) ? schema.required : [];
  return required.filter((k): k is string => typeof k === "string" && input[k] === undefined);
}
