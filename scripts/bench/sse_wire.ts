/**
 * Decodes one HTTP/1.1 response carrying server-sent events, straight from the socket's
 * bytes: the response head, chunked transfer encoding (or an identity body), then the SSE
 * lines. Built for the load generator, which must not be the bottleneck: `fetch` hands a
 * body over one HTTP chunk per read and saturates near 65k events/s on these machines, so
 * this decoder works on whole socket reads, touches bytes only to find chunk boundaries,
 * decodes the payload once and scans lines with native `indexOf`. Not the product's line
 * parser (src/watch/sse_parser.ts, what `mur watch` reads with): on 300,000 flood-sized events
 * in 64 KiB reads of a chunked body it framed a median 0.56 M events/s against this scanner's
 * 1.41 M, and the raw server rows deliver ~1.8–2.1 M events/s, so it would be what they measured.
 */

export interface ResponseHead {
  status: number;
  /** Header names lower-cased. */
  headers: Map<string, string>;
}

export interface SseSink {
  /** The response head is in. */
  head(head: ResponseHead): void;
  /** One event: its `data` (lines joined with "\n") and its `id:` value, or null. */
  event(data: string, id: string | null): void;
  /** The body ended (last chunk, content-length reached). EOF is reported by the caller. */
  end(): void;
}

const CR = 13;
const LF = 10;
const enum Body {
  Head,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Identity,
  Done,
}

function latin1(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return s;
}

function findHeadEnd(b: Uint8Array, from: number): number {
  for (let i = Math.max(0, from); i + 3 < b.length; i++) {
    if (b[i] === CR && b[i + 1] === LF && b[i + 2] === CR && b[i + 3] === LF) return i;
  }
  return -1;
}

export function parseHead(text: string): ResponseHead {
  const lines = text.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (!m) throw new Error(`not an HTTP/1.x response: ${JSON.stringify(lines[0])}`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const c = line.indexOf(":");
    if (c <= 0) continue;
    const name = line.slice(0, c).trim().toLowerCase();
    const value = line.slice(c + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  return { status: Number(m[1]), headers };
}

export class SseWireDecoder {
  #state: Body = Body.Head;
  #headBytes = new Uint8Array(0);
  #sizeLine = "";
  #remaining = 0;
  #text = new TextDecoder();
  #rest = "";
  #data: string | null = null;
  #id: string | null = null;
  /** Body bytes of a non-SSE answer, kept (bounded) so a refusal can be shown. */
  #plain = "";
  #isSse = false;

  constructor(private sink: SseSink) {}

  get done(): boolean {
    return this.#state === Body.Done;
  }

  /** The start of a non-event-stream body, for error messages. */
  get plainBody(): string {
    return this.#plain;
  }

  feed(bytes: Uint8Array): void {
    let i = 0;
    if (this.#state === Body.Head) {
      const prev = this.#headBytes.length;
      const all = new Uint8Array(prev + bytes.length);
      all.set(this.#headBytes);
      all.set(bytes, prev);
      const end = findHeadEnd(all, prev - 3);
      if (end === -1) {
        this.#headBytes = all;
        return;
      }
      const head = parseHead(latin1(all.subarray(0, end)));
      this.#headBytes = new Uint8Array(0);
      this.#isSse = (head.headers.get("content-type") ?? "").startsWith("text/event-stream");
      const te = head.headers.get("transfer-encoding") ?? "";
      const cl = head.headers.get("content-length");
      if (te.toLowerCase().includes("chunked")) this.#state = Body.ChunkSize;
      else if (cl !== undefined) {
        this.#remaining = Number(cl);
        this.#state = this.#remaining > 0 ? Body.Identity : Body.Done;
      } else {
        this.#remaining = Infinity;
        this.#state = Body.Identity;
      }
      this.sink.head(head);
      if (this.#state === Body.Done) {
        this.sink.end();
        return;
      }
      // The bytes after the head belong to the body.
      bytes = all.subarray(end + 4);
      i = 0;
    }
    while (i < bytes.length) {
      switch (this.#state) {
        case Body.ChunkSize: {
          const nl = bytes.indexOf(LF, i);
          if (nl === -1) {
            this.#sizeLine += latin1(bytes.subarray(i));
            return;
          }
          const line = this.#sizeLine + latin1(bytes.subarray(i, nl));
          this.#sizeLine = "";
          i = nl + 1;
          const size = parseInt(line.split(";")[0].trim(), 16);
          if (!Number.isFinite(size)) {
            throw new Error(`bad chunk size line ${JSON.stringify(line)}`);
          }
          if (size === 0) {
            this.#finish();
            return;
          }
          this.#remaining = size;
          this.#state = Body.ChunkData;
          break;
        }
        case Body.ChunkData: {
          const take = Math.min(this.#remaining, bytes.length - i);
          this.#payload(bytes.subarray(i, i + take));
          i += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#state = Body.ChunkEnd;
          break;
        }
        case Body.ChunkEnd: {
          // The CRLF after a chunk's data.
          if (bytes[i] === LF) this.#state = Body.ChunkSize;
          i++;
          break;
        }
        case Body.Identity: {
          const take = Math.min(this.#remaining, bytes.length - i);
          this.#payload(bytes.subarray(i, i + take));
          i += take;
          this.#remaining -= take;
          if (this.#remaining === 0) {
            this.#finish();
            return;
          }
          break;
        }
        default:
          return;
      }
    }
  }

  #finish(): void {
    this.#state = Body.Done;
    this.sink.end();
  }

  #payload(bytes: Uint8Array): void {
    const text = this.#text.decode(bytes, { stream: true });
    if (!this.#isSse) {
      if (this.#plain.length < 4096) this.#plain += text;
      return;
    }
    this.#lines(text);
  }

  #lines(text: string): void {
    const buf = this.#rest.length > 0 ? this.#rest + text : text;
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf("\n", pos);
      if (nl === -1) break;
      let end = nl;
      if (end > pos && buf.charCodeAt(end - 1) === CR) end--;
      if (end === pos) {
        if (this.#data !== null) this.sink.event(this.#data, this.#id);
        this.#data = null;
        this.#id = null;
      } else if (buf.charCodeAt(pos) !== 58 /* ':' comment */) {
        if (buf.startsWith("data:", pos)) {
          let v = pos + 5;
          if (buf.charCodeAt(v) === 32) v++;
          const d = buf.slice(v, end);
          this.#data = this.#data === null ? d : `${this.#data}\n${d}`;
        } else if (buf.startsWith("id:", pos)) {
          let v = pos + 3;
          if (buf.charCodeAt(v) === 32) v++;
          this.#id = buf.slice(v, end);
        }
      }
      pos = nl + 1;
    }
    this.#rest = pos < buf.length ? buf.slice(pos) : "";
  }
}
