/**
 * The capsule's answers an edge forwards (SendMessage's Task, a SendStreamingMessage stream)
 * name the capsule's door in their published files' `url` parts; a client that came through the
 * edge gets them naming the edge instead (docs/protocol.md "Files and data"), as the Tasks the edge
 * answers itself do (session_facts.ts `filesAt`). The bytes are rewritten as they pass, never
 * parsed: `from` (the door's `<door>/files/` as JSON writes it) becomes `to`, wherever a chunk
 * boundary falls.
 *
 * No byte is held longer than it must be: only a chunk's last bytes that could begin `from` wait
 * for the next chunk, and an SSE event ends in a blank line, which cannot begin a URL — so every
 * event is passed on whole as soon as it arrived, never held back until the next one.
 */
const enc = new TextEncoder();

/** The index of `pattern` in `hay` at or after `from`, or -1. */
function find(hay: Uint8Array, pattern: Uint8Array, from: number): number {
  const first = pattern[0];
  const last = hay.length - pattern.length;
  for (let i = hay.indexOf(first, from); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < pattern.length && hay[i + j] === pattern[j]) j++;
    if (j === pattern.length) return i;
  }
  return -1;
}

/** How many of `hay`'s last bytes are a proper prefix of `pattern` (they may continue it). */
function pendingPrefix(hay: Uint8Array, pattern: Uint8Array): number {
  const most = Math.min(pattern.length - 1, hay.length);
  for (let n = most; n > 0; n--) {
    let j = 0;
    const at = hay.length - n;
    while (j < n && hay[at + j] === pattern[j]) j++;
    if (j === n) return n;
  }
  return 0;
}

/** The rewrite as a plain object: each chunk in, the bytes that may go out now. */
export class Rebaser {
  readonly #pattern: Uint8Array;
  readonly #replacement: Uint8Array;
  #held = new Uint8Array(0);

  constructor(from: string, to: string) {
    this.#pattern = enc.encode(from);
    this.#replacement = enc.encode(to);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    const pattern = this.#pattern;
    let hay = chunk;
    if (this.#held.length > 0) {
      hay = new Uint8Array(this.#held.length + chunk.length);
      hay.set(this.#held);
      hay.set(chunk, this.#held.length);
    }
    let at = 0;
    for (let i = find(hay, pattern, 0); i !== -1; i = find(hay, pattern, at)) {
      if (i > at) out.push(hay.subarray(at, i));
      out.push(this.#replacement);
      at = i + pattern.length;
    }
    const rest = hay.subarray(at);
    const keep = pendingPrefix(rest, pattern);
    if (rest.length > keep) out.push(rest.subarray(0, rest.length - keep));
    this.#held = rest.slice(rest.length - keep);
    return out;
  }

  end(): Uint8Array[] {
    const held = this.#held;
    this.#held = new Uint8Array(0);
    return held.length > 0 ? [held] : [];
  }
}

export function rebaseStream(from: string, to: string): TransformStream<Uint8Array, Uint8Array> {
  const r = new Rebaser(from, to);
  return new TransformStream({
    transform(chunk, out) {
      for (const b of r.push(chunk)) out.enqueue(b);
    },
    flush(out) {
      for (const b of r.end()) out.enqueue(b);
    },
  });
}
