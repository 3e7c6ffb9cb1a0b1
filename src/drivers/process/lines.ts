/**
 * Reading a harness's output: stdout as complete `\n` lines (one trailing `\r` dropped, invalid
 * UTF-8 replaced, a fragment with no newline at EOF dropped), stderr as a bounded tail used only
 * for messages and exit classification.
 */

const NL = 0x0a;
const CR = 0x0d;

/** Complete lines of a byte stream. A final fragment without a newline is dropped. */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let pending: Uint8Array = new Uint8Array(0);
  for await (const chunk of stream) {
    let buf = pending.length ? concat(pending, chunk) : chunk;
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      if (buf[i] !== NL) continue;
      let end = i;
      if (end > start && buf[end - 1] === CR) end--;
      yield decoder.decode(buf.subarray(start, end));
      start = i + 1;
    }
    buf = buf.subarray(start);
    pending = buf.length ? buf.slice() : new Uint8Array(0);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Keeps the last `limit` bytes written to it. */
export class ByteTail {
  #chunks: Uint8Array[] = [];
  #size = 0;
  constructor(readonly limit = 4096) {}

  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk.slice());
    this.#size += chunk.length;
    while (this.#size - this.#chunks[0].length >= this.limit) {
      this.#size -= this.#chunks.shift()!.length;
    }
  }

  text(): string {
    let all: Uint8Array = new Uint8Array(0);
    for (const c of this.#chunks) all = concat(all, c);
    if (all.length > this.limit) all = all.subarray(all.length - this.limit);
    return new TextDecoder("utf-8", { fatal: false }).decode(all);
  }

  /** Drains a stream into the tail; resolves at EOF. */
  async drain(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) this.push(chunk);
    } catch {
      // The stream errors when the process is killed; the tail keeps what it had.
    }
  }
}
