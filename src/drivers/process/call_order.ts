/**
 * A bridge call waits for the harness's own announcement of it. The harness writes a tool call's
 * start to stdout (Claude Code's `content_block_start`, Codex's `item.started`) and only then calls
 * the tool over the bridge; but mur reads stdout through a pipe and the bridge over a socket, so
 * under load the call can arrive first, and the tool would run (a `request-input` would set
 * INPUT_REQUIRED) before the stream has said `tool-call-started` (docs/protocol.md, "Frames": a
 * call's frames come in order). So the k-th bridge call of a tool waits until the k-th
 * announcement of that tool has been consumed by the session, or `graceMs` at most for a harness
 * that never announces one (the call then runs anyway: order is lost, the call is not).
 */
export class CallOrder {
  /** Announcements no call has claimed yet, by tool name. */
  #unclaimed = new Map<string, number>();
  /** Calls waiting for an announcement, by tool name, oldest first. */
  #waiting = new Map<string, (() => void)[]>();
  /** Harness call ids already announced (a call is announced by its start and by its whole form). */
  #ids = new Set<string>();
  #closed = false;

  constructor(private readonly graceMs: number) {}

  /** The harness announced call `id` of `name`, and the session has its frames; once per id. */
  announce(id: string, name: string): void {
    if (this.#ids.has(id)) return;
    this.#ids.add(id);
    const next = this.#waiting.get(name)?.shift();
    if (next) return next();
    this.#unclaimed.set(name, (this.#unclaimed.get(name) ?? 0) + 1);
  }

  /** Resolves when a call of `name` may run: announced, timed out, or closed. */
  ready(name: string): Promise<void> {
    const n = this.#unclaimed.get(name) ?? 0;
    if (n > 0 || this.#closed) {
      if (n > 0) this.#unclaimed.set(name, n - 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const list = this.#waiting.get(name) ?? [];
      this.#waiting.set(name, list);
      const go = () => {
        clearTimeout(timer);
        const i = list.indexOf(go);
        if (i >= 0) list.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(go, this.graceMs);
      list.push(go);
    });
  }

  /** The attempt is over: every waiting call runs (and is refused or canceled by the bridge). */
  close(): void {
    this.#closed = true;
    for (const list of this.#waiting.values()) for (const go of [...list]) go();
  }
}
