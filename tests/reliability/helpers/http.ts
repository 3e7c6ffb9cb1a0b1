/**
 * A raw HTTP/1.1 client over TCP for hostile-client tests: it writes exactly the bytes it is
 * given (broken bodies, duplicate headers, lying Content-Length), then parses whatever comes
 * back strictly enough to tell a well-formed response from anything else. The events of an
 * event-stream answer are parsed by the tests' one SSE reader (tests/helpers/sse.ts).
 */
import { sseData } from "../../helpers/sse.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

export interface RawResponse {
  status: number;
  /** Lower-cased header name → every value, in order. */
  headers: Map<string, string[]>;
  body: Uint8Array;
  /** How the body ended. `events` = stopped after the SSE events asked for. */
  end: "length" | "chunked" | "close" | "events";
  /** Complete SSE `data:` payloads read (event-stream answers). */
  events: string[];
}

export type RawResult =
  | { kind: "response"; res: RawResponse }
  | { kind: "malformed"; why: string; bytes: string }
  | { kind: "reset"; why: string; partial: string }
  | { kind: "timeout"; partial: string };

export interface RawOptions {
  /** Total budget for connect, write and read. */
  timeoutMs?: number;
  /** Shut the write side after sending (a client whose body never completes). */
  halfClose?: boolean;
  /** For event streams: stop after this many SSE events (default 1). */
  sseEvents?: number;
  /** The request was HEAD: the answer has no body whatever its headers say. */
  head?: boolean;
}

export function header(res: RawResponse, name: string): string | undefined {
  return res.headers.get(name.toLowerCase())?.join(", ");
}

