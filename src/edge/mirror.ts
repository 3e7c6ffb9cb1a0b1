/**
 * One session as an edge follows it (README "Beyond one machine"): an `EventLog` of its own, fed
 * from the session's Redis stream with the capsule's ids (`appendMirrored`), so the edge's stream
 * views, replay, gap, lagged and heartbeats are the capsule's own code (src/events/) over the
 * same bytes. It loads the newest 512 entries, then follows with `XREAD BLOCK` on a connection of
 * its own. Redis gone: reported once, retried with backoff; its connections stay open (heartbeats
 * go on) and, back up, it reads on from the last id it holds — a hole in what it reads (events the
 * capsule could not publish) becomes `lagged` for live readers and `gap` for a replay across it.
 * The end marker closes its log, as the capsule's stream ending does; so does the session's meta
 * key having expired (a capsule that died): its connections end without `capsule-closed`.
 */
import type { StreamResponse, Task, TaskState } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import { REFRESH_MS, sessionKeys } from "../cluster/keys.ts";
import { RedisConn, RedisReplyError, type RedisTarget, type Reply } from "../cluster/redis.ts";
import { readEntry } from "../cluster/stream_entry.ts";
import { EventLog, REPLAY_CAPACITY } from "../events/log.ts";
import type { TaskProbe } from "../events/view.ts";

/** XREAD waits at most this long before it asks again (and checks it should go on). */
const BLOCK_MS = 2000;
/** At most this many entries per read (bounds one reply's size). */
const READ_COUNT = 1000;
/**
 * Entries appended between two turns of the event loop: the views write what they took to their
 * sockets in between, so a reply of READ_COUNT entries never outruns a reader that keeps up (a
 * view's write buffer and queue hold fewer than a thousand events).
 */
const SLICE = 64;

/** What the stream says of one task: its state, and its ending or input prompt as written. */
interface TaskTrack {
  state: TaskState;
  /** The plain JSON of its terminal statusUpdate, and of the response artifactUpdate. */
  end?: string;
  response?: string;
  /** The plain JSON of its latest INPUT_REQUIRED statusUpdate. */
  input?: string;
}

export interface MirrorOptions {
  target: RedisTarget;
  sessionId: string;
  warn(line: string): void;
}

export class SessionMirror {
  readonly log = new EventLog();
  readonly ready: Promise<void>;
  readonly #o: MirrorOptions;
  readonly #keys: ReturnType<typeof sessionKeys>;
  readonly #tracks = new Map<string, TaskTrack>();
  #conn: RedisConn | null = null;
  #stopped = false;
  #down = false;
  #missingMeta = 0;
  #lastEntry = "0-0";
  /** When the last connection using it went away (for the edge's idle sweep). */
  idleSince = Date.now();

  constructor(o: MirrorOptions) {
    this.#o = o;
    this.#keys = sessionKeys(o.sessionId);
    let loaded!: () => void;
    this.ready = new Promise((r) => (loaded = r));
    this.#run(loaded);
  }

  get sessionId(): string {
    return this.#o.sessionId;
  }

  /** Stops following; its connections end. */
  stop(): void {
    this.#stopped = true;
    this.#conn?.close();
    this.log.close();
  }

  /** The task as the stream last said, or undefined when the stream has said nothing of it. */
  stateOf(taskId: string): TaskState | undefined {
    return this.#tracks.get(taskId)?.state;
  }

