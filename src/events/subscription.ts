/**
 * One reader's view of the log: a bounded queue (128) that never blocks the log. When the reader
 * falls behind, the oldest queued events are dropped and counted, so the reader can be told
 * exactly how many it missed (`lagged`).
 */
import type { LogEntry } from "./log.ts";

export const SUBSCRIPTION_CAPACITY = 128;

export class Subscription {
  #queue: LogEntry[] = [];
  #head = 0;
  #missed = 0;
  #ended = false;
  #wake: (() => void) | null = null;

  constructor(
    private readonly filter: ((e: LogEntry) => boolean) | undefined,
    private readonly capacity: number = SUBSCRIPTION_CAPACITY,
    private readonly onClose: () => void,
  ) {}

  /** Called by the log for every appended event. Never blocks. */
  offer(entry: LogEntry): void {
    if (this.#ended || (this.filter && !this.filter(entry))) return;
    if (this.#queue.length - this.#head >= this.capacity) {
      this.#head++;
      this.#missed++;
      if (this.#head > 1024) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    }
    this.#queue.push(entry);
    this.#notify();
  }

  /** Everything queued, and how many events were dropped before it since the last take. */
  take(): { entries: LogEntry[]; missed: number } {
    const entries = this.#head === 0 ? this.#queue : this.#queue.slice(this.#head);
    this.#queue = [];
    this.#head = 0;
    const missed = this.#missed;
    this.#missed = 0;
    return { entries, missed };
  }

  get pending(): number {
    return this.#queue.length - this.#head;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Resolves when an event is queued, the stream ended, or `wakeUp()` was called. */
  wait(): Promise<void> {
    if (this.pending > 0 || this.#missed > 0 || this.#ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  /** Wakes a pending `wait()` (a heartbeat came due, the connection closes). */
  wakeUp(): void {
    this.#notify();
  }

  /** The log ended: a reader drains what is queued, then sees `ended`. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** The reader is gone: stop receiving. */
  close(): void {
    this.#ended = true;
    this.#queue = [];
    this.#head = 0;
    this.onClose();
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    if (wake) {
      this.#wake = null;
      wake();
    }
  }
}
