/**
 * The bookkeeping of one harness run, without the process: the generic `HarnessEvent`s a dialect
 * reads out of the harness's stdout go in, one at a time and synchronously, and the loop-facing
 * `HarnessPart`s come out (harness.ts lists what each part means). It knows segments (a run of
 * text, reasoning and tool calls the seed calls an inference turn), model actions counted
 * against `inference.max_turns`, the owed empty `text` final, tool calls waiting for their
 * results, progress at the shared rate, and the harness session seen.
 *
 * What it cannot do itself it leaves for the runner to read after each event: a session id to
 * remember (`takeRemember`), a terminal event that closes stdin (`terminal`), a stop at the
 * turn budget that kills the harness (`stopped`).
 */
import type { HarnessTraceFields } from "../../trace_events.ts";
import { ProgressThrottle } from "../progress.ts";
import type { BridgeCallRecord } from "./bridge.ts";
import type { AttemptOutcome, HarnessEvent, HarnessPart } from "./types.ts";
import { failed } from "./outcome.ts";

export interface TrackerOptions {
  /** Turns the task's earlier attempts used; this run's are numbered on from it. */
  turnsUsed: number;
  maxTurns: number;
  now: () => number;
  progressIntervalMs: number;
  /** The session id the run was planned with (null: the harness mints one). */
  sessionId: string | null;
  /** The bridge's record of a call, by the harness's call id, else by name and arguments. */
  matchCall?(id: string, name: string | null, args: unknown): BridgeCallRecord | null;
}

interface OpenCall {
  name: string;
  input: string;
  startedAt: number;
}

export class TurnTracker {
  /** Model actions in this run. */
  turns = 0;
  /** The harness said which session it runs in (`session-started`). */
  sawSession = false;
  sessionId: string | null;
  /** The run's terminal event (turn-end or turn-failed), once read. */
  terminal: (HarnessEvent & { kind: "turn-end" | "turn-failed" }) | null = null;
  /** The runtime stopped the run at the turn budget: the outcome, and the harness is killed. */
  stopped: AttemptOutcome | null = null;
  /** The attempt was interrupted (a cancel): no suggested prompt after it. */
  interrupted = false;
  /** The last segment streamed text (the loop then writes no whole-reply text frame). */
  lastSegmentText = false;

  readonly #o: TrackerOptions;
  readonly #calls = new Map<string, OpenCall>();
  readonly #started = new Set<string>();
  readonly #progress: ProgressThrottle;
  #turnOpen = false;
  #turnFirstTool: string | null = null;
  #segmentOpen = false;
  #segmentText = false;
  #segmentThinking = false;
  #owesFinal = false;
  #warnedAuth = false;
  #remember: string | null = null;
  #rememberedAtEnd = false;

  constructor(o: TrackerOptions) {
    this.#o = o;
    this.sessionId = o.sessionId;
    this.#progress = new ProgressThrottle(o.now, o.progressIntervalMs);
  }