/** Builds a request: `headers` in order, duplicates allowed; Content-Length added unless given. */
export function buildRequest(
  method: string,
  target: string,
  headers: [string, string][],
  body: Uint8Array,
  opts: { contentLength?: number | null } = {},
): Uint8Array {
  const lines = [`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"];
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  const cl = opts.contentLength === undefined ? body.length : opts.contentLength;
  if (cl !== null) lines.push(`Content-Length: ${cl}`);
  const head = latin1(lines.join("\r\n") + "\r\n\r\n");
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** Header text as bytes one-to-one (a value may carry raw bytes 0x80–0xff on purpose). */
export function latin1(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

export async function rawHttp(
  port: number,
  request: Uint8Array,
  opts: RawOptions = {},
): Promise<RawResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      conn.close();
    } catch { /* closed */ }
  }, timeoutMs);
  const reader = new Reader(conn);
  try {
    // Write and read at once: a server may answer (413) before the body is all sent.
    const writing = writeAll(conn, request).then(async () => {
      if (opts.halfClose) await conn.closeWrite();
    }).catch(() => {});
    const parsed = await parseResponse(reader, opts);
    await Promise.race([writing, new Promise((r) => setTimeout(r, 50))]);
    return parsed;
  } catch (e) {
    const partial = dec.decode(reader.seen.subarray(0, 200));
    if (timedOut) return { kind: "timeout", partial };
    return { kind: "reset", why: (e as Error).message, partial };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off, off + (1 << 20)));
}

class Reader {
  buf: Uint8Array = new Uint8Array(0);
  seen: Uint8Array = new Uint8Array(0);
  eof = false;
  #chunk = new Uint8Array(64 * 1024);
  constructor(private conn: Deno.Conn) {}

  async fill(): Promise<boolean> {
    if (this.eof) return false;
    const n = await this.conn.read(this.#chunk);
    if (n === null) {
      this.eof = true;
      return false;
    }
    const add = this.#chunk.subarray(0, n);
    this.buf = concat(this.buf, add);
    if (this.seen.length < 4096) this.seen = concat(this.seen, add);
    return true;
  }

  take(n: number): Uint8Array {
    const out = this.buf.slice(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** Index of `\r\n\r\n` or `\r\n` from `from`, filling as needed; -1 at EOF. */
  async find(seq: number[], from = 0): Promise<number> {
    for (;;) {
      outer: for (let i = from; i + seq.length <= this.buf.length; i++) {
        for (let j = 0; j < seq.length; j++) if (this.buf[i + j] !== seq[j]) continue outer;
        return i;
      }
      from = Math.max(0, this.buf.length - seq.length);
      if (!(await this.fill())) return -1;
    }
  }
}

const CRLF = [13, 10];
const CRLFCRLF = [13, 10, 13, 10];

async function parseResponse(r: Reader, opts: RawOptions): Promise<RawResult> {
  const end = await r.find(CRLFCRLF);
  if (end < 0) {
    const bytes = dec.decode(r.buf.subarray(0, 200));
    return r.buf.length === 0
      ? { kind: "reset", why: "closed before any response byte", partial: "" }
      : { kind: "malformed", why: "no end of headers", bytes };
  }
  const head = dec.decode(r.take(end + 4)).slice(0, -4);
  const [statusLine, ...lines] = head.split("\r\n");
  const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*$/.exec(statusLine);
  if (!m) return { kind: "malformed", why: `status line '${statusLine}'`, bytes: head };
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const i = line.indexOf(":");
    if (i <= 0) return { kind: "malformed", why: `header line '${line}'`, bytes: head };
    const k = line.slice(0, i).toLowerCase();
    headers.set(k, [...(headers.get(k) ?? []), line.slice(i + 1).trim()]);
  }
  const status = Number(m[1]);
  const res: RawResponse = { status, headers, body: new Uint8Array(0), end: "close", events: [] };
  if (opts.head || status === 304 || status === 204) {
    res.end = "length";
    return { kind: "response", res };
  }
  const te = headers.get("transfer-encoding")?.join(",").toLowerCase() ?? "";
  const cl = headers.get("content-length");
  const sse = (headers.get("content-type")?.[0] ?? "").startsWith("text/event-stream");
  const wantEvents = opts.sseEvents ?? 1;
  if (te.includes("chunked")) {
    const parts: Uint8Array[] = [];
    for (;;) {
      const i = await r.find(CRLF);
      if (i < 0) return { kind: "malformed", why: "chunk size line cut", bytes: head };
      const sizeLine = dec.decode(r.take(i + 2)).trim();
      if (!/^[0-9a-fA-F]+$/.test(sizeLine)) {
        return { kind: "malformed", why: `chunk size '${sizeLine}'`, bytes: head };
      }
      const size = parseInt(sizeLine, 16);
      while (r.buf.length < size + 2) {
        if (!(await r.fill())) return { kind: "malformed", why: "chunk cut", bytes: head };
      }
      if (size === 0) {
        res.end = "chunked";
        break;
      }
      parts.push(r.take(size));
      r.take(2);
      if (sse) {
        res.body = concatAll(parts);
        res.events = await sseData(res.body);
        if (res.events.length >= wantEvents) {
          res.end = "events";
          return { kind: "response", res };
        }
      }
    }
    res.body = concatAll(parts);
    res.events = sse ? await sseData(res.body) : [];
    return { kind: "response", res };
  }
  if (cl !== undefined) {
    if (cl.length !== 1 || !/^\d+$/.test(cl[0])) {
      return { kind: "malformed", why: `content-length ${cl.join(",")}`, bytes: head };
    }
    const n = Number(cl[0]);
    while (r.buf.length < n) {
      if (!(await r.fill())) {
        return { kind: "malformed", why: "body shorter than content-length", bytes: head };
      }
    }
    res.body = r.take(n);
    res.end = "length";
    return { kind: "response", res };
  }
  // Neither: the body runs to the end of the connection.
  while (await r.fill()) {
    if (sse && (await sseData(r.buf)).length >= wantEvents) {
      res.body = r.take(r.buf.length);
      res.events = await sseData(res.body);
      res.end = "events";
      return { kind: "response", res };
    }
  }
  res.body = r.take(r.buf.length);
  res.events = sse ? await sseData(res.body) : [];
  return { kind: "response", res };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function concatAll(parts: Uint8Array[]): Uint8Array {
  return parts.reduce((a, b) => concat(a, b), new Uint8Array(0));
}

export { enc as utf8 };
