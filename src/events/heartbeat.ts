/**
 * One timer for every connection's heartbeat (docs/protocol.md "Heartbeat"): each connection is due
 * every interval measured from its own open, whatever is written in between. Connections wait
 * in a min-heap on their next due time; one `setTimeout` is armed for the earliest, so an idle
 * connection costs a heap slot rather than a timer of its own. The timer runs only while some
 * connection is registered, as a per-connection interval would.
 */

export interface Beating {
  /** Called when the connection's heartbeat comes due. Must not throw. */
  beat(): void;
  /** Next due time (performance.now() ms); owned by the wheel. */
  hbDue: number;
  /** Position in the wheel's heap, -1 when not registered; owned by the wheel. */
  hbIndex: number;
}

/** Due times within this of now are written in the same tick (a timer never fires early). */
const SLACK_MS = 1;

/** The one timer the wheel arms (tests pass a manual one and run it themselves). */
export interface WheelTimer {
  set(f: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimer: WheelTimer = {
  set: (f, ms) => setTimeout(f, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class HeartbeatWheel {
  #heap: Beating[] = [];
  #timer: unknown;
  #at = Infinity;

  constructor(
    readonly ms: number,
    private readonly now: () => number,
    private readonly timer: WheelTimer = realTimer,
  ) {}

  add(b: Beating): void {
    b.hbDue = this.now() + this.ms;
    b.hbIndex = this.#heap.length;
    this.#heap.push(b);
    this.#up(b.hbIndex);
    this.#arm();
  }

  remove(b: Beating): void {
    const i = b.hbIndex;
    if (i < 0 || this.#heap[i] !== b) return;
    b.hbIndex = -1;
    const last = this.#heap.pop()!;
    if (last !== b) {
      this.#heap[i] = last;
      last.hbIndex = i;
      this.#down(i);
      this.#up(last.hbIndex);
    }
    if (this.#heap.length === 0) this.#disarm();
  }

  get size(): number {
    return this.#heap.length;
  }

  #tick = (): void => {
    this.#timer = undefined;
    this.#at = Infinity;
    const t = this.now();
    // Each connection at most once per tick; one that fell behind (a suspended process) resumes
    // its cadence from now rather than writing a burst of missed beats.
    let budget = this.#heap.length;
    while (budget-- > 0 && this.#heap.length && this.#heap[0].hbDue <= t + SLACK_MS) {
      const b = this.#heap[0];
      b.hbDue += this.ms;
      if (b.hbDue <= t) b.hbDue = t + this.ms;
      this.#down(0);
      try {
        b.beat(); // may remove b (the connection ends)
      } catch (e) {
        // `beat` must not throw (the view guards it); one that does is dropped, the others still
        // beat and the timer is re-armed, and the error is reported as uncaught (subscription.ts).
        this.remove(b);
        reportError(e);
      }
    }
    this.#arm();
  };

  #arm(): void {
    const head = this.#heap[0];
    if (!head) return this.#disarm();
    if (this.#timer !== undefined && this.#at <= head.hbDue) return;
    this.#disarm();
    this.#at = head.hbDue;
    this.#timer = this.timer.set(this.#tick, Math.max(0, head.hbDue - this.now()));
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.timer.clear(this.#timer);
    this.#timer = undefined;
    this.#at = Infinity;
  }

  #up(i: number): void {
    const h = this.#heap;
    const b = h[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].hbDue <= b.hbDue) break;
      h[i] = h[p];
      h[i].hbIndex = i;
      i = p;
    }
    h[i] = b;
    b.hbIndex = i;
  }

  #down(i: number): void {
    const h = this.#heap;
    const n = h.length;
    const b = h[i];
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && h[c + 1].hbDue < h[c].hbDue) c++;
      if (h[c].hbDue >= b.hbDue) break;
      h[i] = h[c];
      h[i].hbIndex = i;
      i = c;
    }
    h[i] = b;
    b.hbIndex = i;
  }
}

const wheels = new Map<number, HeartbeatWheel>();

/** The process-wide wheel for an interval (the connections of a door all share one). */
export function heartbeatWheel(ms: number): HeartbeatWheel {
  let w = wheels.get(ms);
  if (!w) wheels.set(ms, w = new HeartbeatWheel(ms, () => performance.now()));
  return w;
}
