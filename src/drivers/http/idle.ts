/**
 * The idle watch for one model call: a fetch wrapper that counts every byte of the response
 * (headers, then each body chunk, pings included) as a sign of life, and a timer that fires when
 * nothing arrived for the whole timeout. The timer runs from the moment the request is sent, so a
 * provider that never answers stalls the same way as a stream that stops mid-way.
 */
export class IdleWatch {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  /** True once the timeout fired. */
  stalled = false;

  constructor(private readonly ms: number, private readonly onStall: () => void) {}

  /** Start (or restart) the countdown. */
  touch(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.stalled = true;
      this.onStall();
    }, this.ms);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** A fetch that keeps this watch alive while bytes flow. */
  wrap(base: typeof fetch): typeof fetch {
    return async (input, init) => {
      this.touch();
      const res = await base(input, init);
      this.touch();
      if (!res.body) return res;
      const body = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform: (chunk, controller) => {
            this.touch();
            controller.enqueue(chunk);
          },
        }),
      );
      return new Response(body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    };
  }
}

/** `12`, `0.5`: seconds as a user reads them in a message. */
export function formatSecs(secs: number): string {
  return Number.isInteger(secs) ? String(secs) : String(Math.round(secs * 1000) / 1000);
}
