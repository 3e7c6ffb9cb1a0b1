/**
 * Publishing a session to Redis (docs/edge.md): a subscriber of the session's event
 * log like any stream connection, with a bounded queue, that writes every numbered event into the
 * session's stream under its own id (`XADD <key> MAXLEN ~ 1024 <id>-0 …`), each task as GetTask
 * answers it into the tasks hash, and the door's address and cards into the meta hash, every key
 * with an expiry it refreshes. Nothing here is awaited by the session or the door: the log hands
 * the subscription its events and returns.
 *
 * Redis down: the connection's loss (client_types.ts `onLost`, told even when no command was out:
 * an idle session's Redis restarted empty must get its facts again) or the first failure is
 * reported once (stderr and the trace's `cluster_publish` line),
 * events wait in the queue (at most `PUBLISH_QUEUE` of them, the oldest dropped beyond that), and
 * the publisher reconnects with backoff. Back up, it republishes every fact, then what it missed:
 * from its queue, else from the log's replay ring; events neither still holds are a hole in the
 * stream, which edges serve as `gap` to a replay that spans it and `lagged` to live readers (the
 * same frames a capsule's own door writes for events a reader lost). An id Redis already holds is
 * refused by Redis itself (stream ids only grow), so a batch sent twice is harmless.
 *
 * Every reply is read, not only the events': a write Redis refused (a Cluster redirect that a
 * pipeline of mixed replies does not follow, a primary demoted to a read-only replica, an ACL)
 * was not made, and is an outage like a lost connection — reported, then every fact written again
 * after the resync. A fact (a task, a history message, the meta hash, the liveness key) counts as
 * written only once Redis has taken it: one refused in silence left a session's meta missing, so
 * unknown to every edge, until the next refresh, and a task's row stale until it changed again.
 */
import type { EventLog, LogEntry } from "../events/log.ts";
import type { Subscription } from "../events/subscription.ts";
import type { TaskRecord } from "../session/task_record.ts";
import { toA2A } from "../session/task_record.ts";
import {
  ALIVE_REFRESH_MS,
  ALIVE_TTL_MS,
  KEY_TTL_SECS,
  REFRESH_MS,
  sessionKeys,
  STREAM_MAXLEN,
} from "./keys.ts";
import {
  type Command,
  type RedisClient,
  RedisDown,
  RedisReplyError,
  type Reply,
} from "./client_types.ts";
import { closedId, entryFields, entryId } from "./stream_entry.ts";

/** The refusal of an XADD whose id the stream already holds (a write sent again): not a failure. */
const ALREADY_HELD = /equal or smaller/;

/** Events held for publishing while Redis does not take them. */
export const PUBLISH_QUEUE = 8192;
/** At most this many XADDs in one pipelined write. */
const BATCH = 512;
/**
 * How often the registry is looked at between events: a task that changes without an event (one
 * queued, SUBMITTED) reaches Redis within this.
 */
const TASK_SWEEP_MS = 1000;

export interface PublishedSession {
  id: string;
  log: EventLog;
  /** Every task a client can read (a resumed session: the old session's too). */
  registry: { listed(): TaskRecord[] };
}

export interface PublisherOptions {
  /** Owned by the publisher from here: closed by `stop`. */
  client: RedisClient;
  session: PublishedSession;
  /** The meta hash's fields (door, card, extendedCard, conversationMode, …): read at each sync. */
  facts(): Record<string, string>;
  /** An outage began (`down`) or ended (`up`, with the events that could not be published). */
  report(change: PublishChange): void;
}

export type PublishChange =
  | { state: "down"; error: string }
  | { state: "up"; lost: number };

export class Publisher {
  readonly #o: PublisherOptions;
  readonly #keys: ReturnType<typeof sessionKeys>;
  readonly #sub: Subscription;
  /** Taken from the subscription, not yet accepted by Redis. */
  #pending: LogEntry[] = [];
  /** The highest event id Redis holds from us. */
  #published = 0;
  #lostSinceDown = 0;
  #down = false;
  /** The connection was lost since the last sync (why), or null. */
  #lost: string | null = null;
  #stopping = false;
  /** `stop`'s deadline passed: nothing more is tried. */
  #stopped = false;
  #tasksSent = new Map<string, string>();
  /** Per task: history messages written (from 0); cleared on a reconnect, so all are again. */
  #historySent = new Map<string, number>();
  /** Per task: the history fields below this number are deleted (dropped by the task's limit). */
  #historyGone = new Map<string, number>();
  #lastRefresh = 0;
  #lastAlive = 0;
  /** The wait before the next reconnect after a failure; 100 ms again once a write succeeds. */
  #backoff = 100;
  #wake: (() => void) | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #done: Promise<void>;

