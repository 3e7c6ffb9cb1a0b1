/**
 * Async hooks (docs/hooks.md "Async hooks"): each hook gets a bounded queue and one worker, so
 * its calls run one at a time in event order and never hold the loop up. A full queue drops the
 * new event; the session's end drains every queue within a budget and drops what is left.
 */
import type { BoundHook } from "../manifest/types.ts";
import type { HookEvent } from "../session/hooks_api.ts";

/** Events an async hook may have waiting; beyond this an event is dropped (`queue-overflow`). */
export const ASYNC_QUEUE_CAPACITY = 64;

interface Queue {
  hook: BoundHook;
  /** Each with the hook as its binding fired it (an unbound hook is queued for every binding). */
  items: { hook: BoundHook; ev: HookEvent }[];
  busy: boolean;
  idle: Promise<void>;
  markIdle: () => void;
}

export interface QueueEvents {
  /** Runs one call and deals with its answer (an async hook commits nothing). */
  run(h: BoundHook, ev: HookEvent): Promise<void>;
  /** The queue was full: the event is dropped. */
  overflow(h: BoundHook): void;
  /** The drain budget ran out with `dropped` events still waiting. */
  dropped(h: BoundHook, dropped: number, budgetMs: number): void;
}

export class AsyncQueues {
  readonly #queues = new Map<string, Queue>();

  constructor(
    private readonly on: QueueEvents,
    private readonly capacity = ASYNC_QUEUE_CAPACITY,
  ) {}

  enqueue(h: BoundHook, ev: HookEvent): void {
    let q = this.#queues.get(h.name);
    if (!q) {
      let markIdle!: () => void;
      const idle = new Promise<void>((r) => (markIdle = r));
      q = { hook: h, items: [], busy: false, idle, markIdle };
      q.markIdle();
      this.#queues.set(h.name, q);
    }
    if (q.items.length >= this.capacity) {
      this.on.overflow(h);
      return;
    }
    q.items.push({ hook: h, ev });
    if (!q.busy) this.#work(q);
  }

  /**
   * Waits until every queue is empty, within `budgetMs`; then drops the events still waiting. A
   * call already running is waited for: its own deadline (the per-call timeout, which kills it)
   * bounds it, so its failure is recorded as its own, before `session_end`, however close the
   * drain started to the call (tests/hooks/failures_test.ts "async hooks": a hook hanging from
   * session start, with a budget equal to the deadline, raced the drain's timer).
   */
  async drain(budgetMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = Promise.all([...this.#queues.values()].map((q) => q.idle));
    const inTime = await Promise.race([
      idle.then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), budgetMs))),
    ]);
    clearTimeout(timer);
    if (inTime) return;
    for (const q of this.#queues.values()) {
      if (q.items.length === 0) continue;
      const dropped = q.items.length;
      q.items.length = 0;
      this.on.dropped(q.hook, dropped, budgetMs);
    }
    await Promise.all([...this.#queues.values()].map((q) => q.idle));
  }

  async #work(q: Queue): Promise<void> {
    q.busy = true;
    q.idle = new Promise<void>((r) => (q.markIdle = r));
    try {
      for (let it = q.items.shift(); it; it = q.items.shift()) await this.on.run(it.hook, it.ev);
    } finally {
      q.busy = false;
      q.markIdle();
    }
  }
}
