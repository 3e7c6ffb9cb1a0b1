/**
 * A stream view: one SSE connection = a subscription + which events it sees + how each is framed
 * (docs/protocol.md "Event ids", "Replay", "Slow readers", "Heartbeat"). Numbered events are framed
 * once per envelope by a shared `Wire` (wire.ts), so a connection writes runs of them without
 * copying; only its unnumbered events (the opening task, connection-ack, gap, lagged, recovery) and
 * heartbeats are its own bytes.
 *
 * Writing is push-driven and batched: the subscription tells the view once per macrotask that
 * events are queued (or at once when its queue nears 128), and the view moves everything queued
 * into its write buffer as one chunk. Nothing waits per event or per connection: no promise, no
 * timer of its own (heartbeats come from one shared wheel, heartbeat.ts).
 *
 * A connection's faults are its own: every call into a view (the subscription's, the heartbeat
 * wheel's, the socket side's) runs under `#guard`, so an error while framing or writing for one
 * connection closes that connection, with one stderr line naming it and the error, and never
 * reaches the task that appended the event, the trace, the other connections or the session.
 */
import type { StreamResponse, TaskState } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import { newId } from "../ids.ts";
import type { ConnectionFrame } from "./frames.ts";
import { STREAM_URI } from "./frames.ts";
import { type Beating, type HeartbeatWheel, heartbeatWheel } from "./heartbeat.ts";
import type { LogEntry } from "./log.ts";
import type { Subscription, SubscriptionListener } from "./subscription.ts";
import { ConnectionFault, METHOD, type ViewOptions } from "./view_options.ts";
import { acquireWire, Chunk, releaseWire, type Wire } from "./wire.ts";

const enc = new TextEncoder();
const HEARTBEAT = enc.encode(":heartbeat\n\n");

/**
 * Bytes a connection may have handed to the HTTP layer but not yet written to its socket. The
 * view moves its subscription's queue into this buffer as events arrive (batched per macrotask,
 * and synchronously before the queue of 128 could overflow), so a reader that keeps up never
 * depends on being scheduled before the next 128 events; a reader that stops reading fills it,
 * then its queue of 128, and then lags.
 */
export const WRITE_BUFFER_BYTES = 256 * 1024;
const WRITE_BUFFER: QueuingStrategy<Uint8Array> = {
  highWaterMark: WRITE_BUFFER_BYTES,
  size: (chunk) => chunk.byteLength,
};

/** Numbers connections for stderr lines (two clients may send the same request id). */
let opened = 0;

export { ConnectionFault } from "./view_options.ts";
export type { TaskProbe, ViewKind, ViewOptions } from "./view_options.ts";

/** Builds the SSE body for one connection. Call synchronously right after the task snapshot. */
export function openView(o: ViewOptions): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(new View(o), WRITE_BUFFER);
}

/** The connection: the ReadableStream's underlying source, the subscription's listener. */
class View implements UnderlyingDefaultSource<Uint8Array>, SubscriptionListener, Beating {
  hbDue = 0;
  hbIndex = -1;
  readonly #n = ++opened;
  readonly #o: ViewOptions;
  readonly #sub: Subscription;
  readonly #wire: Wire;
  #wheel: HeartbeatWheel | null = null;
  #c: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** The opening events and replay, written first. */
  #prelude: Uint8Array | null;
  /** Taken from the queue, not yet handed to the socket side (see `#write`). */
  readonly #out = new Chunk();
  #lastId = 0;
  #lastState: TaskState | null = null;
  #done = false;
  #closed = false;
  #writing = false;
  /** A write found the buffer full: the next pull (room again) writes. */
  #blocked = false;
  #lostAny = false;
  #heartbeatDue = false;
  #recovery: StreamResponse[] | null = null;
  #recoveryEnds = false;
  #faulted = false;

