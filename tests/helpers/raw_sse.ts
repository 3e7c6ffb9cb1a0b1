/**
 * A raw TCP SSE client for tests that need exact control of reading: it writes the HTTP request
 * itself, can stop reading entirely (a stalled reader) and decodes chunked encoding itself; the
 * events in the body are parsed by the tests' one SSE reader (sse.ts).
 */
import { type SseEvent, sseItems } from "./sse.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

export class RawSse {
  #conn: Deno.TcpConn;
  #buf: Uint8Array = new Uint8Array(0);
  #chunkLeft = 0;
  #headersDone = false;
  #ended = false;
  status = 0;
  headers = "";
  comments = 0;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  static async open(
    base: string,
    method: string,
    params: unknown,
    headers: Record<string, string> = {},
    id: string | number = "raw",
  ): Promise<RawSse> {
    const url = new URL(base);
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    // A base with a path (an edge's `/sessions/<id>/`) posts there; a bare one to `/`.
    const head = [
      `POST ${url.pathname.endsWith("/") ? url.pathname : url.pathname + "/"} HTTP/1.1`,
      `Host: ${url.host}`,
      `Content-Type: application/json`,
      `A2A-Version: 1.0`,
      `Content-Length: ${enc.encode(body).length}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      "",
      "",
    ].join("\r\n");
    await conn.write(enc.encode(head + body));
    return new RawSse(conn);
  }

  /** A GET on an HTTP+JSON stream route (e.g. `/murmur/session:watch`): bare events. */
  static async openGet(
    base: string,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<RawSse> {
    const url = new URL(base);
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    const head = [
      `GET ${path} HTTP/1.1`,
      `Host: ${url.host}`,
      `A2A-Version: 1.0`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      "",
      "",
    ].join("\r\n");
    await conn.write(enc.encode(head));
    return new RawSse(conn);
  }

  /**
   * Reads until `until` is satisfied or the connection ends, bounded by `ms` (then the
   * connection is closed and what was read returned); `stop` (checked after each event or
   * comment) ends it early too.
   */
  async read(
    until: (e: SseEvent, all: SseEvent[]) => boolean,
    ms = 30_000,
    stop?: () => boolean,
  ): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    while (this.#kept.length) {
      const e = this.#kept.shift()!;
      out.push(e);
      if (until(e, out)) return out;
    }
    if (stop?.()) return out;
    const timer = setTimeout(() => this.close(), ms);
    try {
      for (;;) {
        const r = await this.#items.next();
        if (r.done) return out;
        if ("comment" in r.value) this.comments++;
        else {
          out.push(r.value.event);
          if (until(r.value.event, out)) return out;
        }
        if (stop?.()) return out;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads until `n` comment lines (heartbeats) have arrived in all, bounded by `ms`: a wait on
   * the heartbeats themselves rather than on the clock. Events read meanwhile are kept for the
   * next `read`.
   */
  async readComments(n: number, ms = 30_000): Promise<void> {
    this.#kept.push(...await this.read(() => false, ms, () => this.comments >= n));
    if (this.comments < n) throw new Error(`${this.comments} of ${n} heartbeats before the end`);
  }

  #kept: SseEvent[] = [];
  /** The body's events, parsed by the product's reader (sse.ts) as the socket is read. */
  #items = sseItems(this.#body());

  /** The response body's bytes, de-chunked, read from the socket only while a `read` asks. */
  async *#body(): AsyncGenerator<Uint8Array> {
    const chunk = new Uint8Array(256 * 1024);
    while (!this.#ended) {
      let n: number | null;
      try {
        n = await this.#conn.read(chunk);
      } catch {
        n = null; // closed (by a read's bound, or close())
      }
      if (n === null) return;
      const body = this.#feed(chunk.slice(0, n));
      if (body.length > 0) yield body;
    }
  }

  /** Takes socket bytes: the head once, then chunked transfer decoding; returns body bytes. */
  #feed(bytes: Uint8Array): Uint8Array {
    this.#buf = concat(this.#buf, bytes);
    if (!this.#headersDone) {
      const s = dec.decode(this.#buf);
      const i = s.indexOf("\r\n\r\n");
      if (i < 0) return new Uint8Array(0);
      this.headers = s.slice(0, i);
      this.status = Number(this.headers.split(" ")[1]);
      this.#headersDone = true;
      this.#buf = this.#buf.subarray(enc.encode(s.slice(0, i + 4)).length);
    }
    let body: Uint8Array = new Uint8Array(0);
    // chunked transfer decoding: size line, data, CRLF
    for (;;) {
      if (this.#needCrlf) {
        if (this.#buf.length < 2) return body;
        this.#buf = this.#buf.subarray(2);
        this.#needCrlf = false;
      }
      if (this.#chunkLeft === 0) {
        const s = dec.decode(this.#buf.subarray(0, Math.min(this.#buf.length, 32)));
        const i = s.indexOf("\r\n");
        if (i < 0) return body;
        const size = parseInt(s.slice(0, i), 16);
        if (size === 0) {
          this.#ended = true;
          return body;
        }
        this.#chunkLeft = size;
        this.#buf = this.#buf.subarray(i + 2);
      }
      if (this.#buf.length === 0) return body;
      const take = Math.min(this.#chunkLeft, this.#buf.length);
      body = concat(body, this.#buf.subarray(0, take));
      this.#buf = this.#buf.subarray(take);
      this.#chunkLeft -= take;
      if (this.#chunkLeft === 0) this.#needCrlf = true;
    }
  }

  #needCrlf = false;

  close() {
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
  }
}

/** VmRSS of a process in KiB (Linux). */
export async function rssKiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) : NaN;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
