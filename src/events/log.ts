/**
 * The session's event log: every numbered event passes here once. It numbers events (one
 * sequence per session, from 1), keeps the last 512 in a replay ring, and fans out to
 * subscriptions. Each event's StreamResponse is serialized and encoded once, when appended;
 * connections only add their own envelope around the shared bytes.
 */
import { isTerminal, type TaskState } from "../a2a/types.ts";
import { Subscription } from "./subscription.ts";

export const REPLAY_CAPACITY = 512;

const enc = new TextEncoder();
/** Encoded events share blocks of this size (see `#encode`)… */
const ENCODE_BLOCK = 64 * 1024;
/** …unless one could take more than this, which gets a buffer of its own. */
const ENCODE_OWN = 16 * 1024;

/** What the log needs to know about an event to route and frame it. */
export interface EventInput {
  taskId: string;
  contextId: string;
  /** A standard A2A event (statusUpdate / artifactUpdate): plain connections see it. */
  standard: boolean;
  /** The StreamResponse for plain connections (standard events only). */
  plain?: unknown;
  /** The StreamResponse for activated connections (with murmur metadata)… */
  activated?: unknown;
  /** …or its JSON, already serialized (a frame's carrier, src/events/emit.ts `frameInput`). */
  activatedJson?: string;
  /** The task's state after this event (a carrier repeats it). */
  state: TaskState;
  /** A statusUpdate (not a carrier, not an artifactUpdate): it can end a task stream. */
  isStatus: boolean;
}

export interface LogEntry {
  readonly id: number;
  readonly taskId: string;
  readonly contextId: string;
  readonly standard: boolean;
  readonly state: TaskState;
  /** A terminal statusUpdate: ends a task stream. */
  readonly terminal: boolean;
  /** A TASK_STATE_INPUT_REQUIRED statusUpdate: ends a live SendStreamingMessage stream. */
  readonly inputRequired: boolean;
  /** `id: N\n` */
  readonly idLine: Uint8Array;
  /** The encoded StreamResponse JSON for plain connections (null: not for them). */
  readonly plain: Uint8Array | null;
  /** The encoded StreamResponse JSON for activated connections. */
  readonly activated: Uint8Array;
  /**
   * A mirrored event naming its capsule's published files by url (src/edge/mirror.ts): a wire
   * with a `rebase` (wire.ts) writes it naming the edge instead.
   */
  readonly files?: boolean;
}

export interface Replay {
  /** Set when events after the cursor were evicted or the cursor was never issued. */
  gap: number | null;
  entries: LogEntry[];
}

/**
 * A numbered event as another process wrote it (src/edge/mirror.ts reads them from Redis): its id
 * and what the log would have made of its `EventInput`, the JSON already serialized.
 */
export interface MirroredEvent {
  id: number;
  taskId: string;
  contextId: string;
  standard: boolean;
  state: TaskState;
  terminal: boolean;
  inputRequired: boolean;
  activated: string;
  /** The plain form when it differs from the activated one; null: the same bytes. */
  plain: string | null;
  /** It names the capsule's published files by url (LogEntry `files`). */
  files?: boolean;
}

export class EventLog {
  #ring: (LogEntry | undefined)[] = new Array(REPLAY_CAPACITY);
  #count = 0; // events ever appended; the last id issued
  /** The oldest id the ring can hold: 1, or where a mirror's events start again after a hole. */
  #base = 1;
  #subs = new Set<Subscription>();
  #closed = false;
  #block = new Uint8Array(0);
  #at = 0;
  /** Long polls waiting for the next event (`waitAfter`). */
  #waiters = new Set<() => void>();

  /** The id the next event will take. */
  get nextId(): number {
    return this.#count + 1;
  }