  constructor(o: PublisherOptions) {
    this.#o = o;
    this.#keys = sessionKeys(o.session.id);
    this.#sub = o.session.log.subscribe(undefined, PUBLISH_QUEUE);
    this.#timer = setInterval(() => this.#nudge(), TASK_SWEEP_MS);
    o.client.onLost((why) => {
      this.#lost = why;
      this.#nudge();
    });
    this.#done = this.#run();
  }

  /** Events Redis holds from this session (for tests and the end line). */
  get published(): number {
    return this.#published;
  }

  /**
   * The session's stream has ended (its log is closed): publish what is left and the end marker,
   * waiting at most `ms` for a Redis that does not answer.
   */
  async stop(ms = 2000): Promise<void> {
    this.#stopping = true;
    this.#nudge();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#done, new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    // Past the deadline a failed write is not tried again.
    this.#stopped = true;
    this.#nudge();
    clearInterval(this.#timer);
    this.#sub.close();
    this.#o.client.close();
  }

  #nudge(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async #run(): Promise<void> {
    while (true) {
      try {
        // The client reconnects by itself (client.ts); this waits for it, or reports the outage.
        await this.#o.client.ready(2000);
        // A loss told before this sync is what the sync recovers from.
        this.#lost = null;
        await this.#sync();
        if (await this.#follow()) return;
      } catch (e) {
        if (!this.#down) {
          this.#down = true;
          this.#o.report({ state: "down", error: (e as Error).message });
        }
        // Stopping, a write that failed is tried again (the end marker, what is left) until
        // `stop`'s deadline.
        if (this.#stopped) return;
        this.#take();
        await this.#sleep(this.#backoff);
        this.#backoff = Math.min(this.#backoff * 2, 2000);
      }
    }
  }

  /**
   * A write went through: an outage is over. Said here, not at the resync, so a write Redis keeps
   * refusing is one outage backing off, not an outage and a recovery every few hundred ms.
   */
  #wrote(): void {
    this.#backoff = 100;
    if (!this.#down) return;
    this.#down = false;
    this.#o.report({ state: "up", lost: this.#lostSinceDown });
    this.#lostSinceDown = 0;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  /**
   * After a (re)connect: where the stream ends, and every fact written again. A stream that ends
   * below what was published (a replica promoted before it had the newest writes) is filled again
   * from the queue or the replay ring, as after an outage; an empty one (a Redis restarted with
   * nothing) is written on from here.
   */
  async #sync(): Promise<void> {
    const last = await this.#o.client.call(["XREVRANGE", this.#keys.events, "+", "-", "COUNT", 1]);
    if (Array.isArray(last) && Array.isArray(last[0])) {
      const top = Number(String(last[0][0]).split("-")[0]);
      if (Number.isSafeInteger(top)) this.#published = top;
    }
    this.#tasksSent.clear();
    this.#historySent.clear();
    this.#lastRefresh = 0;
    this.#lastAlive = 0;
  }

  /** Publishes as events come; returns true once the stream has ended and all is written. */
  async #follow(): Promise<boolean> {
    for (;;) {
      // Lost while idle or between writes: the outage is reported, and the facts written again.
      if (this.#lost !== null) throw new RedisDown(this.#lost);
      this.#take();
      await this.#publish();
      if (this.#sub.ended && this.#sub.pending === 0 && this.#pending.length === 0) {
        const [marker] = await this.#must([
          [
            "XADD",
            this.#keys.events,
            closedId(this.#published),
            "closed",
            "1",
            ...(this.#o.session.log.ending ? ["status", this.#o.session.log.ending] : []),
          ],
          ["PUBLISH", this.#keys.wake, closedId(this.#published)],
        ]);
        // Refused (not already there): written again after the resync, or edges never hear
        // the end.
        if (marker instanceof RedisReplyError && !ALREADY_HELD.test(marker.message)) throw marker;
        return true;
      }
      if (this.#stopping && this.#sub.pending === 0) {
        // Stopped while the log is still open (a launch that failed): nothing more will come.
        return true;
      }
      if (this.#sub.pending === 0 && !this.#sub.ended) {
        await Promise.race([
          this.#sub.wait(),
          new Promise<void>((r) => (this.#wake = r)),
        ]);
        this.#wake = null;
      }
    }
  }

  /** Moves the subscription's queue into `#pending`, keeping at most PUBLISH_QUEUE. */
  #take(): void {
    const { entries } = this.#sub.take();
    for (const e of entries) if (e.id > this.#published) this.#pending.push(e);
    if (this.#pending.length > PUBLISH_QUEUE) {
      this.#pending = this.#pending.slice(this.#pending.length - PUBLISH_QUEUE);
    }
  }

  async #publish(): Promise<void> {
    // What the queue lost: from the log's ring when it still holds it, else a hole.
    const first = this.#pending[0]?.id ?? this.#o.session.log.lastId + 1;
    if (first > this.#published + 1) {
      const fill = this.#o.session.log.replay(this.#published).entries.filter((e) =>
        e.id > this.#published && e.id < first
      );
      const from = fill[0]?.id ?? first;
      this.#lostSinceDown += from - this.#published - 1;
      this.#pending = fill.concat(this.#pending);
    }
    const { cmds: facts, commit } = this.#factCommands();
    let at = 0;
    do {
      const batch = this.#pending.slice(at, at + BATCH);
      const cmds = batch.map((e) => [
        "XADD",
        this.#keys.events,
        "MAXLEN",
        "~",
        STREAM_MAXLEN,
        entryId(e.id),
        ...entryFields(e),
      ]);
      // The wake tells the edges following the session to read on (src/edge/stream_reader.ts).
      const wake: Command[] = batch.length
        ? [["PUBLISH", this.#keys.wake, entryId(batch[batch.length - 1].id)]]
        : [];
      const replies = await this.#must(
        at === 0 ? [...cmds, ...facts, ...wake] : [...cmds, ...wake],
      );
      for (let i = 0; i < batch.length; i++) {
        const r = replies[i];
        // An id Redis already holds (a batch sent again after a lost reply) is refused: fine.
        if (r instanceof RedisReplyError && !ALREADY_HELD.test(r.message)) throw r;
      }
      if (batch.length) this.#published = batch[batch.length - 1].id;
      // The facts and the wake: one refused is a write not made (the resync writes every fact).
      const refused = replies.slice(batch.length).find((r) => r instanceof RedisReplyError);
      if (refused) throw refused;
      if (at === 0) commit();
      if (cmds.length || (at === 0 && facts.length)) this.#wrote();
      at += BATCH;
    } while (at < this.#pending.length);
    this.#pending = [];
  }

  /**
   * Tasks changed since they were last written, the meta hash and the keys' expiry when due; and
   * `commit`, which marks them written, called once Redis has taken every one of them.
   */
  #factCommands(): { cmds: Command[]; commit(): void } {
    const cmds: Command[] = [];
    const marks: (() => void)[] = [];
    const hset: string[] = [];
    const historySet: string[] = [];
    const historyDel: string[] = [];
    for (const t of this.#o.session.registry.listed()) {
      const h = t.history;
      const sig = `${t.state}|${t.changedAt}|${t.residue.length}|${
        t.response ? 1 : 0
      }|${h.total}|${t.published.length}`;
      if (this.#tasksSent.get(t.id) === sig) continue;
      // The task without its history, and the history's new messages alone (keys.ts): a
      // change of a long task costs what changed, not the whole conversation again.
      const history = { total: h.total, kept: h.size };
      hset.push(t.id, JSON.stringify({ changedAt: t.changedAt, task: toA2A(t, true, 0), history }));
      const sent = this.#historySent.get(t.id) ?? 0;
      for (let n = Math.max(sent, h.dropped); n < h.total; n++) {
        historySet.push(`${t.id}:${n}`, JSON.stringify(h.at(n)));
      }
      const gone = this.#historyGone.get(t.id) ?? 0;
      for (let n = gone; n < h.dropped; n++) historyDel.push(`${t.id}:${n}`);
      const { total, dropped } = h;
      marks.push(() => {
        this.#tasksSent.set(t.id, sig);
        this.#historySent.set(t.id, total);
        this.#historyGone.set(t.id, Math.max(gone, dropped));
      });
    }
    if (hset.length) cmds.push(["HSET", this.#keys.tasks, ...hset]);
    if (historySet.length) cmds.push(["HSET", this.#keys.history, ...historySet]);
    if (historyDel.length) cmds.push(["HDEL", this.#keys.history, ...historyDel]);
    const now = Date.now();
    if (now - this.#lastAlive >= ALIVE_REFRESH_MS - 500) {
      cmds.push(["SET", this.#keys.alive, "1", "PX", ALIVE_TTL_MS]);
      marks.push(() => (this.#lastAlive = now));
    }
    if (hset.length || now - this.#lastRefresh >= REFRESH_MS - 500) {
      if (now - this.#lastRefresh >= REFRESH_MS - 500) {
        const facts = Object.entries(this.#o.facts()).flat();
        if (facts.length) cmds.push(["HSET", this.#keys.meta, ...facts]);
        marks.push(() => (this.#lastRefresh = now));
      }
      for (const k of [this.#keys.events, this.#keys.tasks, this.#keys.meta, this.#keys.history]) {
        cmds.push(["EXPIRE", k, KEY_TTL_SECS]);
      }
    }
    return { cmds, commit: () => marks.forEach((m) => m()) };
  }

  #must(cmds: Command[]): Promise<(Reply | RedisReplyError)[]> {
    return this.#o.client.pipeline(cmds);
  }
}
