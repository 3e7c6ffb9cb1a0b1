/**
 * How `mur watch` ends, and with which exit code (docs/watch.md). docs/protocol.md
 * "What mur watch does" gives 0 (capsule-closed) and 1 (E-IO-003, connection lost); usage errors
 * are 2 like every command's. `--exit-status` adds the outcome of the tasks the watch followed;
 * `--task` ends the watch at its task's terminal status.
 */
import { TERMINAL_WORDS } from "./format.ts";

/** The exit codes of `mur watch`. */
export const WATCH_EXIT = {
  /** capsule-closed; with --task, the task ended (any way, unless --exit-status). */
  ok: 0,
  /**
   * E-IO-003 (could not connect, or the connection ended without capsule-closed), E-IO-004
   * (refused), E-RUN-048 (no such task).
   */
  lost: 1,
  /** A usage error (a bad flag or value). */
  usage: 2,
  /** --exit-status: a followed task ended failed or rejected. */
  failed: 3,
  /** --exit-status: a followed task was canceled, and none failed or was rejected. */
  canceled: 4,
} as const;

/** Terminal state words that mean "did not complete", and the code each gives. */
const BAD: Record<string, number> = {
  failed: WATCH_EXIT.failed,
  rejected: WATCH_EXIT.failed,
  canceled: WATCH_EXIT.canceled,
};

/** The terminal statuses a watch read, for `--exit-status`. */
export class Outcomes {
  /** The terminal state word of each task seen ending, by task id. */
  readonly ended = new Map<string, string>();
  /** Every task a status was seen of. */
  readonly seen = new Set<string>();

  /** Records a status by its state word (format.ts stateWord); returns whether it is terminal. */
  see(taskId: string, word: string): boolean {
    this.seen.add(taskId);
    if (!TERMINAL_WORDS.has(word)) return false;
    this.ended.set(taskId, word);
    return true;
  }

  /** Whether every task the watch saw a status of has ended (none left running). */
  allEnded(): boolean {
    for (const id of this.seen) if (!this.ended.has(id)) return false;
    return true;
  }

  /**
   * The code for a watch that ended with `base` (ok or lost). With `exitStatus`, a followed task
   * that failed or was rejected gives 3, one canceled gives 4, failure first; without it, `base`.
   * A task outcome wins over a lost connection: it is known, while the loss only says the stream
   * ended early (E-IO-003 is still printed).
   */
  code(base: number, exitStatus: boolean): number {
    if (!exitStatus) return base;
    let worst: number = base;
    for (const word of this.ended.values()) {
      const bad = BAD[word];
      if (bad === WATCH_EXIT.failed) return bad;
      if (bad === WATCH_EXIT.canceled) worst = bad;
    }
    return worst;
  }
}
