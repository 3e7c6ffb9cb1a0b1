/**
 * The scripted driver (docs/scripted.md): plays a model from a script, with no network. It streams
 * through the same `Driver` interface as a real provider, so everything downstream (frames,
 * turns, tools, hooks) runs for real, and it is what the project's own tests drive every path
 * with.
 *
 * Timing rules:
 * - `delay_ms` on a step is waited *before* the step's part, on every repetition, so a test sees
 *   frames arrive while the turn is still running.
 * - Steps without a delay use no timer at all: a `text` step repeated 100 000 times streams
 *   from a loop, one part at a time, never building the parts up front. Every
 *   `MACROTASK_EVERY` undelayed parts it yields to the event loop once (a `setImmediate`, not a
 *   clamped `setTimeout`), so a cancel arriving over HTTP is seen mid-stream rather than after
 *   the last part.
 * - An aborted `signal` ends the stream promptly and with no further part: during a delay, and
 *   between any two parts.
 */
import type { ConversationMessage, Driver, DriverPart, TaskRef, TurnRequest } from "./types.ts";
import type { Script, ScriptStep, ScriptTurn } from "./script_schema.ts";
import { runningTotal } from "./running_total.ts";
import { abortableSleep as sleepFor } from "../abortable_sleep.ts";

export { loadScript, parseScript, validateScript } from "./script_schema.ts";
export type {
  Script,
  ScriptErrorCause,
  ScriptStep,
  ScriptTask,
  ScriptToolCall,
  ScriptTurn,
} from "./script_schema.ts";

/** The script used when the manifest names none: any task gets one short answer. */
export const DEFAULT_SCRIPT: Script = {
  tasks: [{ turns: [{ steps: [{ text: "Hello from the scripted model." }] }] }],
};

/** Waits `ms`, or less when `signal` aborts; may resolve or reject on abort. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export interface ScriptedDriverOptions {
  /** How `delay_ms` waits; tests can pass a fake clock. Default: an abortable `setTimeout`. */
  sleep?: Sleep;
}

/** Undelayed parts between two yields to the event loop (see the file comment). */
const MACROTASK_EVERY = 256;

/** An abortable timer that resolves early (never rejects) when the signal aborts. */
export const abortableSleep: Sleep = sleepFor;

const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

interface CompiledEntry {
  match?: RegExp;
  matchMessageId?: RegExp;
  turns: ScriptTurn[];
}

/** Where one task stands in its entry; kept across attempts so a reopen plays the next turn. */
interface Cursor {
  entry: CompiledEntry | undefined;
  /** Index of the next unplayed turn. */
  next: number;
}

function compile(script: Script): CompiledEntry[] {
  return script.tasks.map((t) => ({
    match: t.match === undefined ? undefined : new RegExp(t.match),
    matchMessageId: t.match_message_id === undefined ? undefined : new RegExp(t.match_message_id),
    turns: t.turns,
  }));
}

/** First entry whose every match key matches; an entry without keys matches any task. */
function pick(entries: CompiledEntry[], task: TaskRef): CompiledEntry | undefined {
  return entries.find((e) => {
    if (e.match && !e.match.test(task.text)) return false;
    if (e.matchMessageId) {
      // A task launched from task.md has no message id, so it never matches a message-id entry.
      if (task.messageId === undefined || !e.matchMessageId.test(task.messageId)) return false;
    }
    return true;
  });
}

export function createScriptedDriver(script: Script, opts: ScriptedDriverOptions = {}): Driver {
  const sleep = opts.sleep ?? abortableSleep;
  const entries = compile(script);
  const cursors = new Map<string, Cursor>();
  return {
    name: "scripted",
    model: "scripted",
    turn(req: TurnRequest, signal: AbortSignal): AsyncIterable<DriverPart> {
      // The turn is taken when turn() is called, not when the stream is first read, so a turn
      // that is cancelled (or never read) still counts as played and the next call moves on.
      let cursor = cursors.get(req.task.id);
      if (!cursor) {
        cursor = { entry: pick(entries, req.task), next: 0 };
        cursors.set(req.task.id, cursor);
      }
      const turn = cursor.entry?.turns[cursor.next];
      if (turn) cursor.next++;
      return play(turn, cursor.next, req, signal, sleep);
    },
    close() {
      cursors.clear();
      return Promise.resolve();
    },
  };
}

/** The input JSON of a call split into at most `chunks` non-empty pieces, by code point. */
export function splitChunks(json: string, chunks: number): string[] {
  const chars = Array.from(json);
  const n = Math.max(1, Math.min(chunks, chars.length));
  const base = Math.floor(chars.length / n);
  const extra = chars.length % n;
  const pieces: string[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const len = base + (i < extra ? 1 : 0);
    pieces.push(chars.slice(at, at + len).join(""));
    at += len;
  }
  return pieces;
}

