/**
 * One reader's view of the log: a bounded queue (128) that never blocks the log. When the reader
 * falls behind, the oldest queued events are dropped and counted, so the reader can be told
 * exactly how many it missed (`lagged`).
 *
 * A reader either waits (`wait()`, one promise per wake-up) or listens (`listen()`): a listener
 * is told once per macrotask that events are queued, so a burst of events reaches it as one
 * batch rather than one call per event — and also at once, synchronously ("urgent"), each time
 * its queue fills to within `LISTEN_MARGIN` of the capacity, so a reader that keeps up never
 * loses events because it was not scheduled in time.
 */
// `setImmediate` is Deno's global, which loads the Node timers only when first called: an
// import from node:timers woke the Node compatibility layer at every start (src/paths.ts).
import type { LogEntry } from "./log.ts";

export const SUBSCRIPTION_CAPACITY = 128;
/** A listener is called synchronously once its queue holds capacity − this many events. */
export const LISTEN_MARGIN = 32;

/**
 * A reader told when there is something to take (see the file comment). It must not throw: its
 * calls run on the stack of whoever appended the event (the task's own loop, for an urgent call)
 * or in the shared once-per-macrotask pass. The stream view guards its own (view.ts `#guard`).
 */
export interface SubscriptionListener {
  /**
   * `urgent`: the queue is about to overflow — take now, even mid-burst. Otherwise this is the
   * once-per-macrotask call (or the stream's end): the burst is over, write it out.
   */
  ready(urgent: boolean): void;
}

// Listeners with events queued since the last macrotask: one setImmediate serves them all.
let due: Subscription[] = [];
let dueScheduled = false;
function runDue(): void {
  dueScheduled = false;
  const list = due;
  due = [];
  for (const sub of list) sub.fire();
}

/**
 * A listener that throws anyway is cut off: its subscription is closed, so it can stop neither
 * the appender nor the other listeners of the same pass, and the error is reported as uncaught
 * (`reportError`), which `mur run` turns into the end of the session (E-RUN-050): a listener that
 * throws is a bug in the runtime, not a fault of one connection.
 */
function call(sub: Subscription, l: SubscriptionListener, urgent: boolean): void {
  try {
    l.ready(urgent);
  } catch (e) {
    sub.close();
    reportError(e);
  }
}

export class Subscription {
  #queue: LogEntry[] = [];
  #head = 0;
  #missed = 0;
  /**
   * Losses that fall after events still queued (a mirror's hole while this reader is behind):
   * each before `#queue[at]`. A take stops at the first, so its `lagged` is told where the events
   * went missing, not before older events the reader had yet to get.
   */
  #holes: { at: number; n: number }[] = [];
  #ended = false;
  #wake: (() => void) | null = null;
  #listener: SubscriptionListener | null = null;
  #listenAt = 1;
  #due = false;

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
      // Every event before a hole dropped too: its loss now comes before the oldest one kept.
      while (this.#holes.length > 0 && this.#holes[0].at <= this.#head) {
        this.#missed += this.#holes.shift()!.n;
      }
      if (this.#head > 1024) this.#compact(this.#head);
    }
    this.#queue.push(entry);
    if (this.#listener) {
      this.#schedule();
      if (this.#queue.length - this.#head >= this.#listenAt) call(this, this.#listener, true);
    }
    this.#notify();
  }

  /**
   * Events this reader will never be offered (a mirror's hole, src/events/log.ts
   * `appendMirrored`): counted as dropped, so the reader is told as it is of its own losses.
   */
  lose(n: number): void {
    if (this.#ended || n <= 0) return;
    const at = this.#queue.length;
    const last = this.#holes.at(-1);
    if (this.pending === 0) this.#missed += n;
    else if (last?.at === at) last.n += n;
    else this.#holes.push({ at, n });
    if (this.#listener) this.#schedule();
    this.#notify();
  }

  /**
   * Tells `l` when events are queued: once per macrotask, or at once when the queue nears its
   * capacity; and when the stream ends. `take()` what is there each time.
   */
  listen(l: SubscriptionListener): void {
    this.#listener = l;
    this.#listenAt = Math.max(1, this.capacity - LISTEN_MARGIN);
    if (this.pending > 0 || this.#missed > 0 || this.#ended) this.#schedule();
  }

  /** Events dropped since the last take. */
  get missed(): number {
    return this.#missed;
  }

  /** The scheduled call (runDue): tells the listener, if it still listens. */
  fire(): void {
    this.#due = false;
    if (this.#listener) call(this, this.#listener, false);
  }

  #schedule(): void {
    if (this.#due) return;
    this.#due = true;
    due.push(this);
    if (!dueScheduled) {
      dueScheduled = true;
      setImmediate(runDue);
    }
  }

  /**
   * Everything queued up to the next hole (`#holes`), and how many events were dropped before it
   * since the last take. With a hole queued, what follows it is left for the next take, whose
   * `missed` is the hole: a reader takes until nothing is pending.
   */
  take(): { entries: LogEntry[]; missed: number } {
    const missed = this.#missed;
    const hole = this.#holes.shift();
    if (hole !== undefined) {
      const entries = this.#queue.slice(this.#head, hole.at);
      this.#compact(hole.at);
      this.#missed = hole.n;
      return { entries, missed };
    }
    const entries = this.#head === 0 ? this.#queue : this.#queue.slice(this.#head);
    this.#queue = [];
    this.#head = 0;
    this.#missed = 0;
    return { entries, missed };
  }

  /** Drops the queue's first `n` slots (taken or dropped), keeping the holes' places. */
  #compact(n: number): void {
    this.#queue = this.#queue.slice(n);
    this.#head = Math.max(0, this.#head - n);
    for (const h of this.#holes) h.at -= n;
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
    if (this.#listener) call(this, this.#listener, false);
  }

  /** The reader is gone: stop receiving. */
  close(): void {
    this.#ended = true;
    this.#queue = [];
    this.#head = 0;
    this.#holes = [];
    this.#listener = null;
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
