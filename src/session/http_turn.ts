/**
 * One inference turn of a per-turn driver (`transport: http`, and the scripted model): the
 * driver's parts streamed into the turn sink as they come (text, thinking, tool-call-started,
 * tool-call-progress at the shared rate), and what the turn produced gathered for the attempt.
 */
import { errorMessage, warningLine } from "../errors.ts";
import type {
  ConversationMessage,
  Driver,
  DriverErrorCause,
  ToolCall,
  TurnRequest,
} from "../drivers/types.ts";
import { ProgressThrottle } from "../drivers/progress.ts";
import type { TraceWriter } from "../trace_writer.ts";
import type { TurnSink } from "./turn_sink.ts";
import { runningTotal } from "../drivers/running_total.ts";

const enc = new TextEncoder();

export interface TurnOutput {
  text: string;
  reasoning: string;
  calls: ToolCall[];
  usage: { input: number; output: number } | null;
  /** The provider's own word (`end_turn`, `tool_use`, `max_tokens`, …); `""` when it gave none. */
  stopReason: string;
  /** The turn stopped at `inference.max_tokens`. */
  maxTokensCut: boolean;
  error: { cause: DriverErrorCause; message: string } | null;
}

export interface TurnIo {
  sink: TurnSink;
  trace: TraceWriter;
  /** The parent and task of a `harness_retry` line (a provider retry writes no event). */
  retryParent: string;
  taskId: string;
  /** stderr: each provider retry is also a W-RUN-005 line, so a wait between retries is not silent. */
  warn?: (line: string) => void;
  clock: () => number;
}

/**
 * Streams one turn. Returns null when the task was canceled during it (nothing of the turn
 * counts then). A driver that throws is a `driver_error` turn.
 */
export async function streamTurn(
  driver: Driver,
  req: TurnRequest,
  signal: AbortSignal,
  io: TurnIo,
): Promise<TurnOutput | null> {
  const out: TurnOutput = {
    text: "",
    reasoning: "",
    calls: [],
    usage: null,
    stopReason: "",
    maxTokensCut: false,
    error: null,
  };
  const progress = new ProgressThrottle(io.clock);
  try {
    for await (const part of driver.turn(req, signal)) {
      if (signal.aborted) break;
      switch (part.type) {
        case "text-delta":
          out.text += part.text;
          io.sink.write(part);
          break;
        case "reasoning-delta":
          out.reasoning += part.text;
          io.sink.write(part);
          break;
        case "tool-input-start":
          progress.update(part.id, 0);
          io.sink.write(part);
          break;
        case "tool-input-delta": {
          if (!progress.has(part.id)) break;
          const total = progress.bytes(part.id) + enc.encode(part.delta).length;
          const bytes = progress.update(part.id, total);
          if (bytes !== null) {
            io.sink.write({ type: "tool-input-progress", id: part.id, inputBytes: bytes });
          }
          break;
        }
        case "tool-call": {
          const bytes = progress.flush(part.call.id);
          if (bytes !== null) {
            io.sink.write({ type: "tool-input-progress", id: part.call.id, inputBytes: bytes });
          }
          out.calls.push(part.call);
          break;
        }
        case "usage":
          out.usage = { input: part.inputTokens, output: part.outputTokens };
          break;
        case "retry":
          io.trace.write("harness_retry", io.retryParent, {
            task_id: io.taskId,
            attempt: part.attempt,
            reason: part.reason,
          });
          io.warn?.(warningLine("W-RUN-005", `task ${io.taskId}: ${part.reason}`));
          break;
        case "finish":
          out.stopReason = part.stopReason;
          out.maxTokensCut = part.maxTokensCut;
          break;
        case "error":
          out.error = { cause: part.cause, message: part.message };
          break;
      }
    }
  } catch (e) {
    if (!signal.aborted) {
      out.error = { cause: "driver_error", message: errorMessage(e) };
    }
  }
  if (signal.aborted) return null;
  if (out.text !== "") io.sink.write({ type: "text-final" });
  return out;
}

/** A rough count (4 characters a token) for drivers that report no usage. */
export function estimateTokens(messages: ConversationMessage[]): number {
  return Math.ceil(historyChars(messages) / 4);
}

const historyChars = runningTotal((m) => {
  if (m.role === "user") return m.content.length;
  if (m.role === "assistant") return m.text.length + JSON.stringify(m.toolCalls).length;
  return m.results.reduce((n, r) => n + r.content.length, 0);
});
