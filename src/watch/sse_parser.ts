/**
 * The SSE line protocol (the HTML standard's "event stream" interpretation), as `mur watch` and a
 * member call's follow stream read it: lines end at CRLF, LF or CR (a CR at the end of a chunk
 * waits for the next, which may start with its LF); a blank line dispatches the event when it had
 * a `data` field; `data` lines join with `\n`; a field's value loses one leading space; `id` is the
 * event's own (it does not carry over to the next event) and is ignored when it holds a NUL; a line
 * starting with `:` is a comment. It behaves as eventsource-parser does (the property test
 * tests/watch/sse_parser_property_test.ts holds the two to the same answers): written here because
 * importing any npm package makes Deno set up its npm resolution at start, about a third of `mur
 * watch`'s start on this machine, for a parser of 60 lines.
 */

export interface SseParserHandlers {
  event(id: string | undefined, data: string): void;
  comment(text: string): void;
}

const CR = 13, LF = 10, SPACE = 32;
/** What eventsource-parser strips from the start of the first chunk (a BOM's bytes as text). */
const BOM_AS_TEXT = "\u00ef\u00bb\u00bf";

export class SseParser {
  #rest = "";
  #first = true;
  #id: string | undefined = undefined;
  #data = "";
  #lines = 0;

  constructor(private readonly on: SseParserHandlers) {}

  /** Text as it arrives, in any pieces. */
  feed(chunk: string): void {
    if (this.#first) {
      this.#first = false;
      if (chunk.startsWith(BOM_AS_TEXT)) chunk = chunk.slice(3);
    }
    const buf = this.#rest === "" ? chunk : this.#rest + chunk;
    let at = 0;
    for (;;) {
      const cr = buf.indexOf("\r", at);
      const lf = buf.indexOf("\n", at);
      let end: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR last in what arrived may be the first half of a CRLF: wait for the next chunk.
        if (cr === buf.length - 1) break;
        end = cr;
      } else if (lf !== -1) end = lf;
      else break;
      this.#line(buf, at, end);
      at = end + 1;
      if (buf.charCodeAt(end) === CR && buf.charCodeAt(at) === LF) at++;
    }
    this.#rest = at === 0 ? buf : buf.slice(at);
  }

  #line(buf: string, start: number, end: number): void {
    if (start === end) {
      if (this.#lines > 0) this.on.event(this.#id, this.#data);
      this.#id = undefined;
      this.#data = "";
      this.#lines = 0;
      return;
    }
    const line = buf.slice(start, end);
    if (line.charCodeAt(0) === 58) {
      this.on.comment(line.slice(line.charCodeAt(1) === SPACE ? 2 : 1));
      return;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1
      ? ""
      : line.slice(colon + (line.charCodeAt(colon + 1) === SPACE ? 2 : 1));
    if (field === "data") {
      this.#data = this.#lines === 0 ? value : `${this.#data}\n${value}`;
      this.#lines++;
    } else if (field === "id") {
      if (!value.includes("\0")) this.#id = value;
    }
    // `event`, `retry` and unknown fields: nothing a murmur stream uses.
  }
}