  constructor(o: ViewOptions) {
    this.#o = o;
    const taskId = o.taskId;
    this.#sub = o.log.subscribe(
      taskId === undefined
        ? undefined
        : o.activated
        ? (e) => e.taskId === taskId
        : (e) => e.taskId === taskId && e.standard,
    );
    this.#wire = acquireWire(o.log, o.requestId, o.activated, o.rebase);
    try {
      this.#prelude = this.#opening();
    } catch (e) {
      // No stream yet: the request is answered with an error (server.ts), and nothing is held.
      this.#cleanup();
      throw e;
    }
    // A task stream of a task already ended (a replay held its end) has nothing live to wait for.
    if (!this.#done && taskId !== undefined && o.opening && "task" in o.opening) {
      if (isTerminal(o.opening.task.status.state)) this.#done = true;
    }
  }

  // --- UnderlyingSource -------------------------------------------------------------------------

  start(c: ReadableStreamDefaultController<Uint8Array>): void {
    this.#c = c;
    this.#guard(() => {
      const prelude = this.#prelude;
      this.#prelude = null;
      if (prelude) c.enqueue(prelude);
      if (this.#done) return this.#finish();
      this.#wheel = heartbeatWheel(this.#o.heartbeatMs);
      this.#wheel.add(this);
      this.#sub.listen(this);
    });
  }

  pull(): void {
    // Called whenever the socket side wants more; only a write that found the buffer full is
    // waiting for that. New events come through `ready()`, batched.
    if (this.#blocked && !this.#writing) this.#guard(() => this.#write(true));
  }

  cancel(): void {
    this.#cleanup();
  }

  // --- SubscriptionListener / Beating -----------------------------------------------------------

  ready(urgent: boolean): void {
    // An urgent call runs on the stack of the task that appended the event: see `#guard`.
    this.#guard(() => this.#write(!urgent));
  }

  beat(): void {
    this.#guard(() => {
      this.#heartbeatDue = true;
      // Lagged task streams check their task at each heartbeat (docs/protocol.md "Slow readers":
      // "Events a connection misses").
      if (this.#lostAny && this.#o.taskId !== undefined) this.#recoverLagged();
      this.#write(true);
    });
  }

  // --- faults
  // -------------------------------------------------------------------------------------

  /**
   * Runs one call into this connection. Whatever it throws is this connection's fault alone: the
   * connection is closed (the client reads a broken stream and may resume with Last-Event-ID),
   * stderr gets one line naming it and the error, and the caller — the task appending an event,
   * the shared macrotask pass, the heartbeat wheel — goes on as if the call had returned.
   */
  #guard(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.#fault(e);
    }
  }

  #fault(e: unknown): void {
    if (this.#faulted) return;
    this.#faulted = true;
    const o = this.#o;
    const task = o.taskId === undefined ? "" : `, task ${o.taskId}`;
    const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const line = `stream: connection ${this.#n} (${METHOD[o.kind]}, ${
      o.requestId === null ? "HTTP+JSON" : `request id ${JSON.stringify(o.requestId)}`
    }${task}) closed after a fault in its own write: ${what.replace(/\s+/g, " ")}`;
    o.warn(line);
    this.#cleanup();
    try {
      this.#c?.error(new ConnectionFault(line, { cause: e }));
    } catch {
      // already closed
    }
  }

  // --- writing ----------------------------------------------------------------------------------

  /**
   * Moves what is queued into `#out`, as long as the write buffer has room. With `flush` (the
   * burst is over: once per macrotask, a heartbeat, room again), also hands `#out` to the socket
   * side: one chunk per burst, however many urgent takes it took to collect. The HTTP layer
   * accepts a chunk whole while less than 64 KiB wait in it, so one large chunk per macrotask
   * moves more bytes per turn of the event loop than several small ones.
   */
  #write(flush: boolean): void {
    const c = this.#c;
    if (c === null || this.#closed || this.#writing) return;
    const out = this.#out;
    const sub = this.#sub;
    // Room in the write buffer; an urgent take also counts what it already collected.
    const room = (c.desiredSize ?? 0) - (flush ? 0 : out.size);
    this.#blocked = room <= 0;
    if (this.#blocked && (!flush || out.empty)) return;
    this.#writing = true;
    try {
      // Until nothing is pending: a take stops at a mirror's hole (subscription.ts `#holes`).
      while (room > 0 && !this.#done && (sub.pending > 0 || sub.missed > 0)) {
        const { entries, missed } = sub.take();
        if (missed > 0) {
          this.#lostAny = true;
          if (!this.#o.quietLag) this.#o.warn(`SSE broadcast lagged by ${missed} events`);
          if (this.#o.activated) {
            out.bytes(this.#unnumbered(this.#connectionFrame({ frame: "lagged", missed })));
          }
        }
        for (const e of entries) {
          if (e.id <= this.#lastId) continue;
          if (this.#entry(e, out, true)) {
            this.#done = true;
            break;
          }
        }
      }
      if (!flush && !this.#done) return;
      if (room > 0 && !this.#done && this.#recovery !== null && this.#recovery.length) {
        for (const r of this.#recovery.splice(0)) out.bytes(this.#unnumbered(r));
        if (this.#recoveryEnds) this.#done = true;
      }
      if (room > 0 && this.#heartbeatDue) {
        this.#heartbeatDue = false;
        out.bytes(HEARTBEAT);
      }
      if (!out.empty) {
        try {
          for (const b of out.take()) c.enqueue(b);
        } catch {
          // The client is gone (the stream was canceled under us).
          return this.#cleanup();
        }
      }
      // The session's event stream ended (the capsule is exiting): flushed, now close.
      if (this.#done || (sub.ended && sub.pending === 0)) {
        if (!this.#done) this.#sayEnding(c);
        this.#finish();
      }
    } finally {
      this.#writing = false;
    }
  }

  /** Frames one numbered event into `out`; returns whether it ends the stream. */
  #entry(e: LogEntry, out: Chunk, live: boolean): boolean {
    if (!this.#wire.into(e, out)) return false;
    this.#lastId = e.id;
    this.#lastState = e.state;
    if (this.#o.taskId === undefined) return false;
    if (e.terminal) return true;
    return live && this.#o.kind === "send" && e.inputRequired;
  }

  /** The opening events, all decided now, before anything else can be appended. */
  #opening(): Uint8Array | null {
    const o = this.#o;
    // Everything here goes out as one chunk, copied once.
    const parts: Uint8Array[] = [];
    if (o.opening) {
      parts.push(this.#unnumbered(o.opening));
      const t = "task" in o.opening ? o.opening.task : undefined;
      if (t) this.#lastState = t.status.state;
    }
    if (o.kind === "watch") {
      parts.push(this.#unnumbered(this.#connectionFrame({
        frame: "connection-ack",
        role: "observer",
        conversationMode: o.conversationMode ?? "stateless",
      })));
    }
    const replayFrom = o.kind === "watch" ? (o.lastEventId ?? 0) : o.lastEventId;
    if (replayFrom !== undefined) {
      const replay = o.log.replay(replayFrom);
      if (replay.gap !== null && o.activated) {
        parts.push(this.#unnumbered(this.#connectionFrame({
          frame: "gap",
          firstAvailableId: replay.gap,
        })));
      }
      const framed = this.#replayed(replay.entries);
      if (framed) parts.push(framed);
    }
    return parts.length ? concat(parts) : null;
  }

  /**
   * The replayed events this connection sees, framed into one buffer: framed here rather than on
   * the shared wire (a replay is read once, by this connection), sized in a first pass and
   * written in a second, so 512 events are one allocation and four copies each, not a list of
   * 2,048 parts concatenated after.
   */
  #replayed(entries: LogEntry[]): Uint8Array | null {
    const o = this.#o;
    const { head, tail } = this.#wire;
    const taskId = o.taskId;
    let end = entries.length;
    let size = 0;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (taskId !== undefined && e.taskId !== taskId) continue;
      const body = o.activated ? e.activated : e.plain;
      if (!body) continue;
      size += e.idLine.length + head.length + body.length + tail.length;
      if (taskId !== undefined && e.terminal) {
        end = i + 1;
        this.#done = true;
        break;
      }
    }
    if (size === 0) return null;
    const out = new Uint8Array(size);
    let at = 0;
    for (let i = 0; i < end; i++) {
      const e = entries[i];
      if (taskId !== undefined && e.taskId !== taskId) continue;
      const body = o.activated ? e.activated : e.plain;
      if (!body) continue;
      out.set(e.idLine, at);
      at += e.idLine.length;
      out.set(head, at);
      at += head.length;
      out.set(body, at);
      at += body.length;
      out.set(tail, at);
      at += tail.length;
      this.#lastId = e.id;
      this.#lastState = e.state;
    }
    return out;
  }

  #unnumbered(resp: StreamResponse): Uint8Array {
    const { head, tail } = this.#wire;
    const body = enc.encode(JSON.stringify(resp));
    const out = new Uint8Array(head.length + body.length + tail.length);
    out.set(head, 0);
    out.set(body, head.length);
    out.set(tail, head.length + body.length);
    return out;
  }

  #connectionFrame(frame: ConnectionFrame): StreamResponse {
    const o = this.#o;
    if (o.taskId !== undefined) {
      // Task-stream gap / lagged: a statusUpdate repeating the state the connection last wrote.
      return {
        statusUpdate: {
          taskId: o.taskId,
          contextId: contextOf(o.opening),
          status: {
            state: this.#lastState ?? "TASK_STATE_WORKING",
            timestamp: new Date().toISOString(),
          },
          metadata: { [STREAM_URI]: frame },
        },
      };
    }
    return {
      message: {
        messageId: newId("msg"),
        role: "ROLE_AGENT",
        parts: [{ mediaType: "text/plain", text: frame.frame }],
        metadata: { [STREAM_URI]: frame },
      },
    };
  }

  #recoverLagged(): void {
    const probe = this.#o.probe;
    if (!probe || (this.#recovery !== null && this.#recovery.length)) return;
    const state = probe.state();
    if (isTerminal(state)) {
      this.#recovery = probe.ending();
      this.#recoveryEnds = true;
    } else if (state === "TASK_STATE_INPUT_REQUIRED" && this.#o.kind === "send") {
      this.#recovery = [probe.inputRequired()];
      this.#recoveryEnds = true;
    }
  }

  /**
   * A watch connection's last bytes when the session's stream closed with a known status: the
   * comment `:session-end status=<status>`, which every client skips (docs/protocol.md "Unknown
   * frames and keys"), and the live page reads to say the session ended rather than reconnect.
   */
  #sayEnding(c: ReadableStreamDefaultController<Uint8Array>): void {
    const ending = this.#o.log.ending;
    if (this.#o.kind !== "watch" || ending === undefined) return;
    try {
      c.enqueue(enc.encode(`:session-end status=${ending}\n\n`));
    } catch {
      // the client is gone
    }
  }

  #finish(): void {
    this.#cleanup();
    try {
      this.#c?.close();
    } catch {
      // already closed by a disconnect
    }
  }

  #cleanup(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wheel?.remove(this);
    this.#sub.close();
    releaseWire(this.#o.log, this.#wire);
  }
}

function contextOf(opening: StreamResponse | undefined): string {
  if (opening && "task" in opening) return opening.task.contextId;
  return "";
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