  /** Ids of calls that never got a result. */
  get openCalls(): string[] {
    return [...this.#calls.keys()];
  }

  /** A session id to store for the task (and context), once; null when there is none. */
  takeRemember(): string | null {
    const id = this.#remember;
    this.#remember = null;
    return id;
  }

  /**
   * The run completed without a `session-started` event: the planned id is remembered at the
   * end (once).
   */
  rememberPlannedAtEnd(): void {
    if (!this.sawSession && this.sessionId && !this.#rememberedAtEnd) {
      this.#rememberedAtEnd = true;
      this.#remember = this.sessionId;
    }
  }

  // Why long: one switch over the harness event kinds, a few lines each, all updating the tracker's
  // turn state: a table in code.
  handle(ev: HarnessEvent): HarnessPart[] {
    const out: HarnessPart[] = [];
    switch (ev.kind) {
      case "session-started":
        this.sawSession = true;
        out.push(trace("harness_session", {
          harness_session_id: ev.id,
          auth: ev.auth,
          model: ev.model ?? null,
        }));
        if (ev.auth === "api-key" && !this.#warnedAuth) {
          this.#warnedAuth = true;
          out.push(trace("harness_warning", {
            code: "W-SEC-031",
            message: "the harness is billing an API key, not a subscription; " +
              "murmur does not meter that spend",
          }));
        }
        this.sessionId = ev.id;
        this.#remember = ev.id;
        break;
      case "text-delta":
        this.#openSegment(out);
        this.#segmentText = true;
        this.#owesFinal = true;
        out.push({ type: "text-delta", text: ev.text });
        break;
      case "thinking-delta":
      case "thinking":
        // A whole `thinking` block is reasoning nothing streamed: dropped when deltas came.
        if (ev.kind === "thinking" && this.#segmentOpen && this.#segmentThinking) break;
        this.#openSegment(out);
        this.#segmentThinking = true;
        out.push({ type: "reasoning-delta", text: ev.text });
        break;
      case "text":
        this.#openSegment(out);
        if (!this.#openTurn(null)) break;
        this.#payFinal(out);
        break;
      case "tool-call-started":
        if (this.#started.has(ev.id)) break;
        this.#started.add(ev.id);
        this.#openSegment(out);
        out.push({ type: "tool-input-start", id: ev.id, toolName: ev.name });
        break;
      case "tool-call-progress": {
        const bytes = this.#progress.update(ev.id, ev.inputBytes);
        if (bytes !== null) out.push({ type: "tool-input-progress", id: ev.id, inputBytes: bytes });
        break;
      }
      case "tool-call": {
        this.#openSegment(out);
        if (!this.#openTurn(ev.name)) break;
        const bytes = this.#progress.flush(ev.id);
        if (bytes !== null) out.push({ type: "tool-input-progress", id: ev.id, inputBytes: bytes });
        this.#calls.set(ev.id, { name: ev.name, input: ev.input, startedAt: this.#o.now() });
        break;
      }
      case "tool-result":
        this.#toolResult(ev, out);
        break;
      case "usage": {
        const { kind: _k, ...t } = ev;
        out.push({
          type: "usage",
          inputTokens: t.inputTokens ?? 0,
          outputTokens: t.outputTokens ?? 0,
          ...(t.cacheReadTokens !== undefined ? { cacheReadTokens: t.cacheReadTokens } : {}),
          ...(t.cacheCreationTokens !== undefined
            ? { cacheCreationTokens: t.cacheCreationTokens }
            : {}),
          ...(t.thinkingTokens !== undefined ? { thinkingTokens: t.thinkingTokens } : {}),
        });
        break;
      }
      case "retry":
        out.push(trace("harness_retry", { attempt: ev.attempt, reason: ev.reason }));
        break;
      case "quota":
        out.push({ type: "quota", windows: ev.windows });
        break;
      case "suggested-prompt":
        if (!this.interrupted && ev.text.trim()) {
          out.push({ type: "suggested-prompt", text: ev.text });
        }
        break;
      case "note":
        out.push(trace("harness_note", { text: ev.text }));
        break;
      case "source-down":
        out.push(
          trace("harness_source_error", { kind: "mcp", source: ev.source, message: ev.message }),
        );
        break;
      case "turn-end":
      case "turn-failed":
        if (this.terminal) break;
        this.terminal = ev;
        this.#payFinal(out);
        if (this.#segmentOpen) this.lastSegmentText = this.#segmentText;
        if (ev.kind === "turn-end") this.#closeTurn("end_turn", out);
        else this.#turnOpen = false;
        if (ev.kind === "turn-end") this.rememberPlannedAtEnd();
        break;
    }
    return out;
  }

  #toolResult(ev: HarnessEvent & { kind: "tool-result" }, out: HarnessPart[]): void {
    this.#payFinal(out);
    const call = this.#calls.get(ev.id);
    this.#calls.delete(ev.id);
    const name = call?.name ?? ev.name ?? null;
    let args: unknown = ev.input;
    if (args === undefined && call) {
      try {
        args = JSON.parse(call.input);
      } catch {
        args = undefined;
      }
    }
    const rec = this.#o.matchCall?.(ev.id, name, args) ?? null;
    if (!call && !ev.name) {
      out.push(trace("harness_note", { text: `a tool result with no matching call: ${ev.id}` }));
    }
    const marker = rec?.fenceSource ? `<untrusted-content source=${rec.fenceSource}>` : null;
    out.push({
      type: "tool-result",
      toolCallId: ev.id,
      toolName: name ?? rec?.name ?? "unknown",
      content: ev.output,
      isError: ev.isError,
      fenceSource: marker && ev.output.includes(marker) ? rec!.fenceSource : null,
      durationMs: rec ? rec.durationMs : call ? this.#o.now() - call.startedAt : null,
    });
    this.#closeTurn("tool_call", out);
    this.lastSegmentText = this.#segmentText;
    this.#segmentOpen = false;
    this.#segmentText = false;
  }

  #segmentNumber(): number {
    return this.#o.turnsUsed + this.turns + 1;
  }

  #openSegment(out: HarnessPart[]): void {
    if (this.#segmentOpen) return;
    this.#segmentOpen = true;
    this.#segmentText = false;
    this.#segmentThinking = false;
    out.push({ type: "turn-start", turn: this.#segmentNumber() });
  }

  #payFinal(out: HarnessPart[]): void {
    if (!this.#owesFinal) return;
    this.#owesFinal = false;
    out.push({ type: "text-final" });
  }

  /** Opens a model action; at the turn budget it sets `stopped` instead (the run is killed). */
  #openTurn(toolName: string | null): boolean {
    if (this.#turnOpen) {
      if (this.#turnFirstTool === null && toolName) this.#turnFirstTool = toolName;
      return true;
    }
    if (this.#o.turnsUsed + this.turns + 1 > this.#o.maxTurns) {
      this.stopped = failed(
        "max_turns",
        "max-turns",
        "runtime",
        `max_turns exceeded: the harness began turn ${this.#segmentNumber()} and ` +
          `inference.max_turns is ${this.#o.maxTurns}`,
      );
      return false;
    }
    this.turns++;
    this.#turnOpen = true;
    this.#turnFirstTool = toolName;
    return true;
  }

  #closeTurn(decision: "tool_call" | "end_turn", out: HarnessPart[]): void {
    if (!this.#turnOpen) return;
    this.#turnOpen = false;
    out.push({
      type: "turn-end",
      turn: this.#o.turnsUsed + this.turns,
      decision,
      toolName: decision === "tool_call" ? this.#turnFirstTool : null,
    });
    this.#turnFirstTool = null;
  }
}

/** A `harness_*` trace part. */
export function trace<K extends keyof HarnessTraceFields>(
  eventType: K,
  fields: HarnessTraceFields[K],
): HarnessPart {
  return { type: "trace", eventType, fields } as HarnessPart;
}
