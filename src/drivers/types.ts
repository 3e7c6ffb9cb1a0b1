/**
 * The driver interface: one inference turn in, a stream of typed parts out. The session loop
 * does not know which driver it talks to. Modelled on the AI SDK's stream parts, narrowed to
 * what the loop acts on. The process transport's contract (a whole attempt per call) is
 * harness.ts.
 */
import type { HarnessDriver } from "./harness.ts";

// What a tool declares and what a model calls it with live with the tools (src/tools/types.ts),
// which sit below the drivers; the driver contract names them from there.
export type { JsonSchema, ToolCall, ToolSpec } from "../tools/types.ts";
import type { ToolCall, ToolSpec } from "../tools/types.ts";

/** One tool result as the model receives it: `content` is exactly what the artifact frame shows. */
export interface ToolResultMessage {
  toolCallId: string;
  toolName: string;
  content: string;
  isError: boolean;
}

/** The provider-neutral conversation. Tool results go back fenced, as the model received them. */
export type ConversationMessage =
  | { role: "user"; content: string }
  | {
    role: "assistant";
    text: string;
    reasoning?: string;
    toolCalls: ToolCall[];
  }
  | { role: "tool"; results: ToolResultMessage[] };

export interface TurnRequest {
  /** The resolved system prompt, if any. */
  system?: string;
  messages: ConversationMessage[];
  tools: ToolSpec[];
  maxTokens: number;
  /** The task this turn belongs to (the scripted driver matches on it). */
  task: TaskRef;
  /** 1-based turn number within the task, counted across attempts. */
  turn: number;
}

export interface TaskRef {
  id: string;
  contextId: string;
  /** The task's text as the model first received it. */
  text: string;
  /** The A2A message id that started the task (absent for task.md launches). */
  messageId?: string;
}

/** Why a driver call failed; the loop turns it into `task failed (<cause>): <reason>`. */
export type DriverErrorCause = "driver_error" | "credential_rejected" | "malformed_response";

export type DriverPart =
  | { type: "text-delta"; text: string }
  | { type: "reasoning-delta"; text: string }
  /** The model began writing a tool call (→ `tool-call-started`). */
  | { type: "tool-input-start"; id: string; toolName: string }
  /** More of a call's input JSON (→ cumulative UTF-8 bytes in `tool-call-progress`). */
  | { type: "tool-input-delta"; id: string; delta: string }
  /** The complete call; the loop dispatches it after the turn ends. */
  | { type: "tool-call"; call: ToolCall }
  | { type: "usage"; inputTokens: number; outputTokens: number }
  /** A provider retry: written to the trace, never to the stream. */
  | { type: "retry"; attempt: number; reason: string }
  /**
   * The turn ended. `stopReason` is the provider's own word (`end_turn`, `tool_use`, `stop`,
   * `max_tokens`, …); `""` when it gave none.
   */
  | { type: "finish"; stopReason: string; maxTokensCut: boolean }
  | { type: "error"; cause: DriverErrorCause; message: string; status?: number };

export interface Driver {
  /** The manifest's driver name, e.g. `scripted`, for `-v` and the trace. */
  readonly name: string;
  /** The model named in the trace (`scripted` for the scripted driver). */
  readonly model: string;
  /**
   * Run one inference turn. The iterable ends after a `finish` or an `error` part. Aborting
   * `signal` ends it early (cancel); the driver then stops without a further part.
   */
  turn(req: TurnRequest, signal: AbortSignal): AsyncIterable<DriverPart>;
  /** Release sockets, child processes. */
  close?(): Promise<void>;
}

/** A manifest's driver: per-turn (`transport: http`), or a harness running whole attempts. */
export type AnyDriver = Driver | HarnessDriver;
