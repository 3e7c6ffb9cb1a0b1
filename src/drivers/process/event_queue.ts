/** An unbounded single-consumer queue: several sources push, one loop awaits `next()`. */
export class EventQueue<T> {
  #items: T[] = [];
  #waiter: ((v: T) => void) | null = null;

  push(item: T): void {
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = null;
      w(item);
    } else {
      this.#items.push(item);
    }
  }

  next(): Promise<T> {
    if (this.#items.length) return Promise.resolve(this.#items.shift()!);
    return new Promise((resolve) => (this.#waiter = resolve));
  }
}

/** Named one-shot timers that push into a queue; all cleared at the end of a run. */
export class Timers<K extends string> {
  #handles = new Map<K, ReturnType<typeof setTimeout>>();
  constructor(private fire: (name: K) => void) {}

  set(name: K, ms: number): void {
    this.clear(name);
    this.#handles.set(
      name,
      setTimeout(() => {
        this.#handles.delete(name);
        this.fire(name);
      }, Math.max(0, ms)),
    );
  }

  clear(name: K): void {
    const h = this.#handles.get(name);
    if (h !== undefined) clearTimeout(h);
    this.#handles.delete(name);
  }

  clearAll(): void {
    for (const h of this.#handles.values()) clearTimeout(h);
    this.#handles.clear();
  }
}
