/**
 * HTTP/1.1 chunked transfer coding, decoded incrementally (RFC 9112 §7.1): bytes go in as the
 * socket hands them over, split anywhere (inside a size line, inside CRLF, inside data), and the
 * chunks' data comes out. Chunk extensions and trailer fields are read and dropped. Used by
 * ./http1_client.ts; tests/http/chunked_property_test.ts checks it against a decoder of the
 * whole message at once.
 */

/** The coding is broken: a size line that is not hex, data not followed by CRLF, a line too long. */
export class ChunkedError extends Error {}

/** A size line (size, extensions) or a trailer line longer than this is refused. */
const MAX_LINE = 4096;

type State =
  | { at: "size" }
  | { at: "data"; left: number }
  | { at: "data-end" } // the CRLF after a chunk's data
  | { at: "trailer" }
  | { at: "done" };

export class ChunkedDecoder {
  #state: State = { at: "size" };
  /** Bytes of a line not yet ended (size line, CRLF, trailer line). */
  #line: number[] = [];

  /** True once the last chunk and the trailer section were read. */
  get done(): boolean {
    return this.#state.at === "done";
  }

  /**
   * Decodes `bytes`; returns the data in them (views into `bytes`, no copy). Bytes after the
   * end of the message are ignored (the client closes the connection after one response).
   */
  push(bytes: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let i = 0;
    while (i < bytes.length && this.#state.at !== "done") {
      const s = this.#state;
      if (s.at === "data") {
        const n = Math.min(s.left, bytes.length - i);
        out.push(bytes.subarray(i, i + n));
        i += n;
        this.#state = s.left === n ? { at: "data-end" } : { at: "data", left: s.left - n };
        continue;
      }
      // Every other state reads a line up to LF.
      const lf = bytes.indexOf(0x0a, i);
      const end = lf === -1 ? bytes.length : lf;
      for (let k = i; k < end; k++) this.#line.push(bytes[k]);
      if (this.#line.length > MAX_LINE) throw new ChunkedError("a chunked line is too long");
      i = end;
      if (lf === -1) break;
      i = lf + 1;
      const line = this.#takeLine();
      this.#onLine(line);
    }
    return out;
  }

  #takeLine(): string {
    const l = this.#line;
    this.#line = [];
    if (l.length > 0 && l[l.length - 1] === 0x0d) l.pop();
    return String.fromCharCode(...l);
  }

  #onLine(line: string): void {
    const s = this.#state;
    if (s.at === "data-end") {
      if (line !== "") throw new ChunkedError("a chunk's data is not followed by CRLF");
      this.#state = { at: "size" };
    } else if (s.at === "size") {
      const hex = line.split(";")[0].trim();
      if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) {
        throw new ChunkedError(
          `a chunk size line is not hex: ${JSON.stringify(line.slice(0, 40))}`,
        );
      }
      const size = parseInt(hex, 16);
      this.#state = size === 0 ? { at: "trailer" } : { at: "data", left: size };
    } else if (s.at === "trailer") {
      // Trailer fields are dropped; the empty line ends the message.
      if (line === "") this.#state = { at: "done" };
    }
  }
}
