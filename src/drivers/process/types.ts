/**
 * The per-CLI side of the process transport: the `HarnessDialect` (describe / launch / parse /
 * classifyExit) the generic runner (runner.ts) drives, one small file per CLI (claude_code.ts,
 * codex.ts). The loop-facing contract (`HarnessDriver`, `AttemptRequest`, `HarnessPart`) is
 * src/drivers/harness.ts; it is re-exported here for the dialects.
 */
import type { QuotaWindow } from "../../events/frames.ts";
import type { HarnessFailureKind, UsageTotals } from "../harness.ts";

import type { HarnessMcpServer } from "./mcp_servers.ts";
export type * from "../harness.ts";

// ───────────────────────────── per-CLI dialect ─────────────────────────────

export type InterruptMethod = "stdin-message" | "signal-int" | "unsupported";

export interface HarnessDescription {
  harness: string;
  /** Default binary, looked up on PATH when `inference.command` is absent. */
  binary: string;
  versionArgs: string[];
  testedVersions: string[];
  interrupt: InterruptMethod;
  /** Env names copied from mur's environment when `inference.env` is absent. */
  defaultEnv: string[];
  /** Set before `inference.env` (which can override them), after PATH and HOME. */
  envDefaults?: Record<string, string>;
  streamsText: boolean;
  reportsUsage: boolean;
  /** Session ids must be UUIDs minted by the runtime (`false`: the harness mints them). */
  runtimeMintsSessionIds: boolean;
  /**
   * The last event the harness writes about a bridge call before it makes it: the call's whole
   * form (Claude Code prints the assistant message, input complete, before running its tools) or
   * only its start (Codex reports the whole call after it ran). A bridge call waits for it
   * (call_order.ts), so every frame of the call's input precedes what the call does.
   */
  announcesCallBy: "tool-call" | "tool-call-started";
}

export interface BridgeInfo {
  serverName: string;
  url: string;
  token: string;
  /** Bare tool names (no harness prefix). */
  toolNames: string[];
}

export interface LaunchRequest {
  model?: string;
  systemPrompt: string;
  bridge?: BridgeInfo;
  session: { id: string | null; mode: "new" | "resume" };
  prompt: string;
  /** The session exports OpenTelemetry spans: the harness's own join them (telemetry.ts). */
  telemetry?: HarnessTelemetry;
  /** The manifest's `mcp_servers:`, for the harness's own MCP configuration (docs/mcp.md). */
  mcpServers?: HarnessMcpServer[];
}

/** Where the session's spans go and the span a harness's spans hang under (src/otel/). */
export interface HarnessTelemetry {
  /** W3C `traceparent` of the task's span. */
  traceparent: string;
  /** The full OTLP/HTTP traces URL. */
  tracesUrl: string;
  headers: Record<string, string>;
  /** `observability.otel_content`: the harness may put prompts and tool details on its spans. */
  content: boolean;
}

export interface LaunchPlan {
  args: string[];
  /** Set after the base environment; wins. `{files_dir}` is replaced in values. */
  env: Record<string, string>;
  /** Written mode 0600 into a private 0700 directory; `{files_dir}` in args names it. */
  files: { name: string; contents: string }[];
  stdin?: string;
  keepStdinOpen: boolean;
  /** Written to the open stdin to interrupt (method `stdin-message`). */
  interruptStdin?: string;
}

/**
 * The generic events a dialect reads out of the harness's stdout (README "Coding-agent CLIs as the
 * model").
 */
export type HarnessEvent =
  | {
    kind: "session-started";
    id: string;
    /** `unknown` when the harness does not say how it is billed (Codex). */
    auth: "subscription" | "api-key" | "unknown";
    model?: string;
  }
  | { kind: "text-delta"; text: string }
  /** The whole text of a message block; replaces the deltas already streamed. */
  | { kind: "text"; text: string }
  | { kind: "thinking-delta"; text: string }
  | { kind: "thinking"; text: string }
  | { kind: "tool-call-started"; id: string; name: string }
  /** Running UTF-8 byte total of the call's input JSON. */
  | { kind: "tool-call-progress"; id: string; inputBytes: number }
  | { kind: "tool-call"; id: string; name: string; input: string }
  | {
    kind: "tool-result";
    id: string;
    /** Present when the harness names the tool on its result (Codex). */
    name?: string;
    output: string;
    isError: boolean;
    /** Arguments, for matching a bridge call when the harness sends no call id (Codex). */
    input?: unknown;
  }
  | ({ kind: "usage" } & Partial<UsageTotals>)
  | { kind: "retry"; attempt: number; reason: string }
  | { kind: "turn-end"; result: string }
  | { kind: "turn-failed"; failureKind: HarnessFailureKind; message: string }
  | { kind: "quota"; windows: QuotaWindow[] }
  | { kind: "suggested-prompt"; text: string }
  | { kind: "note"; text: string }
  /** An MCP server of the manifest the harness could not connect (docs/mcp.md). */
  | { kind: "source-down"; source: string; message: string };

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  stderrTail: string;
  interrupted: boolean;
  sawTerminal: boolean;
}

/** Stateful line parser: one per run. Batching lines differently gives the same events. */
export interface HarnessParser {
  parse(line: string): HarnessEvent[];
}

export interface HarnessDialect {
  describe(): HarnessDescription;
  launch(req: LaunchRequest): LaunchPlan;
  createParser(opts: { serverName: string }): HarnessParser;
  /** Used when stdout ended with no terminal event: a `turn-end` or a `turn-failed`. */
  classifyExit(exit: ExitInfo): HarnessEvent & { kind: "turn-end" | "turn-failed" };
}
