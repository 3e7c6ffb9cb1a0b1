/**
 * Numbered events framed for the wire (docs/protocol.md "Event form"), shared by every connection
 * with the same envelope: `id: N\n`, `data: {"jsonrpc":"2.0","id":<request id>,"result":`, the
 * event's StreamResponse (serialized once, by the log), `}\n\n`. The HTTP+JSON binding carries the
 * StreamResponse bare (A2A v1.0 §11.7): its connections pass `null` for the request id and their
 * wire writes `data: `, the event, `\n\n`.
 *
 * Connections that echo the same request id with the same activation share one Wire, so an
 * event is framed once for all of them however many there are. Frames are written back to back
 * into blocks, in the order connections first ask for them (which is event order), so a
 * connection that writes a run of consecutive events hands the socket one subarray and copies
 * nothing.
 */
import { envelopeHead } from "../a2a/envelope.ts";
import type { EventLog, LogEntry } from "./log.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * How a wire's connections see the events marked `files`: an edge's connections get published
 * files' urls naming the edge (src/edge/session_facts.ts `filesAt`). `key` tells wires apart.
 */
export interface WireRebase {
  key: string;
  rewrite(json: string): string;
}
/** The end of a JSON-RPC event: the envelope's `}` and the blank line. */
export const TAIL = enc.encode("}\n\n");
/** The end of a bare (HTTP+JSON) event: the blank line. */
const BARE_TAIL = enc.encode("\n\n");
const BARE_HEAD = enc.encode("data: ");

/** A JSON-RPC request id, or null: the HTTP+JSON binding, whose events wear no envelope. */
export type EnvelopeId = string | number | null;

/** One event's `data:` line(s) around an already serialized StreamResponse. */
export function frameOf(requestId: EnvelopeId, body: string): string {
  return requestId === null
    ? `data: ${body}\n\n`
    : `data: ${envelopeHead(requestId, "result")}${body}}\n\n`;
}

/**
 * Frames remembered per wire, by id. A subscription only ever holds the newest 128 events it
 * accepts, so every connection of a wire asks for frames among the newest of them; a frame asked
 * for after it was forgotten is simply framed again.
 */
const RECENT = 256;
/** Blocks start small (a quiet wire holds little) and double up to this size. */
const MIN_BLOCK = 1024;
const MAX_BLOCK = 64 * 1024;
/** Parts of a chunk smaller than this are copied together rather than enqueued alone. */
const COPY_BELOW = 4096;
/** A frame this large gets a buffer of its own rather than a block's tail. */
const OWN_BUFFER = 16 * 1024;

export class Wire {
  /** `data: {"jsonrpc":"2.0","id":<id>,"result":`, or `data: ` bare. */
  readonly head: Uint8Array;
  /** `}\n\n`, or `\n\n` bare. */
  readonly tail: Uint8Array;
  /** Connections using this wire (it is dropped at zero). */
  refs = 0;
  // The ring of remembered frames, by slot (id % RECENT): which event, in which buffer, where.
  // Offsets rather than a subarray per frame: a connection's write adds runs of them to its
  // chunk without allocating anything per event.
  #ids: Float64Array | null = null;
  #bufs: ArrayBuffer[] = [];
  #starts: Uint32Array | null = null;
  #lens: Uint32Array | null = null;
  #block: Uint8Array | null = null;
  #used = 0;
  #nextBlock = MIN_BLOCK;

  constructor(
    readonly key: string,
    requestId: EnvelopeId,
    readonly activated: boolean,
    /** Rewrites an event marked `files` (LogEntry) for this wire's connections (an edge's). */
    readonly rebase?: WireRebase,
  ) {
    this.head = requestId === null
      ? BARE_HEAD
      : enc.encode(`data: ${envelopeHead(requestId, "result")}`);
    this.tail = requestId === null ? BARE_TAIL : TAIL;
  }

