/**
 * Which harness session a context (threaded conversation) or a task (reopened attempt)
 * continues. The harness keeps the history; mur keeps only the ids. Context entries are
 * persisted to a JSON file when one is given, so `mur run --resume` can continue them.
 */

export interface HarnessSessionStore {
  getContext(contextId: string): string | null;
  setContext(contextId: string, sessionId: string): Promise<void>;
  /** Drops a context's entry; returns the forgotten id. */
  forgetContext(contextId: string): Promise<string | null>;
  getTask(taskId: string): string | null;
  setTask(taskId: string, sessionId: string): void;
}

export class FileSessionStore implements HarnessSessionStore {
  #contexts = new Map<string, string>();
  #tasks = new Map<string, string>();
  #path: string | null;

  private constructor(path: string | null) {
    this.#path = path;
  }

  /** A store backed by `path` (created on first write), or in memory when null. */
  static async open(path: string | null): Promise<FileSessionStore> {
    const store = new FileSessionStore(path);
    if (path) {
      try {
        const data = JSON.parse(await Deno.readTextFile(path));
        for (const [k, v] of Object.entries(data?.contexts ?? {})) {
          if (typeof v === "string") store.#contexts.set(k, v);
        }
      } catch {
        // Missing or unreadable: an unreadable map only loses continuity, and the next write
        // replaces it.
      }
    }
    return store;
  }

  getContext(contextId: string): string | null {
    return this.#contexts.get(contextId) ?? null;
  }

  async setContext(contextId: string, sessionId: string): Promise<void> {
    if (this.#contexts.get(contextId) === sessionId) return;
    this.#contexts.set(contextId, sessionId);
    await this.#save();
  }

  async forgetContext(contextId: string): Promise<string | null> {
    const id = this.#contexts.get(contextId) ?? null;
    if (id === null) return null;
    this.#contexts.delete(contextId);
    await this.#save();
    return id;
  }

  getTask(taskId: string): string | null {
    return this.#tasks.get(taskId) ?? null;
  }

  setTask(taskId: string, sessionId: string): void {
    this.#tasks.set(taskId, sessionId);
  }

  async #save(): Promise<void> {
    if (!this.#path) return;
    const tmp = `${this.#path}.tmp`;
    const body = JSON.stringify({ contexts: Object.fromEntries(this.#contexts) }, null, 2);
    await Deno.writeTextFile(tmp, body + "\n", { mode: 0o600 });
    await Deno.rename(tmp, this.#path);
  }
}