  /** A task stream's lagged recovery (view.ts): what the stream wrote of the task's ending. */
  probe(task: Task): TaskProbe {
    const parse = (s: string) => JSON.parse(s) as StreamResponse;
    const statusOf = (): StreamResponse => ({
      statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status },
    });
    return {
      state: () => this.stateOf(task.id) ?? task.status.state,
      ending: () => {
        const t = this.#tracks.get(task.id);
        if (!t?.end) return [statusOf()];
        return t.response ? [parse(t.response), parse(t.end)] : [parse(t.end)];
      },
      inputRequired: () => {
        const t = this.#tracks.get(task.id);
        return t?.input ? parse(t.input) : statusOf();
      },
    };
  }

  async #run(loaded: () => void): Promise<void> {
    let backoff = 100;
    let first = true;
    // Until stopped, or the session's stream has ended (its end marker, or its keys expired).
    while (!this.#stopped && !this.log.closed) {
      try {
        this.#conn = await RedisConn.connect(this.#o.target);
        if (first) await this.#load(this.#conn);
        if (this.#down) {
          this.#down = false;
          this.#o.warn(
            `[murmur] edge: ${this.#o.target.shown} answers again; session ${this.#o.sessionId} read on from event ${this.log.lastId}`,
          );
        }
        first = false;
        loaded();
        backoff = 100;
        await this.#follow(this.#conn);
        this.#conn.close();
      } catch (e) {
        this.#conn?.close();
        this.#conn = null;
        if (this.#stopped) break;
        if (!this.#down) {
          this.#down = true;
          this.#o.warn(
            `warning[W-EDGE-001]: ${
              (e as Error).message
            }; session ${this.#o.sessionId}: its connections stay open and read on when Redis answers`,
          );
        }
        // A first load that cannot reach Redis still opens the edge's connections (empty).
        loaded();
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  /** The newest REPLAY_CAPACITY entries, oldest first: the mirror's replay buffer to start. */
  async #load(c: RedisConn): Promise<void> {
    const rows = await c.must(["XREVRANGE", this.#keys.events, "+", "-", "COUNT", REPLAY_CAPACITY]);
    if (Array.isArray(rows)) await this.#take(rows.slice().reverse());
  }

  async #follow(c: RedisConn): Promise<void> {
    let lastMetaCheck = Date.now();
    while (!this.#stopped && !this.log.closed) {
      const r = await c.send([
        "XREAD",
        "COUNT",
        READ_COUNT,
        "BLOCK",
        BLOCK_MS,
        "STREAMS",
        this.#keys.events,
        this.#lastEntry,
      ]);
      if (r instanceof RedisReplyError) throw r;
      if (Array.isArray(r)) {
        for (const stream of r) {
          if (Array.isArray(stream) && Array.isArray(stream[1])) await this.#take(stream[1]);
        }
      }
      if (Date.now() - lastMetaCheck >= REFRESH_MS) {
        lastMetaCheck = Date.now();
        await this.#checkAlive(c);
      }
    }
  }

  /**
   * The capsule refreshes its keys' expiry while it runs: a meta key missing twice in a row (a
   * Redis restarted empty gets it back from the capsule within seconds) means it is gone.
   */
  async #checkAlive(c: RedisConn): Promise<void> {
    const n = await c.must(["EXISTS", this.#keys.meta]);
    this.#missingMeta = n === 0 ? this.#missingMeta + 1 : 0;
    if (this.#missingMeta >= 2) this.log.close();
  }

  async #take(rows: Reply[]): Promise<void> {
    let n = 0;
    for (const row of rows) {
      if (++n % SLICE === 0) await new Promise((r) => setTimeout(r, 0));
      if (this.log.closed) return;
      if (!Array.isArray(row) || typeof row[0] !== "string" || !Array.isArray(row[1])) continue;
      this.#lastEntry = row[0];
      const item = readEntry(row[0], row[1] as string[]);
      if (item.kind === "closed") {
        this.log.close();
        return;
      }
      if (item.kind !== "event") continue;
      const e = item.event;
      if (this.log.appendMirrored(e) === null) continue;
      if (e.standard) this.#track(e.taskId, e.state, e.terminal, e.inputRequired, e);
    }
  }

  #track(
    taskId: string,
    state: TaskState,
    terminal: boolean,
    inputRequired: boolean,
    e: { plain: string | null; activated: string },
  ): void {
    let t = this.#tracks.get(taskId);
    if (!t) this.#tracks.set(taskId, t = { state });
    const plain = e.plain ?? e.activated;
    if (plain.startsWith('{"artifactUpdate"')) {
      t.response = plain;
      return;
    }
    t.state = state;
    if (terminal || isTerminal(state)) t.end = plain;
    if (inputRequired) t.input = plain;
  }
}
