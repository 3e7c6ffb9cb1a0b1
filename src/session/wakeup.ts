/**
 * The task worker's sleep: it idles until something to do arrives (a submit, a cancel, a stop:
 * `kick`) or a timeout passes. One waiter at a time, since the session has one worker. An idle
 * period that lasts gives memory back once (./idle_collect.ts).
 */
import { armIdleCollect, IDLE_COLLECT_MS, idleCollector } from "./idle_collect.ts";

export class Wakeup {
  #wake: (() => void) | null = null;

  constructor(
    private readonly collect: (() => void) | null = idleCollector(),
    private readonly collectAfterMs = IDLE_COLLECT_MS,
  ) {}

  kick(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  /** Resolves on the next kick, or after `ms` (never, when null). */
  idle(ms: number | null): Promise<void> {
    const disarm = armIdleCollect(this.collect, this.collectAfterMs);
    return new Promise((resolve) => {
      const timer = ms === null ? undefined : setTimeout(() => {
        this.#wake = null;
        disarm();
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        disarm();
        resolve();
      };
    });
  }
}