/**
 * Play one turn. `turn` undefined means the task has no (more) turns: the model ends with an
 * empty answer. `turnNumber` is the 1-based position of the turn in its entry (for default ids).
 */
async function* play(
  turn: ScriptTurn | undefined,
  turnNumber: number,
  req: TurnRequest,
  signal: AbortSignal,
  sleep: Sleep,
): AsyncGenerator<DriverPart> {
  if (signal.aborted) return;
  let outChars = 0;
  let sawUsage = false;
  let toolCalls = 0;
  let undelayed = 0;
  for (const step of turn?.steps ?? []) {
    const repeat = step.repeat ?? 1;
    for (let r = 0; r < repeat; r++) {
      if (step.delay_ms !== undefined && step.delay_ms > 0) {
        try {
          await sleep(step.delay_ms, signal);
        } catch (e) {
          if (signal.aborted) return;
          throw e;
        }
        if (signal.aborted) return;
      } else if (++undelayed % MACROTASK_EVERY === 0) {
        await nextMacrotask();
        if (signal.aborted) return;
      }
      if (step.text !== undefined) {
        // The common step, one part: yielded without a generator of parts per repetition (a
        // text step repeated 10,000 times is a flood's every event).
        outChars += step.text.length;
        yield { type: "text-delta", text: step.text };
        if (signal.aborted) return;
        continue;
      }
      const parts = partsOf(step, r, turnNumber, () => ++toolCalls);
      for (const part of parts) {
        if (part.type === "usage") sawUsage = true;
        outChars += outputChars(part);
        yield part;
        // The consumer may abort while holding this part; nothing follows an abort.
        if (signal.aborted) return;
        if (part.type === "error") return;
        const pace = step.tool_call?.chunk_delay_ms;
        if (part.type === "tool-input-delta" && pace) {
          // A model writing a long input slowly: what tool-call-progress's rate limit is for.
          await sleep(pace, signal);
          if (signal.aborted) return;
        }
      }
    }
  }
  if (!sawUsage) {
    // No `usage` step: report an estimate (about 4 characters per token) so a session's token
    // totals are never zero with the scripted driver. Input counts the request's system prompt
    // and messages, output what this turn streamed.
    yield {
      type: "usage",
      inputTokens: Math.max(1, Math.ceil(inputChars(req) / 4)),
      outputTokens: Math.ceil(outChars / 4),
    };
    if (signal.aborted) return;
  }
  const stopReason = turn?.max_tokens ? "max_tokens" : toolCalls > 0 ? "tool_use" : "end_turn";
  yield { type: "finish", stopReason, maxTokensCut: turn?.max_tokens === true };
}

/**
 * The parts of one repetition of a step, lazily (a tool call is several parts). `nextCall`
 * numbers tool calls within the turn for default ids.
 */
function* partsOf(
  step: ScriptStep,
  repetition: number,
  turnNumber: number,
  nextCall: () => number,
): Generator<DriverPart> {
  if (step.text !== undefined) {
    yield { type: "text-delta", text: step.text };
  } else if (step.thinking !== undefined) {
    yield { type: "reasoning-delta", text: step.thinking };
  } else if (step.tool_call !== undefined) {
    const tc = step.tool_call;
    const n = nextCall();
    // Repetitions of a call with an explicit id get `<id>_2`, `<id>_3`, … so ids stay unique.
    const id = tc.id === undefined
      ? `toolu_scripted_${turnNumber}_${n}`
      : repetition === 0
      ? tc.id
      : `${tc.id}_${repetition + 1}`;
    const input = tc.input ?? {};
    yield { type: "tool-input-start", id, toolName: tc.name };
    for (const delta of splitChunks(JSON.stringify(input), tc.chunks ?? 1)) {
      yield { type: "tool-input-delta", id, delta };
    }
    yield { type: "tool-call", call: { id, name: tc.name, input: structuredClone(input) } };
  } else if (step.usage !== undefined) {
    yield {
      type: "usage",
      inputTokens: step.usage.input_tokens,
      outputTokens: step.usage.output_tokens,
    };
  } else if (step.error !== undefined) {
    yield { type: "error", cause: step.error_cause ?? "driver_error", message: step.error };
  }
  // A step with only `delay_ms` has no part.
}

function outputChars(part: DriverPart): number {
  switch (part.type) {
    case "text-delta":
    case "reasoning-delta":
      return part.text.length;
    case "tool-input-delta":
      return part.delta.length;
    default:
      return 0;
  }
}

function inputChars(req: TurnRequest): number {
  return (req.system?.length ?? 0) + historyChars(req.messages);
}

const historyChars = runningTotal((m: ConversationMessage): number => {
  switch (m.role) {
    case "user":
      return m.content.length;
    case "assistant":
      return m.text.length + (m.reasoning?.length ?? 0) +
        m.toolCalls.reduce((n, c) => n + c.name.length + JSON.stringify(c.input).length, 0);
    case "tool":
      return m.results.reduce((n, r) => n + r.content.length, 0);
  }
});
