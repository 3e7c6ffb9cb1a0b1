/**
 * What a tool dispatch returns to the loop. `content` is exactly the text the model receives
 * (fenced when `fenceSource` is a string); the loop copies these fields into the artifact frame
 * and the trace.
 */
import type { JsonSchema } from "../drivers/types.ts";

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
  /** Present when the tool was a shell tool: for the `shell` trace line. */
  shell?: ShellRun;
}

export interface ToolContext {
  /** The session's working directory (the tool's cwd). */
  workdir: string;
  taskId: string;
  contextId: string;
  signal: AbortSignal;
}

/** A tool the capsule offers the model. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
