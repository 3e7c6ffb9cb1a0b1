/**
 * Whether a followed session's capsule still runs, judged at each of the reader's sweeps
 * (stream_reader.ts) from two signals: its liveness key (src/cluster/keys.ts `alive`) and its
 * stream. A stream that grew since the last sweep was written by a running capsule, whatever the
 * key says: a failover can drop the key's last refresh with the other writes the promoted replica
 * had not copied yet (Redis replicates asynchronously), and a capsule streaming through it is not
 * dead (tests/cluster/deployments_test.ts, the primary killed mid-stream). The key missing on
 * sweeps `LAPSE_MS` apart, the stream still, and Redis answering all along: the capsule stopped.
 */

/** The liveness key missing this long (Redis answering, the stream not growing) ends the streams. */
export const LAPSE_MS = 4000;

export type Verdict = "alive" | "missing" | "lapsed";

export class Liveness {
  /** When the key was first seen missing with the stream still, or null. */
  #missingSince: number | null = null;
  #progress: number;

  /** `progress`: how far the session's stream has been read now (its last event id). */
  constructor(progress: number) {
    this.#progress = progress;
  }

  /** Redis did not answer this sweep: nothing is judged across an outage. */
  unknown(): void {
    this.#missingSince = null;
  }

  /** One sweep's answer: whether the key exists, and how far the stream has been read. */
  observe(present: boolean, progress: number, now: number): Verdict {
    const grew = progress !== this.#progress;
    this.#progress = progress;
    if (present || grew) {
      this.#missingSince = null;
      return "alive";
    }
    this.#missingSince ??= now;
    return now - this.#missingSince >= LAPSE_MS ? "lapsed" : "missing";
  }
}
