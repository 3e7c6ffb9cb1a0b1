/**
 * What a capsule writes into Redis and an edge reads (docs/edge.md): one stream of
 * numbered events, one hash of tasks and one hash of facts per session, every key of a session
 * under the same hash tag `{<session id>}` (so a Redis Cluster keeps a session's keys on one
 * node). Every key expires `KEY_TTL_SECS` after the capsule last refreshed it: a capsule that dies
 * leaves nothing behind for longer than that.
 */

/** The stream keeps at least this many events (`XADD … MAXLEN ~`): twice the replay buffer. */
export const STREAM_MAXLEN = 1024;
/** Keys live this long past the capsule's last refresh… */
export const KEY_TTL_SECS = 30;
/** …which comes this often while it runs. */
export const REFRESH_MS = 10_000;
/** The liveness key is set again this often… */
export const ALIVE_REFRESH_MS = 5_000;
/**
 * …and lives this long past each: one refresh lost (a failover drops the writes the promoted
 * replica had not copied yet) leaves it present, two in a row let it lapse, and edges end the
 * session's streams (src/edge/liveness.ts) long before its other keys expire.
 */
export const ALIVE_TTL_MS = 2 * ALIVE_REFRESH_MS + 2000;

export const sessionKeys = (sessionId: string) => ({
  /** XADD `<event id>-0` per numbered event; `<last id>-1` marks the end of the session's stream. */
  events: `mur:{${sessionId}}:events`,
  /**
   * task id → `{"changedAt":…,"task":<Task as GetTask answers it, without history>,
   * "history":{"total":…,"kept":…}}`
   */
  tasks: `mur:{${sessionId}}:tasks`,
  /**
   * `<task id>:<n>` → the task's n-th history message (from 0), for the ones it still keeps: each
   * written once, so a long task's history costs one write per message, never a rewrite.
   */
  history: `mur:{${sessionId}}:history`,
  /** door, name, conversationMode, acceptsTasks, auth, card, extendedCard */
  meta: `mur:{${sessionId}}:meta`,
  /** Set with a TTL of ALIVE_TTL_MS at every refresh: present while the capsule runs. */
  alive: `mur:{${sessionId}}:alive`,
  /** Pub/sub channel: the newest event id, after each write of events (edges read on). */
  wake: `mur:{${sessionId}}:wake`,
});

/** The session a wake channel names, or null. */
export function sessionOfWake(channel: string): string | null {
  const m = /^mur:\{([^}]+)\}:wake$/.exec(channel);
  return m ? m[1] : null;
}
