/**
 * The sessions an edge follows now: one mirror (mirror.ts) per session some connection reads,
 * made on first use, followed by the edge's one reader (stream_reader.ts), and let go once no
 * connection has used it for `IDLE_MS` or its stream has ended.
 */
import { SessionMirror } from "./mirror.ts";
import type { StreamReader } from "./stream_reader.ts";
import { STREAM_MAXLEN } from "../cluster/keys.ts";

/** A mirror no connection has used for this long stops following its session. */
const IDLE_MS = 60_000;

export class Mirrors {
  readonly #reader: StreamReader;
  readonly #mirrors = new Map<string, SessionMirror>();
  readonly #sweep: ReturnType<typeof setInterval>;
  readonly #warn: (line: string) => void;

  constructor(reader: StreamReader, warn: (line: string) => void) {
    this.#reader = reader;
    this.#warn = warn;
    this.#sweep = setInterval(() => this.#idle(), 5000);
  }

  /** The session's mirror, once its first read was tried. */
  async of(sessionId: string): Promise<SessionMirror> {
    let m = this.#mirrors.get(sessionId);
    if (!m || m.log.closed) {
      if (m) this.#reader.unfollow(sessionId);
      m = new SessionMirror(sessionId, (from, to) =>
        this.#warn(
          `[murmur] edge: session ${sessionId}: events ${from}–${to} are not in Redis (published while it was down, lost with its data, or trimmed from the session's stream of ${STREAM_MAXLEN} before this edge read them); its watchers get lagged, a replay across them gap`,
        ));
      this.#mirrors.set(sessionId, m);
      this.#reader.follow(m);
    }
    await m.ready;
    return m;
  }

  stopAll(): void {
    clearInterval(this.#sweep);
    for (const [id, m] of this.#mirrors) {
      this.#reader.unfollow(id);
      m.stop();
    }
    this.#mirrors.clear();
  }

  #idle(): void {
    const now = Date.now();
    for (const [id, m] of this.#mirrors) {
      if (m.log.subscriptionCount > 0) m.idleSince = now;
      else if (now - m.idleSince > IDLE_MS || m.log.closed) {
        this.#reader.unfollow(id);
        m.stop();
        this.#mirrors.delete(id);
      }
    }
  }
}
