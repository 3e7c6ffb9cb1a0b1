/**
 * A task's history (A2A `Task.history`; docs/protocol.md "Task history"): the messages that made
 * the task, in order — the user's message, the prompts of its input waits and their answers, and
 * the agent's reply that ended it — at most `limit` of them, the oldest dropped first and counted.
 *
 * Flat cost: a message is appended once (O(1)) and a read copies only the messages it returns
 * (`newest(n)`), so neither a long task nor a reader asking for the ten newest messages of a
 * 1,000-message task pays for the whole history. Each message is kept as its own object, so the
 * cluster publisher (src/cluster/publisher.ts) writes only the messages it has not sent.
 */
import type { Message } from "../a2a/types.ts";

/** `lifecycle.history_limit`'s default (docs/manifest.md). */
export const DEFAULT_HISTORY_LIMIT = 1000;

export class TaskHistory {
  /** A ring of at most `limit` messages; `#start` is the oldest kept. */
  readonly #ring: Message[] = [];
  #start = 0;
  /** Messages ever appended (the next one's sequence number). */
  #total = 0;

  /**
   * `dropped`: messages an earlier session already dropped from this history (a task reloaded by
   * `--resume`, task_journal.ts), counted as if they had been appended here.
   */
  constructor(readonly limit: number = DEFAULT_HISTORY_LIMIT, dropped = 0) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`history limit ${limit}`);
    this.#total = dropped;
  }

  append(message: Message): void {
    if (this.#ring.length < this.limit) this.#ring.push(message);
    else {
      this.#ring[this.#start] = message;
      this.#start = (this.#start + 1) % this.limit;
    }
    this.#total++;
  }

  /** Messages ever appended; the newest has sequence number `total - 1`. */
  get total(): number {
    return this.#total;
  }

  /** Messages kept now. */
  get size(): number {
    return this.#ring.length;
  }

  /** Messages dropped because the limit was reached (oldest first). */
  get dropped(): number {
    return this.#total - this.#ring.length;
  }

  /**
   * The `n` newest messages, oldest first (every kept one when `n` is undefined or larger). The
   * array is new; the messages are the kept objects (callers serialize, never change them).
   */
  newest(n?: number): Message[] {
    const size = this.#ring.length;
    const count = n === undefined ? size : Math.max(0, Math.min(n, size));
    const out = new Array<Message>(count);
    // The oldest wanted sits `size - count` after the ring's start.
    let at = (this.#start + size - count) % Math.max(size, 1);
    for (let i = 0; i < count; i++) {
      out[i] = this.#ring[at];
      at = at + 1 === size ? 0 : at + 1;
    }
    return out;
  }

  /** The message with sequence number `seq`, if it is still kept. */
  at(seq: number): Message | undefined {
    const first = this.dropped;
    if (seq < first || seq >= this.#total) return undefined;
    return this.#ring[(this.#start + seq - first) % this.#ring.length];
  }
}
