/**
 * What a fake provider answers to one request: a provider-neutral description of a model turn
 * (text, thinking, tool calls, usage, the stop) plus an optional fault. Each provider module
 * renders it in its own wire format, so one plan exercises all three drivers the same way.
 */

export type FakeStep =
  /** One text delta. Consecutive text steps form one content block. */
  | { text: string }
  /** One reasoning delta. Consecutive thinking steps form one block. */
  | { thinking: string }
  /** A complete tool call whose input JSON is streamed in `chunks` pieces (default 3). */
  | {
    toolCall: { id: string; name: string; input: Record<string, unknown>; chunks?: number };
  }
  /** Pause the stream (between the events around it). */
  | { delayMs: number };

export type FakeStop = "end" | "tool" | "max_tokens";

export type FakeFault =
  /** Answer with this HTTP status and the provider's error body instead of a stream. */
  | { kind: "status"; status: number; message?: string; retryAfterSecs?: number }
  /** Write `afterEvents` SSE events, then abort the connection mid-body. */
  | { kind: "cut"; afterEvents: number }
  /** Write `afterEvents` SSE events, then end the body cleanly, as a proxy cutting it short. */
  | { kind: "end"; afterEvents: number }
  /** Write `afterEvents` SSE events, then one whose data is not JSON, then the rest. */
  | { kind: "malformed"; afterEvents: number }
  /** Write `afterEvents` SSE events, then nothing until the client goes away. */
  | { kind: "stall"; afterEvents: number }
  /** Write `afterEvents` SSE events, then the provider's in-stream error event. */
  | { kind: "stream-error"; afterEvents: number; message?: string };

export interface FakeTurn {
  steps: FakeStep[];
  /** Default: `tool` when a step is a tool call, else `end`. */
  stop?: FakeStop;
  /** Default: 12 in, 34 out. */
  usage?: { input: number; output: number };
  fault?: FakeFault;
}

/** A rendered stream: SSE event strings (each ending in a blank line) and pauses. */
export type WireChunk = string | { delayMs: number };

export function stopOf(turn: FakeTurn): FakeStop {
  if (turn.stop) return turn.stop;
  return turn.steps.some((s) => "toolCall" in s) ? "tool" : "end";
}

export function usageOf(turn: FakeTurn): { input: number; output: number } {
  return turn.usage ?? { input: 12, output: 34 };
}

/** Split a string into `n` non-empty pieces (fewer when it is shorter than `n`). */
export function splitInto(s: string, n: number): string[] {
  const count = Math.max(1, Math.min(n, s.length));
  const size = Math.ceil(s.length / count);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out.length ? out : [""];
}

/** One SSE event in the byte form providers use: optional `event:` line, one `data:` line. */
export function sseEvent(data: unknown, event?: string): string {
  const body = typeof data === "string" ? data : JSON.stringify(data);
  return (event ? `event: ${event}\n` : "") + `data: ${body}\n\n`;
}

/** Consecutive steps of one kind (text / thinking) grouped into blocks, as providers stream them. */
export type Block =
  | { kind: "text"; deltas: Array<string | { delayMs: number }> }
  | { kind: "thinking"; deltas: Array<string | { delayMs: number }> }
  | { kind: "tool"; id: string; name: string; pieces: string[]; json: string }
  | { kind: "delay"; ms: number };

export function blocksOf(turn: FakeTurn): Block[] {
  const blocks: Block[] = [];
  for (const step of turn.steps) {
    const last = blocks.at(-1);
    if ("text" in step) {
      if (last?.kind === "text") last.deltas.push(step.text);
      else blocks.push({ kind: "text", deltas: [step.text] });
    } else if ("thinking" in step) {
      if (last?.kind === "thinking") last.deltas.push(step.thinking);
      else blocks.push({ kind: "thinking", deltas: [step.thinking] });
    } else if ("toolCall" in step) {
      const json = JSON.stringify(step.toolCall.input);
      blocks.push({
        kind: "tool",
        id: step.toolCall.id,
        name: step.toolCall.name,
        json,
        pieces: splitInto(json, step.toolCall.chunks ?? 3),
      });
    } else if (last?.kind === "text" || last?.kind === "thinking") {
      // A pause inside a block keeps the block open, as a slow model's stream does.
      last.deltas.push({ delayMs: step.delayMs });
    } else {
      blocks.push({ kind: "delay", ms: step.delayMs });
    }
  }
  return blocks;
}
