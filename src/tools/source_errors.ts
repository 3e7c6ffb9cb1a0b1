/**
 * The errors of a set of tool sources (docs/mcp.md "sourceErrors"): each numbered as it comes,
 * the newest of each source kept, so a task is told of the sources that are down when it starts
 * or ends and of every error while it ran (`errorsSince`), each message once.
 */
export interface SourceError {
  kind: "mcp" | "openapi";
  source: string;
  message: string;
}

export type SourcePhase = "launch" | "session";

/** Errors kept for the tasks, newest last. */
const MAX_ERRORS = 50;

export class SourceErrorLog {
  readonly #errors: { seq: number; e: SourceError }[] = [];
  #seq = 0;
  readonly #last = new Map<string, SourceError>();

  add(e: SourceError): void {
    this.#errors.push({ seq: ++this.#seq, e });
    if (this.#errors.length > MAX_ERRORS) this.#errors.shift();
    this.#last.set(e.source, e);
  }

  mark(): number {
    return this.#seq;
  }

  /** The newest error of each source `isDown` says is not up, then every error since `mark`. */
  since(mark: number, isDown: (source: string) => boolean): SourceError[] {
    const out: SourceError[] = [];
    const seen = new Set<string>();
    const add = (e: SourceError) => {
      const key = `${e.source}\n${e.message}`;
      if (!seen.has(key)) out.push(e);
      seen.add(key);
    };
    for (const [source, e] of this.#last) if (isDown(source)) add(e);
    for (const x of this.#errors) if (x.seq > mark) add(x.e);
    return out;
  }
}
