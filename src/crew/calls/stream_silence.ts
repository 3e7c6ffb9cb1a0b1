/**
 * How long a member's stream may stay silent before the connection counts as failed
 * (docs/crews.md "`call-member`", Following). A door writes a heartbeat on every stream every
 * `MURMUR_HEARTBEAT_MS` (docs/protocol.md "Heartbeat", default 15 s), so a live member is never
 * silent that long; one whose process is stopped (SIGSTOP) or wedged holds its socket open and
 * writes nothing, and without this bound its caller would wait on it until the call's deadline.
 * Members of one formation inherit the launcher's environment, so the caller's own heartbeat
 * setting is the member's.
 */

/** Three heartbeats: one late heartbeat on a loaded machine is not a silent member. */
export function silenceMs(env: (name: string) => string | undefined = Deno.env.get): number {
  const beat = Number(env("MURMUR_HEARTBEAT_MS") ?? "15000") || 15_000;
  return 3 * beat;
}

/**
 * One connection's abort signal: raised when `outer` is (the call was stopped), or when nothing
 * arrived for `ms` (`touch()` on every byte that does). `silent` tells the two apart.
 */
export class SilenceBound {
  readonly #ctl = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #silent = false;
  readonly #onOuter = () => this.#ctl.abort();

  constructor(private readonly outer: AbortSignal, readonly ms: number) {
    if (outer.aborted) this.#ctl.abort();
    outer.addEventListener("abort", this.#onOuter, { once: true });
    this.touch();
  }

  get signal(): AbortSignal {
    return this.#ctl.signal;
  }

  /** The connection was aborted because it stayed silent (not because the call was stopped). */
  get silent(): boolean {
    return this.#silent;
  }

  /** Something arrived: the silence starts again. */
  touch(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#silent = true;
      this.#ctl.abort();
    }, this.ms);
  }

  /** The connection is over: no timer or listener is left behind. */
  close(): void {
    clearTimeout(this.#timer);
    this.outer.removeEventListener("abort", this.#onOuter);
  }
}
