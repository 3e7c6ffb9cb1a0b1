/**
 * One reader for every session an edge follows (docs/edge.md "How an edge reads"): the capsule
 * publishes a wake (`PUBLISH mur:{<id>}:wake`, src/cluster/publisher.ts) after each write of
 * events, one subscriber connection takes the wakes of every followed session, and each wake
 * makes one non-blocking `XREAD` of that session on the shared command client. Not `XREAD
 * BLOCK`, which holds a connection per call and, on a Redis Cluster, cannot name keys of two
 * slots: the edge's connections stay two (four on a cluster: the client's per primary) however many
 * sessions it follows. A wake is a hint, never the data: a lost one (a subscriber reconnecting, a
 * failover) is covered by the sweep, which reads every followed session every `SWEEP_MS` and on
 * each reconnect, so an event waits at most that long and is never skipped (the stream is read
 * from the last id held).
 *
 * The sweep also judges whether each session's capsule still runs (liveness.ts: its liveness key
 * and whether its stream grew): one that stopped (killed, hung) has the session's streams end as
 * its own door's do when its process dies.
 */
import { type RedisClient, RedisDown } from "../cluster/client_types.ts";
import { sessionKeys, sessionOfWake } from "../cluster/keys.ts";
import { Liveness } from "./liveness.ts";

/** Every followed session is read this often even without a wake. */
export const SWEEP_MS = 2000;

/** A session the reader follows (src/edge/mirror.ts). */
export interface Followed {
  readonly sessionId: string;
  /** How far its stream has been read (the last event id held): grows only while it is written. */
  readonly progress: number;
  /** Reads what is new; true when there may be more right away (a full reply). */
  readOn(client: RedisClient): Promise<boolean>;
  /** Its capsule stopped: its liveness key lapsed, its stream still (liveness.ts). */
  lapsed(): void;
}

interface Entry {
  f: Followed;
  reading: boolean;
  again: boolean;
  live: Liveness;
}

export class StreamReader {
  readonly #client: RedisClient;
  readonly #warn: (line: string) => void;
  readonly #entries = new Map<string, Entry>();
  readonly #sub;
  readonly #timer: ReturnType<typeof setInterval>;
  #down = false;
  #stopped = false;

  constructor(client: RedisClient, warn: (line: string) => void) {
    this.#client = client;
    this.#warn = warn;
    this.#sub = client.subscriber(
      (channel) => {
        const id = sessionOfWake(channel);
        if (id !== null) this.#schedule(id);
      },
      () => {
        for (const id of this.#entries.keys()) this.#schedule(id);
      },
    );
    this.#timer = setInterval(() => this.#sweep(), SWEEP_MS);
    // Told when the connection breaks, not only when a read fails: an outage shorter than a
    // sweep, with no read out at that moment, would otherwise go unsaid.
    client.onLost((why) => this.#failed(new RedisDown(why)));
  }

  /** Sessions followed now (the bench reads it beside the edge's Redis connections). */
  get size(): number {
    return this.#entries.size;
  }

  follow(f: Followed): void {
    if (this.#entries.has(f.sessionId)) return;
    this.#entries.set(f.sessionId, {
      f,
      reading: false,
      again: false,
      live: new Liveness(f.progress),
    });
    this.#sub.subscribe(sessionKeys(f.sessionId).wake);
    this.#schedule(f.sessionId);
  }

  unfollow(sessionId: string): void {
    if (!this.#entries.delete(sessionId)) return;
    this.#sub.unsubscribe(sessionKeys(sessionId).wake);
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#sub.close();
  }

  #schedule(id: string): void {
    const e = this.#entries.get(id);
    if (!e || this.#stopped) return;
    if (e.reading) {
      e.again = true;
      return;
    }
    e.reading = true;
    this.#read(e).finally(() => (e.reading = false));
  }

  async #read(e: Entry): Promise<void> {
    do {
      e.again = false;
      try {
        if (await e.f.readOn(this.#client)) e.again = true;
        this.#up();
      } catch (err) {
        this.#failed(err);
        return;
      }
    } while (e.again && this.#entries.get(e.f.sessionId) === e && !this.#stopped);
  }

  async #sweep(): Promise<void> {
    const entries = [...this.#entries.values()];
    for (const e of entries) this.#schedule(e.f.sessionId);
    let present: number[];
    try {
      const replies = await Promise.all(
        entries.map((e) => this.#client.call(["EXISTS", sessionKeys(e.f.sessionId).alive])),
      );
      present = replies.map(Number);
      this.#up();
    } catch (err) {
      // Nothing is judged across an outage: a Redis restarted empty gets the key back from the
      // capsule's next refresh.
      for (const e of entries) e.live.unknown();
      this.#failed(err);
      return;
    }
    const now = Date.now();
    entries.forEach((e, i) => {
      const verdict = e.live.observe(present[i] > 0, e.f.progress, now);
      if (verdict === "lapsed" && this.#entries.get(e.f.sessionId) === e) {
        this.unfollow(e.f.sessionId);
        e.f.lapsed();
      }
    });
  }

  #up(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#warn(
      `[murmur] edge: ${this.#client.target.shown} answers again; every followed session reads on from the last event it holds`,
    );
  }

  #failed(err: unknown): void {
    if (this.#down || this.#stopped) return;
    this.#down = true;
    const why = err instanceof RedisDown || err instanceof Error ? err.message : String(err);
    this.#warn(
      `warning[W-EDGE-001]: ${this.#client.target.shown}: ${why}; the edge's connections stay open and read on when Redis answers`,
    );
  }
}
