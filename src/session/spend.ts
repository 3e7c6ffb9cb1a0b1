/**
 * `inference.max_session_tokens` (docs/manifest.md "inference"): a spend ceiling on the input and
 * output tokens of every driver call of the session. Admission happens before each call: what was
 * used, plus the call's input, plus its largest possible output must fit. A refused call is never
 * sent, and the refusal latches: every later call of the session is refused too.
 */
export interface SpendRefusal {
  ceiling: number;
  used: number;
  requested: number;
  /** The text of out/result.txt and of the task's failed status. */
  text: string;
}

export class SpendMeter {
  #used = 0;
  #latched: SpendRefusal | null = null;

  constructor(readonly ceiling: number | undefined) {}

  get used(): number {
    return this.#used;
  }

  /** The refusal, once one happened: it stands for the rest of the session. */
  get latched(): SpendRefusal | null {
    return this.#latched;
  }

  /** Whether a call needing up to `requested` tokens may be sent. */
  admit(requested: number): SpendRefusal | null {
    if (this.ceiling === undefined) return null;
    if (this.#latched) return { ...this.#latched, used: this.#used, requested };
    if (this.#used + requested <= this.ceiling) return null;
    this.#latched = {
      ceiling: this.ceiling,
      used: this.#used,
      requested,
      text: refusalText(this.ceiling, this.#used, requested),
    };
    return this.#latched;
  }

  /** Tokens a call used (settled after it returned). */
  charge(tokens: number): void {
    this.#used += tokens;
  }
}

export function refusalText(ceiling: number, used: number, requested: number): string {
  return `stopped: spend ceiling reached: this session has used ${used} of the ${ceiling} ` +
    `tokens inference.max_session_tokens allows, and the next inference call could need ` +
    `${requested} more; raise inference.max_session_tokens and start a new session, ` +
    `retrying will not get past it`;
}
