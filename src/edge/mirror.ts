/**
 * One session as an edge follows it (docs/edge.md): an `EventLog` of its own, fed from the
 * session's Redis stream with the capsule's ids (`appendMirrored`), so the edge's stream views,
 * replay, gap, lagged and heartbeats are the capsule's own code (src/events/) over the same bytes.
 * It loads the newest 512 entries, then reads on whenever the edge's one reader
 * (stream_reader.ts) says so, from the last id it holds — so after an outage a hole in what it
 * reads (events the capsule could not publish) becomes `lagged` for live readers and `gap` for a
 * replay across it. The end marker closes its log, as the capsule's stream ending does; so does
 * the capsule's liveness lapsing (a capsule killed): its connections end without
 * `capsule-closed`, as they would on the capsule's own door when its process dies.
 */
import type { StreamResponse, Task, TaskState } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import { sessionKeys } from "../cluster/keys.ts";
import type { RedisClient, Reply } from "../cluster/client_types.ts";
import { readEntry } from "../cluster/stream_entry.ts";
import { EventLog, REPLAY_CAPACITY } from "../events/log.ts";
import type { TaskProbe } from "../events/view.ts";
import type { Followed } from "./stream_reader.ts";

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

export class SessionMirror implements Followed {
  readonly log = new EventLog();
  /** Settles once the first read was tried (an edge without Redis serves an empty log). */
  readonly ready: Promise<void>;
  readonly sessionId: string;
  readonly #keys: ReturnType<typeof sessionKeys>;
  readonly #tracks = new Map<string, TaskTrack>();
  #loaded = false;
  #tried!: () => void;
  #lastEntry = "0-0";
  /** When the last connection using it went away (for the edge's idle sweep). */
  idleSince = Date.now();

  /** Events missing between two the stream holds (`from`–`to`): said once per hole. */
  readonly #onHole: (from: number, to: number) => void;

  constructor(sessionId: string, onHole: (from: number, to: number) => void = () => {}) {
    this.sessionId = sessionId;
    this.#onHole = onHole;
    this.#keys = sessionKeys(sessionId);
    this.ready = new Promise((r) => (this.#tried = r));
  }

  get progress(): number {
    return this.log.lastId;
  }

  /** Stops following; its connections end. */
  stop(): void {
    this.#tried();
    this.log.close();
  }

  lapsed(): void {
    this.stop();
  }

  /**
   * The first call loads the newest REPLAY_CAPACITY entries (the mirror's replay buffer to start);
   * each later one reads what follows the last entry held.
   */
  async readOn(c: RedisClient): Promise<boolean> {
    if (this.log.closed) return false;
    try {
      if (!this.#loaded) {
        const rows = await c.call([
          "XREVRANGE",
          this.#keys.events,
          "+",
          "-",
          "COUNT",
          REPLAY_CAPACITY,
        ]);
        this.#loaded = true;
        if (Array.isArray(rows)) await this.#take(rows.slice().reverse());
        return true;
      }
      const r = await c.call([
        "XREAD",
        "COUNT",
        READ_COUNT,
        "STREAMS",
        this.#keys.events,
        this.#lastEntry,
      ]);
      let n = 0;
      if (Array.isArray(r)) {
        for (const stream of r) {
          if (Array.isArray(stream) && Array.isArray(stream[1])) {
            n += stream[1].length;
            await this.#take(stream[1]);
          }
        }
      }
      return n >= READ_COUNT;
    } finally {
      this.#tried();
    }
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

  async #take(rows: Reply[]): Promise<void> {
    let n = 0;
    for (const row of rows) {
      if (++n % SLICE === 0) await new Promise((r) => setTimeout(r, 0));
      if (this.log.closed) return;
      if (!Array.isArray(row) || typeof row[0] !== "string" || !Array.isArray(row[1])) continue;
      this.#lastEntry = row[0];
      const item = readEntry(row[0], row[1] as string[]);
      if (item.kind === "closed") {
        this.log.close(item.status);
        return;
      }
      if (item.kind !== "event") continue;
      const e = item.event;
      // A published file's artifactUpdate names the capsule's door: views rebase it (wire.ts).
      if (e.activated.startsWith('{"artifactUpdate"') && e.activated.includes("/files/")) {
        e.files = true;
      }
      const held = this.log.lastId;
      if (this.log.appendMirrored(e) === null) continue;
      if (held > 0 && e.id > held + 1) this.#onHole(held + 1, e.id - 1);
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
