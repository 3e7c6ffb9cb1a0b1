/**
 * A lean `murmur.WatchSession` client for tests with hundreds of watchers and tens of thousands of
 * events: raw TCP, its own HTTP/1.1 request, chunked decoding and an SSE line scan over bytes that
 * keeps only what the test checks — each numbered event's id, and the unnumbered events (the
 * connection-ack, `gap`, `lagged`) as their JSON. `record` also keeps every numbered event's
 * `id:`/`data:` lines, to compare bytes with another watcher's.
 */
import { type Telling, tellingOf } from "./told_losses.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

export interface WatchOptions {
  lastEventId?: number;
  /** Keep each numbered event's lines (costly: a few watchers only). */
  record?: boolean;
  requestId?: string | number;
}

export class IdWatcher {
  readonly ids: number[] = [];
  /** Unnumbered events' data (connection-ack, gap, lagged), as JSON text. */
  readonly unnumbered: string[] = [];
  /** For each unnumbered event, how many ids had arrived before it (where it came among them). */
  readonly unnumberedAt: number[] = [];
  readonly records: string[] = [];
  /** Resolves when the connection ends (EOF, reset, or close()). */
  readonly ended: Promise<void>;
  #conn: Deno.TcpConn;
  #closed = false;
  #onId: ((id: number) => void) | null = null;
  // HTTP state
  #head = true;
  #headBuf = "";
  #chunkLeft = 0;
  #sizeLine = "";
  #crlf = 0;
  // SSE line state
  /** The start of a line cut by a read or chunk boundary. */
  #carry: Uint8Array | null = null;
  #pendingId: number | null = null;
  #pendingLines: string | null = null;

  private constructor(conn: Deno.TcpConn, private readonly o: WatchOptions) {
    this.#conn = conn;
    this.ended = this.#read();
  }

  static async open(base: string, o: WatchOptions = {}): Promise<IdWatcher> {
    const url = new URL(base);
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: o.requestId ?? 1,
      method: "murmur.WatchSession",
      params: {},
    });
    const path = url.pathname.endsWith("/") ? url.pathname : url.pathname + "/";
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${url.host}`,
      "Content-Type: application/json",
      "A2A-Version: 1.0",
      ...(o.lastEventId !== undefined ? [`Last-Event-ID: ${o.lastEventId}`] : []),
      `Content-Length: ${enc.encode(body).length}`,
      "",
      body,
    ].join("\r\n");
    await conn.write(enc.encode(head));
    return new IdWatcher(conn, o);
  }

  /** The `lagged` and `gap` frames, each where it came (tests/helpers/told_losses.ts). */
  get told(): Telling[] {
    return this.unnumbered.flatMap((u, i) => tellingOf(u, this.unnumberedAt[i]) ?? []);
  }

  get lastId(): number {
    return this.ids.length ? this.ids[this.ids.length - 1] : (this.o.lastEventId ?? 0);
  }

  /** Called with each id as it arrives. */
  onId(f: (id: number) => void): void {
    this.#onId = f;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch { /* gone */ }
  }

  async #read(): Promise<void> {
    const buf = new Uint8Array(256 * 1024);
    try {
      for (;;) {
        const n = await this.#conn.read(buf);
        if (n === null) break;
        this.#http(buf, n);
      }
    } catch {
      // reset by a killed server: the end of this connection
    } finally {
      this.close();
    }
  }

  #http(b: Uint8Array, n: number): void {
    let i = 0;
    if (this.#head) {
      for (; i < n; i++) {
        this.#headBuf += String.fromCharCode(b[i]);
        if (this.#headBuf.endsWith("\r\n\r\n")) {
          this.#head = false;
          if (!this.#headBuf.startsWith("HTTP/1.1 200")) {
            throw new Error(`watch answered ${this.#headBuf.split("\r\n")[0]}`);
          }
          i++;
          break;
        }
      }
    }
    while (i < n) {
      if (this.#crlf > 0) {
        i++;
        this.#crlf--;
        continue;
      }
      if (this.#chunkLeft === 0) {
        const c = b[i++];
        if (c === 0x0a) {
          const size = parseInt(this.#sizeLine.trim(), 16);
          this.#sizeLine = "";
          // The last chunk: the response is over (the connection may be kept alive; not by us).
          if (size === 0) return this.close();
          this.#chunkLeft = size;
        } else if (c !== 0x0d) this.#sizeLine += String.fromCharCode(c);
        continue;
      }
      const take = Math.min(this.#chunkLeft, n - i);
      this.#sse(b, i, i + take);
      i += take;
      this.#chunkLeft -= take;
      if (this.#chunkLeft === 0) this.#crlf = 2;
    }
  }

  #sse(b: Uint8Array, from: number, to: number): void {
    let i = from;
    while (i < to) {
      const nl = b.indexOf(0x0a, i);
      if (nl === -1 || nl >= to) {
        this.#carry = join(this.#carry, b.subarray(i, to));
        return;
      }
      const line = this.#carry ? join(this.#carry, b.subarray(i, nl)) : b.subarray(i, nl);
      this.#carry = null;
      this.#lineDone(line);
      i = nl + 1;
    }
  }

  #lineDone(line: Uint8Array): void {
    if (line.length === 0) {
      // The end of an event.
      if (this.#pendingId !== null) {
        const id = this.#pendingId;
        this.ids.push(id);
        if (this.o.record && this.#pendingLines !== null) this.records.push(this.#pendingLines);
        this.#onId?.(id);
      }
      this.#pendingId = null;
      this.#pendingLines = null;
      return;
    }
    // "id: "
    if (line[0] === 0x69 && line[1] === 0x64 && line[2] === 0x3a) {
      let v = 0;
      for (let k = 4; k < line.length; k++) v = v * 10 + (line[k] - 48);
      this.#pendingId = v;
      if (this.o.record) this.#pendingLines = `id: ${v}\n`;
      return;
    }
    // "data: "
    if (line[0] === 0x64 && line[1] === 0x61) {
      if (this.#pendingId === null) {
        this.unnumbered.push(dec.decode(line.subarray(6)));
        this.unnumberedAt.push(this.ids.length);
      } else if (this.o.record) {
        this.#pendingLines += dec.decode(line) + "\n";
      }
    }
    // ":heartbeat" and anything else: skipped.
  }
}

function join(a: Uint8Array | null, b: Uint8Array): Uint8Array {
  if (a === null) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
