/**
 * One HTTP/1.1 request on its own connection (`Deno.connect`, `Deno.connectTls` for https), for
 * the CLI's calls to a door: `mur ps`'s and `mur watch`'s card probe, the watch stream, `stop` and
 * `cancel` (docs/benchmarks.md: what start costs).
 *
 * Why not `fetch`: in a process that has not used it yet, the first `fetch` loads Deno's fetch
 * layer and builds its HTTP client, about 10 ms before a byte is sent (measured with
 * `--cpu-prof` on this machine: 10–13 ms against 2–3 ms for this), which was a third of `mur ps`'s
 * start and of `mur watch`'s time to its first event. Only what a door's answer needs is read:
 * a status line, header fields, and a body framed by `content-length`, chunked coding
 * (./chunked.ts) or the connection's end. Proxies (`HTTP_PROXY`) are not used: a door is
 * reached directly.
 */
import { ChunkedDecoder, ChunkedError } from "./chunked.ts";

export interface HttpRequest {
  /** `http://host:port/path` or `https://…`. */
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Aborting closes the connection: a pending request rejects, a body being read ends. */
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  ok: boolean;
  /** Header field values by lower-case name (repeated fields joined with ", "). */
  headers: Map<string, string>;
  /**
   * The body, decoded from its framing, as the socket delivers it. Read it once; leaving the
   * loop early (or `return()`) closes the connection. An async iterable rather than a
   * ReadableStream: the first ReadableStream of a process loads Deno's streams layer, about 5 ms
   * of a CLI command's start.
   */
  body: AsyncIterable<Uint8Array>;
  /** The whole body as text (UTF-8). */
  text(): Promise<string>;
}

/** The answer is not HTTP/1.x this client can read (no status line, a broken framing). */
export class HttpProtocolError extends Error {}

/** A status line and header section longer than this is refused. */
const MAX_HEAD = 64 * 1024;

const enc = new TextEncoder();

function target(
  url: string,
): { tls: boolean; hostname: string; port: number; host: string; path: string } {
  const u = new URL(url);
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new TypeError(`not an http(s) URL: ${url}`);
  }
  const tls = u.protocol === "https:";
  const port = u.port === "" ? (tls ? 443 : 80) : Number(u.port);
  // `[::1]` in a URL is `::1` to connect to.
  const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
  return { tls, hostname, port, host: u.host, path: `${u.pathname}${u.search}` };
}

function connect(t: ReturnType<typeof target>): Promise<Deno.Conn> {
  return t.tls
    ? Deno.connectTls({ hostname: t.hostname, port: t.port, alpnProtocols: ["http/1.1"] })
    : Deno.connect({ hostname: t.hostname, port: t.port });
}

/**
 * The connection, or the signal's reason once it aborts: a connect to a host that drops the SYN
 * would otherwise wait for the kernel's retries (minutes) whatever the caller's timeout. A
 * connection that arrives after the abort is closed.
 */
function untilAborted(connecting: Promise<Deno.Conn>, signal?: AbortSignal): Promise<Deno.Conn> {
  if (!signal) return connecting;
  return new Promise((resolve, reject) => {
    // A connection that arrives later is closed by the handler below, once.
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    connecting.then(
      (c) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) c.close();
        else resolve(c);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function requestHead(req: HttpRequest, t: ReturnType<typeof target>, bodyLength: number): string {
  const lines = [`${req.method} ${t.path || "/"} HTTP/1.1`, `host: ${t.host}`];
  for (const [k, v] of Object.entries(req.headers ?? {})) {
    if (/[\r\n]/.test(k) || /[\r\n]/.test(v)) throw new TypeError(`header ${k} holds a line break`);
    lines.push(`${k}: ${v}`);
  }
  if (req.body !== undefined) lines.push(`content-length: ${bodyLength}`);
  lines.push("connection: close", "", "");
  return lines.join("\r\n");
}

/** Index just past the blank line that ends the header section, or -1. */
function headEnd(buf: Uint8Array, len: number): number {
  for (let i = 3; i < len; i++) {
    if (buf[i] === 0x0a && buf[i - 1] === 0x0d && buf[i - 2] === 0x0a && buf[i - 3] === 0x0d) {
      return i + 1;
    }
  }
  // A bare-LF head (not sent by Deno.serve, accepted anyway).
  for (let i = 1; i < len; i++) if (buf[i] === 0x0a && buf[i - 1] === 0x0a) return i + 1;
  return -1;
}

function parseHead(text: string): { status: number; headers: Map<string, string> } {
  const lines = text.split(/\r?\n/);
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]);
  if (!m) {
    throw new HttpProtocolError(
      `not an HTTP/1.1 status line: ${JSON.stringify(lines[0].slice(0, 60))}`,
    );
  }
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) {
      throw new HttpProtocolError(`not a header field: ${JSON.stringify(line.slice(0, 60))}`);
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const had = headers.get(name);
    headers.set(name, had === undefined ? value : `${had}, ${value}`);
  }
  return { status: Number(m[1]), headers };
}

