/**
 * Test helper: a loopback TCP proxy between a client (the browser) and a capsule's door, so a
 * test can do to the connection what a network does: cut every connection at once (`cut`), or
 * stop reading from the door (`pause`) so the door's writes back up as they do behind a slow
 * link. It also records each `Last-Event-ID` the client sent, to show what a reconnect asked for.
 * `cutOn` drops a connection, unanswered, when what the client sends matches it (once per proxy:
 * a question whose answer never came, tests/cluster/topology_probe_test.ts).
 */
const LAST_EVENT_ID = /^last-event-id:\s*(\d+)/gim;
const EVENT_ID = /^id:\s*(\d+)\r?$/gm;

export class TcpProxy {
  readonly port: number;
  /** Every `Last-Event-ID` header value seen going to the door, in order. */
  readonly lastEventIds: number[] = [];
  /** Every SSE `id:` the door sent through to the client, in order (a test waits on these). */
  readonly forwardedIds: number[] = [];
  #listener: Deno.Listener;
  #open = new Set<Deno.Conn>();
  #paused: PromiseWithResolvers<void> | null = null;
  #accepting: Promise<void>;
  /** Connections dropped by `cutOn`. */
  cuts = 0;

  private constructor(
    listener: Deno.Listener,
    readonly target: number,
    private readonly cutOn?: RegExp,
  ) {
    this.#listener = listener;
    this.port = (listener.addr as Deno.NetAddr).port;
    this.#accepting = this.#accept();
  }

  static start(targetPort: number, o: { cutOn?: RegExp } = {}): TcpProxy {
    return new TcpProxy(Deno.listen({ hostname: "127.0.0.1", port: 0 }), targetPort, o.cutOn);
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async #accept(): Promise<void> {
    for (;;) {
      let client: Deno.Conn;
      try {
        client = await this.#listener.accept();
      } catch {
        return; // listener closed
      }
      let door: Deno.Conn;
      try {
        door = await Deno.connect({ hostname: "127.0.0.1", port: this.target });
      } catch {
        client.close();
        continue;
      }
      this.#open.add(client);
      this.#open.add(door);
      const done = () => {
        for (const c of [client, door]) {
          if (this.#open.delete(c)) {
            try {
              c.close();
            } catch { /* closed */ }
          }
        }
      };
      this.#pipe(client, door, true).finally(done);
      this.#pipe(door, client, false).finally(done);
    }
  }

  async #pipe(from: Deno.Conn, to: Deno.Conn, toDoor: boolean): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    const dec = new TextDecoder();
    try {
      for (;;) {
        // Paused: stop reading what the door writes, so it backs up in its socket and buffers.
        if (!toDoor && this.#paused) await this.#paused.promise;
        const n = await from.read(buf);
        if (n === null) return;
        // Only whole `id:` lines inside one read are seen; enough for a test waiting on one.
        const text = dec.decode(buf.subarray(0, n));
        if (toDoor && this.cutOn && this.cuts === 0 && this.cutOn.test(text)) {
          this.cuts++;
          return;
        }
        const matches = [...text.matchAll(toDoor ? LAST_EVENT_ID : EVENT_ID)].map((m) =>
          Number(m[1])
        );
        let off = 0;
        while (off < n) off += await to.write(buf.subarray(off, n));
        // Recorded once written on: a waiter that sees an id knows its bytes are on their way.
        (toDoor ? this.lastEventIds : this.forwardedIds).push(...matches);
      }
    } catch {
      // a side closed or was cut
    }
  }

  /** Drops every connection open now, both sides; new ones are still accepted. */
  cut(): void {
    for (const c of this.#open) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    this.#open.clear();
  }

  pause(): void {
    this.#paused ??= Promise.withResolvers<void>();
  }

  resume(): void {
    this.#paused?.resolve();
    this.#paused = null;
  }

  async close(): Promise<void> {
    this.resume();
    try {
      this.#listener.close();
    } catch { /* closed */ }
    this.cut();
    await this.#accepting;
  }
}
