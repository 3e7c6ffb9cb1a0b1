/**
 * The task worker's sleep: it idles until something to do arrives (a submit, a cancel, a stop:
 * `kick`) or a timeout passes. One waiter at a time, since the session has one worker.
 */
export class Wakeup {
  #wake: (() => void) | null = null;

  kick(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  /** Resolves on the next kick, or after `ms` (never, when null). */
  idle(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === null ? undefined : setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
