/**
 * The rate of `tool-call-progress`: a call's input grows by deltas (http) or by running totals
 * (a harness), and a frame goes out at most every 250 ms per call, plus a last one when the call
 * is complete. One throttle for both transports, so their progress frames match.
 */

/** At most one report every `intervalMs` per call; one more when the call is complete. */
export class ProgressThrottle {
  readonly #calls = new Map<string, { at: number; reported: number; bytes: number }>();

  constructor(private readonly now: () => number, private readonly intervalMs = 250) {}

  /** The call's input has grown to `bytes` in all: the bytes to report now, or null. */
  update(id: string, bytes: number): number | null {
    const c = this.#calls.get(id) ?? { at: -Infinity, reported: 0, bytes: 0 };
    this.#calls.set(id, c);
    c.bytes = Math.max(c.bytes, bytes);
    const now = this.now();
    if (now - c.at < this.intervalMs || c.bytes <= c.reported) return null;
    c.at = now;
    c.reported = c.bytes;
    return c.bytes;
  }

  /** The call is complete: its last unreported total, or null. */
  flush(id: string): number | null {
    const c = this.#calls.get(id);
    if (!c || c.bytes <= c.reported) return null;
    c.reported = c.bytes;
    c.at = this.now();
    return c.bytes;
  }

  /** Whether the call's input began (a progress report for an unknown call is dropped). */
  has(id: string): boolean {
    return this.#calls.has(id);
  }

  /** Bytes seen so far for a call (0 when unknown). */
  bytes(id: string): number {
    return this.#calls.get(id)?.bytes ?? 0;
  }
}