/**
 * Sends the request and resolves once the status line and header fields are in. Network errors
 * reject with Deno's own errors (ConnectionRefused, …); an abort rejects with the signal's reason.
 */
export async function request(req: HttpRequest): Promise<HttpResponse> {
  const t = target(req.url);
  req.signal?.throwIfAborted();
  const body = req.body === undefined ? new Uint8Array(0) : enc.encode(req.body);
  const conn = await untilAborted(connect(t), req.signal);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      conn.close();
    } catch { /* already closed */ }
  };
  const onAbort = () => close();
  req.signal?.addEventListener("abort", onAbort, { once: true });
  const aborted = () => {
    if (req.signal?.aborted) throw req.signal.reason;
  };
  try {
    const head = enc.encode(requestHead(req, t, body.length));
    const out = new Uint8Array(head.length + body.length);
    out.set(head);
    out.set(body, head.length);
    for (let off = 0; off < out.length;) off += await conn.write(out.subarray(off));

    // Read until the blank line that ends the header section (skipping 1xx interim answers).
    let buf = new Uint8Array(16 * 1024);
    let len = 0;
    for (;;) {
      const end = headEnd(buf, len);
      if (end !== -1) {
        const parsed = parseHead(new TextDecoder().decode(buf.subarray(0, end)));
        if (parsed.status >= 100 && parsed.status < 200) {
          buf.copyWithin(0, end, len);
          len -= end;
          continue;
        }
        const rest = buf.slice(end, len);
        const noBody = parsed.status === 204 || parsed.status === 304;
        const stream = bodyChunks(conn, parsed.headers, rest, noBody, close, () => {
          req.signal?.removeEventListener("abort", onAbort);
        });
        return {
          status: parsed.status,
          ok: parsed.status >= 200 && parsed.status < 300,
          headers: parsed.headers,
          body: stream,
          text: () => readText(stream),
        };
      }
      if (len === buf.length) {
        if (len >= MAX_HEAD) throw new HttpProtocolError("the answer's header section is too long");
        const bigger = new Uint8Array(buf.length * 2);
        bigger.set(buf);
        buf = bigger;
      }
      const n = await conn.read(buf.subarray(len));
      aborted();
      if (n === null) {
        throw new HttpProtocolError(
          len === 0
            ? "the connection closed without an answer"
            : "the answer ended inside its header section",
        );
      }
      len += n;
    }
  } catch (e) {
    req.signal?.removeEventListener("abort", onAbort);
    close();
    aborted();
    throw e;
  }
}

/** The body's pieces: framed by content-length, chunked coding, or the connection's end. */
async function* bodyChunks(
  conn: Deno.Conn,
  headers: Map<string, string>,
  first: Uint8Array,
  noBody: boolean,
  close: () => void,
  done: () => void,
): AsyncGenerator<Uint8Array> {
  const chunked = /(^|,)\s*chunked\s*$/i.test(headers.get("transfer-encoding") ?? "");
  const lengthField = headers.get("content-length");
  let left = noBody ? 0 : !chunked && lengthField !== undefined ? Number(lengthField) : Infinity;
  const decoder = chunked && !noBody ? new ChunkedDecoder() : null;
  try {
    if (!decoder && (!Number.isSafeInteger(left) && left !== Infinity || left < 0)) {
      throw new HttpProtocolError(`a content-length that is not a length: ${lengthField}`);
    }
    let bytes: Uint8Array | null = first;
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      if (bytes === null) {
        if (!decoder && left === 0) return;
        const n = await conn.read(buf);
        if (n === null) {
          // Only a body framed by the connection's end may end here.
          if (decoder || left !== Infinity) {
            throw new HttpProtocolError("the connection closed before the body's end");
          }
          return;
        }
        bytes = buf.subarray(0, n);
      }
      if (decoder) {
        let pieces: Uint8Array[];
        try {
          pieces = decoder.push(bytes);
        } catch (e) {
          throw e instanceof ChunkedError ? new HttpProtocolError(e.message) : e;
        }
        // Copied: `buf` is read into again while the reader may still hold a piece.
        for (const piece of pieces) if (piece.length > 0) yield piece.slice();
        if (decoder.done) return;
      } else {
        const take = Math.min(left, bytes.length);
        if (take > 0) yield bytes.slice(0, take);
        left -= take;
        if (left === 0) return;
      }
      bytes = null;
    }
  } finally {
    close();
    done();
  }
}

async function readText(body: AsyncIterable<Uint8Array>): Promise<string> {
  const dec = new TextDecoder();
  let text = "";
  for await (const piece of body) text += dec.decode(piece, { stream: true });
  return text + dec.decode();
}
