// @ts-check
/**
 * Server-Sent Events parsing for the live page: the line grammar of the HTML standard's "event
 * stream interpretation" (lines end in CRLF, LF or CR; `field: value` with one optional space
 * removed; a blank line dispatches; `:` starts a comment), fed text chunks cut anywhere.
 *
 * Written here rather than shipped from the `eventsource-parser` npm package (which `mur watch`
 * uses): the page is served as files from the binary with no build step, and an npm package's
 * files are not addressable as plain files from a `deno compile` binary. Its behaviour is pinned
 * to `eventsource-parser`'s by a property test (tests/ui/sse_test.ts): for any stream cut into
 * any chunks, both report the same events and comments.
 *
 * As in `eventsource-parser`, an event's `id` is the id field of that event (undefined when it
 * had none), and a comment's text drops one leading space.
 */

/**
 * @typedef {{ id: string | undefined, event: string | undefined, data: string }} SseEvent
 * @typedef {{
 *   onEvent: (e: SseEvent) => void,
 *   onComment?: (text: string) => void,
 *   onRetry?: (ms: number) => void,
 * }} SseHandlers
 */

const LF = 10;
const SPACE = 32;

/** @param {SseHandlers} on */
export function createSseParser(on) {
  /** The start of a line whose end has not arrived yet. */
  let pending = "";
  let data = "";
  let dataLines = 0;
  /** @type {string | undefined} */
  let id;
  /** @type {string | undefined} */
  let event;

  function dispatch() {
    if (dataLines > 0) on.onEvent({ id, event, data });
    id = undefined;
    event = undefined;
    data = "";
    dataLines = 0;
  }

  /**
   * One line: `text` from `start` to `end` (exclusive), without its line ending.
   * @param {string} text
   * @param {number} start
   * @param {number} end
   */
  function line(text, start, end) {
    if (start === end) return dispatch();
    if (text.charCodeAt(start) === 58 /* : */) {
      on.onComment?.(text.slice(text.charCodeAt(start + 1) === SPACE ? start + 2 : start + 1, end));
      return;
    }
    const colon = text.indexOf(":", start);
    let field, value;
    if (colon === -1 || colon >= end) {
      field = text.slice(start, end);
      value = "";
    } else {
      field = text.slice(start, colon);
      value = text.slice(text.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1, end);
    }
    switch (field) {
      case "data":
        data = dataLines === 0 ? value : `${data}\n${value}`;
        dataLines++;
        break;
      case "event":
        event = value || undefined;
        break;
      case "id":
        if (!value.includes("\0")) id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) on.onRetry?.(parseInt(value, 10));
        break;
        // Any other field is ignored, as the standard says.
    }
  }

  return {
    /** @param {string} chunk decoded text, cut anywhere */
    feed(chunk) {
      const text = pending === "" ? chunk : pending + chunk;
      let at = 0;
      let lf = text.indexOf("\n");
      let cr = text.indexOf("\r");
      for (;;) {
        if (lf !== -1 && lf < at) lf = text.indexOf("\n", at);
        if (cr !== -1 && cr < at) cr = text.indexOf("\r", at);
        let end, next;
        if (cr !== -1 && (lf === -1 || cr < lf)) {
          // A CR last in the chunk may be the first half of a CRLF: wait for the next chunk.
          if (cr === text.length - 1) break;
          end = cr;
          next = text.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1;
        } else if (lf !== -1) {
          end = lf;
          next = lf + 1;
        } else break;
        line(text, at, end);
        at = next;
      }
      pending = at === 0 ? text : text.slice(at);
    },
    /** Forgets everything half-read (a new connection starts a new stream). */
    reset() {
      pending = "";
      id = undefined;
      event = undefined;
      data = "";
      dataLines = 0;
    },
  };
}