  get lastId(): number {
    return this.#count;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Live subscriptions (exposed for leak checks). */
  get subscriptionCount(): number {
    return this.#subs.size;
  }

  /**
   * Told the live count each time a subscription opens or closes: the debug line behind
   * `MURMUR_DEBUG_SUBSCRIPTIONS` (a leak shows as a count that does not come back down).
   */
  onSubscriptionCount: ((count: number) => void) | null = null;

  append(input: EventInput): LogEntry {
    if (this.#closed) throw new Error("event log is closed");
    const id = ++this.#count;
    const activated = this.#encode(input.activatedJson ?? JSON.stringify(input.activated));
    const plain = input.standard
      ? (input.plain === undefined || input.plain === input.activated
        ? activated
        : this.#encode(JSON.stringify(input.plain)))
      : null;
    const entry: LogEntry = {
      id,
      taskId: input.taskId,
      contextId: input.contextId,
      standard: input.standard,
      state: input.state,
      terminal: input.isStatus && isTerminal(input.state),
      inputRequired: input.isStatus && input.state === "TASK_STATE_INPUT_REQUIRED",
      idLine: this.#idLine(id),
      plain,
      activated,
    };
    this.#ring[(id - 1) % REPLAY_CAPACITY] = entry;
    for (const sub of this.#subs) sub.offer(entry);
    if (this.#waiters.size > 0) { for (const wake of [...this.#waiters]) wake(); }
    return entry;
  }

  /**
   * A mirror's append (src/edge/mirror.ts): the event keeps the id its capsule gave it. An id at
   * or below the last one is a duplicate and is dropped (returns null). An id more than one above
   * the last leaves a hole the mirror never saw: the ring starts again at it, so a replay from
   * before the hole answers a `gap` (docs/protocol.md "Replay"), and every live subscription is
   * told it lost the events in between (`lagged`), as a connection that fell behind would be.
   */
  appendMirrored(m: MirroredEvent): LogEntry | null {
    if (this.#closed) throw new Error("event log is closed");
    if (m.id <= this.#count) return null;
    if (m.id > this.#count + 1) {
      const lost = this.#count === 0 ? 0 : m.id - this.#count - 1;
      this.#base = m.id;
      if (lost > 0) { for (const sub of this.#subs) sub.lose(lost); }
    }
    this.#count = m.id;
    const activated = this.#encode(m.activated);
    const entry: LogEntry = {
      id: m.id,
      taskId: m.taskId,
      contextId: m.contextId,
      standard: m.standard,
      state: m.state,
      terminal: m.terminal,
      inputRequired: m.inputRequired,
      idLine: this.#idLine(m.id),
      plain: m.standard ? (m.plain === null ? activated : this.#encode(m.plain)) : null,
      activated,
      ...(m.files ? { files: true } : {}),
    };
    this.#ring[(m.id - 1) % REPLAY_CAPACITY] = entry;
    for (const sub of this.#subs) sub.offer(entry);
    if (this.#waiters.size > 0) { for (const wake of [...this.#waiters]) wake(); }
    return entry;
  }

  /**
   * UTF-8 into a shared block rather than a buffer per string: `TextEncoder.encode` allocates
   * a fresh ArrayBuffer through the runtime each time (about 3 µs for an event here, 1.4 µs for
   * an id line), `encodeInto` a block takes a tenth of that. A block lives while any entry still
   * in the ring or a queue points into it.
   */
  #encode(s: string): Uint8Array {
    const most = s.length * 3;
    if (most > ENCODE_OWN) return enc.encode(s);
    if (this.#block.length - this.#at < most) {
      this.#block = new Uint8Array(ENCODE_BLOCK);
      this.#at = 0;
    }
    const { written } = enc.encodeInto(s, this.#block.subarray(this.#at));
    const out = this.#block.subarray(this.#at, this.#at + written);
    this.#at += written;
    return out;
  }

  /** `id: N\n`, written byte by byte (ASCII): cheaper than a call into the encoder. */
  #idLine(id: number): Uint8Array {
    const digits = String(id);
    const n = digits.length + 5;
    if (this.#block.length - this.#at < n) {
      this.#block = new Uint8Array(ENCODE_BLOCK);
      this.#at = 0;
    }
    const b = this.#block;
    let at = this.#at;
    b[at++] = 0x69; // i
    b[at++] = 0x64; // d
    b[at++] = 0x3a; // :
    b[at++] = 0x20; // space
    for (let i = 0; i < digits.length; i++) b[at++] = digits.charCodeAt(i);
    b[at++] = 0x0a; // \n
    const out = b.subarray(this.#at, at);
    this.#at = at;
    return out;
  }

  /** The oldest id still in the replay ring (0 when empty). */
  get firstAvailableId(): number {
    if (this.#count === 0) return 0;
    return Math.max(this.#base, this.#count - REPLAY_CAPACITY + 1);
  }

  /**
   * docs/protocol.md "Replay": every buffered event after `after`, with a gap when events after it
   * were evicted or `after` was never issued.
   */
  replay(after: number): Replay {
    if (this.#count === 0) return { gap: null, entries: [] };
    const first = this.firstAvailableId;
    let gap: number | null = null;
    let from = after + 1;
    if (after >= this.nextId || after < 0) {
      gap = first;
      from = first;
    } else if (first > after + 1) {
      gap = first;
      from = first;
    }
    const entries: LogEntry[] = [];
    for (let id = from; id <= this.#count; id++) {
      entries.push(this.#ring[(id - 1) % REPLAY_CAPACITY]!);
    }
    return { gap, entries };
  }

  /**
   * A new subscription receives every event appended from now on that `filter` accepts.
   * Subscribe before reading a snapshot, so no event between the two is lost.
   */
  subscribe(filter?: (e: LogEntry) => boolean, capacity?: number): Subscription {
    const sub = new Subscription(filter, capacity, () => {
      if (this.#subs.delete(sub)) this.onSubscriptionCount?.(this.#subs.size);
    });
    if (this.#closed) sub.end();
    else {
      this.#subs.add(sub);
      this.onSubscriptionCount?.(this.#subs.size);
    }
    return sub;
  }

  /**
   * Resolves once an event after `id` has been appended, the log has closed, or `ms` have passed:
   * what a long poll (src/door/poll.ts) waits on when it has nothing to answer yet.
   */
  waitAfter(id: number, ms: number): Promise<void> {
    if (this.#count > id || this.#closed || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#waiters.add(wake);
    });
  }

  /**
   * The session's status when its stream closed (`ok`, `failed`, …), when the closer knew it: a
   * watch connection says it as its last bytes (view.ts), and the cluster's end marker carries it
   * to the edges (src/cluster/publisher.ts), so the live page can tell an ended session apart from
   * a lost connection.
   */
  get ending(): string | undefined {
    return this.#ending;
  }
  #ending: string | undefined;

  /** The session's event stream ends: every subscription is told, after what it holds. */
  close(ending?: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ending = ending;
    for (const sub of this.#subs) sub.end();
    for (const wake of [...this.#waiters]) wake();
  }
}
