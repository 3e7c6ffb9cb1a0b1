/**
 * Raw TCP stream clients for tests that need the exact bytes of a response body.
 */
const enc = new TextEncoder();
const dec = new TextDecoder();

export type Act = "stall" | "read" | "disconnect";

/**
 * A stream client over raw TCP that keeps the body's exact bytes: it writes the request itself,
 * reads while told to (a stalled reader stops reading its socket), de-chunks the HTTP body, and
 * can be awaited until a numbered event has arrived whole. Tests compare what it kept byte for
 * byte (tests/events/reference.ts, the soak).
 */
export class RawStream<C = unknown> {
  body: Uint8Array[] = [];
  head = "";
  reading = true;
  closed = false;
  /** Closed by its schedule (not read to the end of the case). */
  disconnected = false;
  ended = false;
  #headed: (() => void) | null = null;
  /** Resolves once the response head has arrived: the door has opened the stream. */
  readonly headed = new Promise<void>((r) => this.#headed = r);
  #raw = new Uint8Array(0);
  #left = -1; // bytes left in the current chunk; -1: at a size line
  #gate: (() => void) | null = null;
  #text = "";
  /** Its own: a streaming decoder keeps a partial character between calls. */
  #textDec = new TextDecoder();
  #waiters: { id: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  readonly done: Promise<void>;

  constructor(readonly conn: Deno.TcpConn, readonly c: C) {
    this.done = this.#loop();
  }

  static async open<C>(
    base: string,
    c: C,
    request: { id: string | number; method: string; params?: unknown },
    headers: Record<string, string | null> = {},
  ): Promise<RawStream<C>> {
    const url = new URL(base);
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: request.id,
      method: request.method,
      params: request.params ?? {},
    });
    const head = [
      "POST / HTTP/1.1",
      `Host: ${url.host}`,
      "Content-Type: application/json",
      "A2A-Version: 1.0",
      `Content-Length: ${enc.encode(body).length}`,
      ...Object.entries(headers).filter(([, v]) => v !== null).map(([k, v]) => `${k}: ${v}`),
      "",
      "",
    ].join("\r\n");
    await conn.write(enc.encode(head + body));
    return new RawStream(conn, c);
  }

  async #loop(): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    while (!this.closed) {
      if (!this.reading) await new Promise<void>((r) => this.#gate = r);
      if (this.closed) break;
      let n: number | null;
      try {
        n = await this.conn.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        this.#finish();
        break;
      }
      this.#feed(buf.slice(0, n));
    }
  }

  /** The stream ended (the door closed it): nothing more will arrive. */
  #finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.#headed?.();
    for (const w of this.#waiters) w.reject(new Error(`the stream ended before event ${w.id}`));
    this.#waiters = [];
  }

  act(a: Act): void {
    if (this.closed) return;
    if (a === "disconnect") {
      this.disconnected = true;
      return this.close();
    }
    this.reading = a === "read";
    if (this.reading) this.#wake();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#wake();
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }

  /** The body so far, as text. */
  get text(): string {
    return this.#text;
  }

  /** Resolves once the event numbered `id` has arrived whole; rejects if the stream ends first. */
  received(id: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new Error(`the stream ended before event ${id}`));
      this.#waiters.push({ id, resolve, reject });
      this.#check();
    });
  }

  #wake(): void {
    const g = this.#gate;
    this.#gate = null;
    g?.();
  }

  #feed(bytes: Uint8Array): void {
    const merged = new Uint8Array(this.#raw.length + bytes.length);
    merged.set(this.#raw);
    merged.set(bytes, this.#raw.length);
    this.#raw = merged;
    if (!this.head) {
      const i = dec.decode(this.#raw.subarray(0, Math.min(this.#raw.length, 8192)))
        .indexOf("\r\n\r\n");
      if (i < 0) return;
      this.head = dec.decode(this.#raw.subarray(0, i));
      this.#raw = this.#raw.subarray(i + 4);
      this.#headed?.();
    }
    for (;;) {
      if (this.#left < 0) {
        const s = dec.decode(this.#raw.subarray(0, Math.min(this.#raw.length, 20)));
        const i = s.indexOf("\r\n");
        if (i < 0) break;
        this.#left = parseInt(s.slice(0, i), 16);
        this.#raw = this.#raw.subarray(i + 2);
        if (this.#left === 0) {
          // The last chunk: the response ended (the connection may stay open): close it.
          this.#finish();
          this.close();
          return;
        }
      }
      if (this.#raw.length < this.#left + 2) break;
      const chunk = this.#raw.slice(0, this.#left);
      this.body.push(chunk);
      this.#text += this.#textDec.decode(chunk, { stream: true });
      this.#raw = this.#raw.subarray(this.#left + 2);
      this.#left = -1;
    }
    this.#check();
  }

  #check(): void {
    this.#waiters = this.#waiters.filter((w) => {
      const at = this.#text.lastIndexOf(`id: ${w.id}\n`);
      if (at < 0 || this.#text.indexOf("\n\n", at) < 0) return true;
      w.resolve();
      return false;
    });
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.body.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of this.body) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }
}
