/**
 * The work one task has handed off (docs/crews.md): its `call-member` calls and `delegate-task`
 * delegations, each ending with an answer that reaches the conversation once. The loop makes one
 * per task (src/session/loop.ts); the tools add to it; the continuation (src/session/
 * continuation.ts `handedOffWork`) waits on it after the model stops, until nothing is
 * outstanding, and takes what arrived as one user message. Cancelling the task, or its ending
 * with work still out, stops every piece of it: no member or child works on for a task that is
 * gone.
 */

import type { CallAnswer } from "./remote_task.ts";

/** A call or a delegation, as the ledger sees it. */
export interface HandedOffWork {
  readonly kind: "call" | "delegation";
  readonly id: string;
  /** The member called, or the capsule delegated to. */
  readonly name: string;
  /** Still waiting for its answer. */
  readonly outstanding: boolean;
  /** Its answer, once it arrived. */
  readonly answer?: CallAnswer;
  /** Its answer is in the conversation (a continuation, or the tool result that ended it). */
  delivered: boolean;
  /** Settles with the answer. */
  readonly done: Promise<unknown>;
  /** Ends it before its answer: the calling task was canceled, or ended. */
  stop(reason: "canceled" | "ended"): void;
}

export interface Outstanding {
  calls: number;
  delegations: number;
}

export class HandedOff {
  readonly #work: HandedOffWork[] = [];
  /** Work whose answer arrived, in the order it arrived. */
  readonly #arrived: HandedOffWork[] = [];
  /** Wakes a wait when a piece of work ends. */
  #changed: (() => void) | null = null;

  /**
   * `parent`: the event id the work's trace lines hang under (the task's `task_start`).
   */
  constructor(readonly parent: string, signal: AbortSignal) {
    signal.addEventListener("abort", () => this.stopAll("canceled"), { once: true });
  }

  add(w: HandedOffWork): void {
    this.#work.push(w);
    void w.done.then(() => {
      this.#arrive(w);
      this.#changed?.();
    });
  }

  /** The newest call to `name` (or delegation to it), if any. */
  latest(kind: HandedOffWork["kind"], name: string): HandedOffWork | undefined {
    return this.#work.findLast((w) => w.kind === kind && w.name === name);
  }

  /** The newest piece of work that is out, or arrived and not yet delivered. */
  latestPending(): HandedOffWork | undefined {
    return this.#work.findLast((w) => w.outstanding || !w.delivered);
  }

  outstanding(): Outstanding {
    let calls = 0;
    let delegations = 0;
    for (const w of this.#work) {
      if (!w.outstanding) continue;
      if (w.kind === "call") calls++;
      else delegations++;
    }
    return { calls, delegations };
  }

  /** Something is still out, or arrived and is not yet in the conversation. */
  pending(): boolean {
    return this.#work.some((w) => w.outstanding || !w.delivered);
  }

  /**
   * Waits until nothing is outstanding, or `signal` is raised. `onDrop` is told the outstanding
   * counts when the wait starts with something out, and again each time the total drops.
   */
  async settle(signal: AbortSignal, onDrop: (o: Outstanding) => void): Promise<void> {
    let last = Infinity;
    for (;;) {
      const o = this.outstanding();
      const total = o.calls + o.delegations;
      if (total === 0 || signal.aborted) return;
      if (total < last) onDrop(o);
      last = total;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.#changed = null;
          resolve();
        };
        this.#changed = wake;
        signal.addEventListener("abort", wake, { once: true });
        // An answer that arrived between the count and here must not be slept through.
        const now = this.outstanding();
        if (now.calls + now.delegations < total) wake();
      });
    }
  }

  /** The answers that arrived and are not yet delivered, marked delivered, in arrival order. */
  takeArrived(): HandedOffWork[] {
    // An answer set in this same tick has not reached `#arrived` through its promise yet.
    for (const w of this.#work) if (!w.outstanding) this.#arrive(w);
    const round = this.#arrived.filter((w) => !w.delivered);
    for (const w of round) w.delivered = true;
    return round;
  }

  #arrive(w: HandedOffWork): void {
    if (!this.#arrived.includes(w)) this.#arrived.push(w);
  }

  /** Stops everything still out (the task was canceled, or is ending). */
  stopAll(reason: "canceled" | "ended"): void {
    for (const w of this.#work) if (w.outstanding) w.stop(reason);
  }

  /** Resolves once every piece of work has its answer (after `stopAll`, their cancels sent). */
  async drained(): Promise<void> {
    await Promise.all(this.#work.map((w) => w.done));
  }
}