  /**
   * The event's bytes on this wire, or null when its connections do not see it (plain + murmur).
   */
  frame(e: LogEntry): Uint8Array | null {
    const slot = this.#slot(e);
    if (slot < 0) return null;
    return new Uint8Array(this.#bufs[slot], this.#starts![slot], this.#lens![slot]);
  }

  /** Adds the event's bytes to `out`; false when its connections do not see it. */
  into(e: LogEntry, out: Chunk): boolean {
    const slot = this.#slot(e);
    if (slot < 0) return false;
    out.span(this.#bufs[slot], this.#starts![slot], this.#lens![slot]);
    return true;
  }

  /** The ring slot holding the event's frame, framing it first if needed; -1: not on this wire. */
  #slot(e: LogEntry): number {
    let body = this.activated ? e.activated : e.plain;
    if (!body) return -1;
    const slot = e.id % RECENT;
    if (this.#ids === null) {
      this.#ids = new Float64Array(RECENT);
      this.#starts = new Uint32Array(RECENT);
      this.#lens = new Uint32Array(RECENT);
    } else if (this.#ids[slot] === e.id) return slot;
    if (e.files && this.rebase) body = enc.encode(this.rebase.rewrite(dec.decode(body)));
    const n = e.idLine.length + this.head.length + body.length + this.tail.length;
    let block: Uint8Array;
    let at: number;
    if (n > OWN_BUFFER) {
      block = new Uint8Array(n);
      at = 0;
    } else {
      if (this.#block === null || this.#used + n > this.#block.length) {
        // A block holds at least the frame that opens it: a frame under OWN_BUFFER may still be
        // larger than the next block while blocks are small (a 7 KiB tool output on a
        // wire whose next block was 4 KiB was written past its end).
        this.#block = new Uint8Array(Math.max(this.#nextBlock, n));
        this.#nextBlock = Math.min(MAX_BLOCK, this.#nextBlock * 2);
        this.#used = 0;
      }
      block = this.#block;
      at = this.#used;
      this.#used += n;
    }
    const start = at;
    block.set(e.idLine, at);
    at += e.idLine.length;
    block.set(this.head, at);
    at += this.head.length;
    block.set(body, at);
    block.set(this.tail, at + body.length);
    this.#ids[slot] = e.id;
    this.#bufs[slot] = block.buffer as ArrayBuffer;
    this.#starts![slot] = start;
    this.#lens![slot] = n;
    return slot;
  }
}

const wires = new WeakMap<EventLog, Map<string, Wire>>();

/**
 * The wire for connections of `log` echoing `requestId` (null: bare HTTP+JSON events); release it
 * when the connection ends.
 */
export function acquireWire(
  log: EventLog,
  requestId: EnvelopeId,
  activated: boolean,
  rebase?: WireRebase,
): Wire {
  let byKey = wires.get(log);
  if (!byKey) wires.set(log, byKey = new Map());
  const key = (activated ? "a" : "p") + JSON.stringify(requestId) +
    (rebase ? ` ${rebase.key}` : "");
  let w = byKey.get(key);
  if (!w) byKey.set(key, w = new Wire(key, requestId, activated, rebase));
  w.refs++;
  return w;
}

export function releaseWire(log: EventLog, w: Wire): void {
  if (--w.refs > 0) return;
  const byKey = wires.get(log);
  if (byKey?.get(w.key) === w) byKey.delete(w.key);
}

/**
 * Collects what one write hands the socket: runs of frames that lie back to back in a block
 * become one subarray; small loose bytes are copied together. `take()` empties it.
 */
export class Chunk {
  #parts: Uint8Array[] = [];
  #size = 0;
  #buf: ArrayBufferLike | null = null;
  #start = 0;
  #end = 0;

  get empty(): boolean {
    return this.#size === 0;
  }

  /** Bytes collected so far. */
  get size(): number {
    return this.#size;
  }

  /** A frame that may continue the current run. */
  frame(f: Uint8Array): void {
    this.span(f.buffer, f.byteOffset, f.byteLength);
  }

  /** Bytes `start … start + len` of `buf`, continuing the current run when they follow it. */
  span(buf: ArrayBufferLike, start: number, len: number): void {
    this.#size += len;
    if (buf === this.#buf && start === this.#end) {
      this.#end += len;
      return;
    }
    this.#endRun();
    this.#buf = buf;
    this.#start = start;
    this.#end = start + len;
  }

  /** Bytes of their own (an unnumbered event, a heartbeat). */
  bytes(b: Uint8Array): void {
    this.#endRun();
    this.#parts.push(b);
    this.#size += b.byteLength;
  }

  /**
   * What to enqueue, in order: runs of at least `COPY_BELOW` bytes as they are, smaller
   * neighbours copied together (a copy costs less than a chunk for so few bytes).
   */
  take(): Uint8Array[] {
    this.#endRun();
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    if (parts.length === 1) return parts;
    const out: Uint8Array[] = [];
    let i = 0;
    while (i < parts.length) {
      if (parts[i].byteLength >= COPY_BELOW) {
        out.push(parts[i++]);
        continue;
      }
      let j = i, n = 0;
      while (j < parts.length && parts[j].byteLength < COPY_BELOW) n += parts[j++].byteLength;
      if (j - i === 1) out.push(parts[i]);
      else {
        const b = new Uint8Array(n);
        let at = 0;
        for (let k = i; k < j; k++) {
          b.set(parts[k], at);
          at += parts[k].byteLength;
        }
        out.push(b);
      }
      i = j;
    }
    return out;
  }

  #endRun(): void {
    if (this.#buf === null) return;
    this.#parts.push(new Uint8Array(this.#buf, this.#start, this.#end - this.#start));
    this.#buf = null;
  }
}
