/**
 * RESP2, the Redis wire protocol (https://redis.io/docs/latest/develop/reference/protocol-spec/):
 * a command is an array of bulk strings; a reply is a simple string, an error, an integer, a bulk
 * string (or null) or an array of replies. The parser is incremental: it reads one reply from the
 * bytes so far, or says it needs more. Bulk strings are decoded as UTF-8 text: everything mur
 * stores in Redis is text (JSON and ids).
 */

export class RedisReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedisReplyError";
  }
}

export type Reply = string | number | null | RedisReplyError | Reply[];

const enc = new TextEncoder();
const dec = new TextDecoder();

/** One command, encoded as a RESP array of bulk strings. */
export function encodeCommand(args: readonly (string | number)[]): Uint8Array {
  const parts: Uint8Array[] = [enc.encode(`*${args.length}\r\n`)];
  let n = parts[0].length;
  for (const a of args) {
    const body = enc.encode(String(a));
    const head = enc.encode(`$${body.length}\r\n`);
    parts.push(head, body, CRLF);
    n += head.length + body.length + 2;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const CRLF = enc.encode("\r\n");

/** Incremental reply reader: `push` bytes, then `next()` until it answers undefined. */
export class ReplyReader {
  #buf = new Uint8Array(0);
  #at = 0;

  push(bytes: Uint8Array): void {
    const left = this.#buf.length - this.#at;
    const next = new Uint8Array(left + bytes.length);
    next.set(this.#buf.subarray(this.#at), 0);
    next.set(bytes, left);
    this.#buf = next;
    this.#at = 0;
  }

  /** The next complete reply, or undefined when the bytes so far hold none. */
  next(): { value: Reply } | undefined {
    const r = this.#parse(this.#at);
    if (r === undefined) return undefined;
    this.#at = r.end;
    return { value: r.value };
  }

  #line(from: number): { text: string; end: number } | undefined {
    const b = this.#buf;
    for (let i = from; i + 1 < b.length; i++) {
      if (b[i] === 13 && b[i + 1] === 10) {
        return { text: dec.decode(b.subarray(from, i)), end: i + 2 };
      }
    }
    return undefined;
  }

  #parse(at: number): { value: Reply; end: number } | undefined {
    if (at >= this.#buf.length) return undefined;
    const type = this.#buf[at];
    const line = this.#line(at + 1);
    if (!line) return undefined;
    switch (type) {
      case 0x2b: // +
        return { value: line.text, end: line.end };
      case 0x2d: // -
        return { value: new RedisReplyError(line.text), end: line.end };
      case 0x3a: // :
        return { value: Number(line.text), end: line.end };
      case 0x24: { // $
        const n = Number(line.text);
        if (n < 0) return { value: null, end: line.end };
        if (line.end + n + 2 > this.#buf.length) return undefined;
        return {
          value: dec.decode(this.#buf.subarray(line.end, line.end + n)),
          end: line.end + n + 2,
        };
      }
      case 0x2a: { // *
        const n = Number(line.text);
        if (n < 0) return { value: null, end: line.end };
        const items: Reply[] = [];
        let end = line.end;
        for (let i = 0; i < n; i++) {
          const r = this.#parse(end);
          if (r === undefined) return undefined;
          items.push(r.value);
          end = r.end;
        }
        return { value: items, end };
      }
      default:
        throw new Error(`not a RESP reply: type byte ${type}`);
    }
  }
}
