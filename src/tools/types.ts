/**
 * What a tool dispatch returns to the loop. `content` is exactly the text the model receives
 * (fenced when `fenceSource` is a string); the loop copies these fields into the artifact frame
 * and the trace.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
/** A JSON Schema object as tools declare it. */
export type JsonSchema = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The parsed input object; `{}` when the model sent none. */
  input: Record<string, unknown>;
}

export interface ImageResult {
  mediaType: string;
  data: Uint8Array;
}

export interface ShellRun {
  /** Resolved binary as the trace names it. */
  binary: string;
  /** Args only; the `-c` script for interpreters. */
  command: string;
  exitCode: number | null;
  stdoutBytes: number;
  stderrBytes: number;
  /** Set when the command outran `lifecycle.shell_grace_secs` and went on in the background. */
  detached?: { workId: string; graceMs: number; done: Promise<DetachedOutcome> };
}

export interface DetachedOutcome {
  exitCode: number;
  durationMs: number;
  outputPath: string;
  outputBytes: number;
}

export interface ToolResult {
  content: string;
  fenceSource: string | null;
  isError: boolean;
  exitCode: number | null;
  truncated: boolean;
  durationMs: number;
  /** Images the call returned (command tools speaking MCP's CallToolResult). */
  images: ImageResult[];
  /** Present when the call read a skill: it is a `skill_call` line, not a `tool_call`. */
  skill?: SkillCall;
  /**
   * A command tool declared `output: data` printed this JSON value (exit 0): the task publishes
   * it as a `data` artifact (docs/protocol.md "Files and data").
   */
  data?: { value: unknown };
  /** The MCP server that answered (docs/mcp.md): the `tool_call` line's `server`. */
  mcpServer?: string;
  /** Present when the tool was a shell tool: for the `shell` trace line. */
  shell?: ShellRun;
  /**
   * Set when the call was refused before it reached the tool: `missing_fields` (trace
   * `tool_input_refused`; the artifact frame is still written), `read_only` (trace
   * `protected_path_denied`; no frame on an http capsule), `hook` (trace `call_denied`).
   */
  refusal?: ToolRefusal;
}

/** Which kind of skill a call read (docs/manifest.md "artifacts"): the `skill_call` line's `origin` and `trust`. */
export interface SkillCall {
  origin: "operator" | "runtime";
  trust: "trusted" | "untrusted";
}

/** Why a call never reached its tool; the fields are the trace event's (src/trace_events.ts). */
export type ToolRefusal =
  | { kind: "missing_fields"; missing: string[]; reason: string }
  | {
    kind: "read_only";
    /** `shell` for a shell tool, `tool` for any other. */
    call: "shell" | "tool";
    /** The tool (or shell binary) that was called. */
    target: string;
    /** The offending path as the call wrote it. */
    path: string;
    /** The `capabilities.filesystem.read_only` entry it falls under. */
    rule: string;
    /** What identified the write, e.g. `redirection >`, `rm argument`, `input key dest`. */
    signal: string;
    reason: string;
  }
  | { kind: "hook"; hook?: string; reason?: string };

/**
 * A result for a call that never reached its tool or never ran to completion: a runtime message,
 * unfenced (docs/tools.md: dispatch failures are not fenced), an error, no exit code.
 */
export function notReached(content: string, durationMs = 0): ToolResult {
  return {
    content,
    fenceSource: null,
    isError: true,
    exitCode: null,
    truncated: false,
    durationMs,
    images: [],
  };
}

export interface ToolContext {
  /** The session's working directory (the tool's cwd). */
  workdir: string;
  taskId: string;
  contextId: string;
  signal: AbortSignal;
  /** What a process the tool starts runs under (src/containment/spawn.ts); absent: advisory. */
  containment?: ContainmentPolicy;
  /** The tool's own progress (MCP `notifications/progress`); the caller rate-limits it. */
  progress?(p: ToolProgress): void;
}

/** One progress report of a running call, as MCP's `notifications/progress` carries it. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A tool the capsule offers the model. `call` returns its output unfenced with `fenceSource:
 * null`; the ToolBox fences every result that reached the tool (not an error, or an error that
 * carries the subprocess's exit code) under `tool:<name>`, and leaves runtime messages (spawn
 * failures, cancel, refusals: `isError` with `exitCode: null`) unfenced. A tool that fenced its
 * content itself sets `fenceSource` and the ToolBox leaves it alone.
 */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
