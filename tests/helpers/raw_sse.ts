/**
 * A raw TCP SSE client for tests that need exact control of reading: it writes the HTTP request
 * itself, can stop reading entirely (a stalled reader), and decodes chunked encoding and SSE
 * lines itself.
 */
import type { SseEvent } from "./capsule.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

export class RawSse {
  #conn: Deno.TcpConn;
  #buf = new Uint8Array(0);
  #body = "";
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
   * Reads until `until` is satisfied or the connection ends, bounded by `ms`; `stop` (checked
   * between reads) ends it early too.
   */
  async read(
    until: (e: SseEvent, all: SseEvent[]) => boolean,
    ms = 30_000,
    stop?: () => boolean,
  ): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    const deadline = Date.now() + ms;
    const chunk = new Uint8Array(256 * 1024);
    while (this.#kept.length) {
      const e = this.#kept.shift()!;
      out.push(e);
      if (until(e, out)) return out;
    }
    for (;;) {
      for (const e of this.#drainEvents()) {
        out.push(e);
        if (until(e, out)) return out;
      }
      if (this.#ended || stop?.()) return out;
      if (Date.now() > deadline) throw new Error(`raw SSE read not done in ${ms} ms`);
      const timer = setTimeout(() => this.close(), Math.max(1, deadline - Date.now()));
      let n: number | null;
      try {
        n = await this.#conn.read(chunk);
      } catch {
        n = null;
      } finally {
        clearTimeout(timer);
      }
      if (n === null) {
        this.#ended = true;
        continue;
      }
      this.#feed(chunk.subarray(0, n));
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

  #feed(bytes: Uint8Array) {
    const merged = new Uint8Array(this.#buf.length + bytes.length);
    merged.set(this.#buf);
    merged.set(bytes, this.#buf.length);
    this.#buf = merged;
    if (!this.#headersDone) {
      const s = dec.decode(this.#buf);
      const i = s.indexOf("\r\n\r\n");
      if (i < 0) return;
      this.headers = s.slice(0, i);
      this.status = Number(this.headers.split(" ")[1]);
      this.#headersDone = true;
      this.#buf = this.#buf.subarray(enc.encode(s.slice(0, i + 4)).length);
    }
    // chunked transfer decoding: size line, data, CRLF
    for (;;) {
      if (this.#needCrlf) {
        if (this.#buf.length < 2) return;
        this.#buf = this.#buf.subarray(2);
        this.#needCrlf = false;
      }
      if (this.#chunkLeft === 0) {
        const s = dec.decode(this.#buf.subarray(0, Math.min(this.#buf.length, 32)));
        const i = s.indexOf("\r\n");
        if (i < 0) return;
        const size = parseInt(s.slice(0, i), 16);
        if (size === 0) {
          this.#ended = true;
          return;
        }
        this.#chunkLeft = size;
        this.#buf = this.#buf.subarray(i + 2);
      }
      if (this.#buf.length === 0) return;
      const take = Math.min(this.#chunkLeft, this.#buf.length);
      this.#body += dec.decode(this.#buf.subarray(0, take), { stream: true });
      this.#buf = this.#buf.subarray(take);
      this.#chunkLeft -= take;
      if (this.#chunkLeft === 0) this.#needCrlf = true;
    }
  }

  #needCrlf = false;

  *#drainEvents(): Generator<SseEvent> {
    let i;
    while ((i = this.#body.indexOf("\n\n")) >= 0) {
      const block = this.#body.slice(0, i);
      this.#body = this.#body.slice(i + 2);
      let id: number | null = null;
      let data: string | null = null;
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) this.comments++;
        else if (line.startsWith("id: ")) id = Number(line.slice(4));
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (data !== null) yield { id, data: JSON.parse(data) };
    }
  }

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
