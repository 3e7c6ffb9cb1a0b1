/**
 * Every shell command that moved to the background (docs/hooks.md "Detached shells"), while it
 * runs. `CancelTask` and `StopSession` name them as residue (they keep running), the session's
 * teardown writes `shell_abandoned` for the ones still here, and tests kill them.
 */
import type { DetachedOutcome } from "./types.ts";
import { terminate } from "./process.ts";

export interface DetachedShellInfo {
  workId: string;
  /** Resolved binary, as the `shell_detached` trace line names it. */
  binary: string;
  /** Args only; the `-c` script for interpreters. */
  command: string;
  /** When the command was spawned (epoch ms). */
  startedAtMs: number;
  /** When it moved to the background (epoch ms). */
  detachedAtMs: number;
  pid: number;
  /** Workdir-relative log path, `logs/<work id>.log`. */
  outputPath: string;
  taskId: string;
  contextId: string;
}

/** What the registry holds besides the info: the process, as the shell tool spawned it. */
export interface DetachedHandle {
  status: Promise<Deno.CommandStatus>;
  done: Promise<DetachedOutcome>;
  /** Stop following the command (stop reading its output); it keeps running. */
  release(): void;
}

interface Entry extends DetachedHandle {
  info: DetachedShellInfo;
}

export class DetachedShells {
  readonly #running = new Map<string, Entry>();

  /** Registers a detached command; it leaves the registry when `done` settles. */
  add(info: DetachedShellInfo, handle: DetachedHandle): void {
    this.#running.set(info.workId, { info, ...handle });
    const leave = () => this.#running.delete(info.workId);
    handle.done.then(leave, leave);
  }

  /** The commands still running, oldest first. */
  list(): DetachedShellInfo[] {
    return [...this.#running.values()]
      .map((e) => ({ ...e.info }))
      .sort((a, b) => a.startedAtMs - b.startedAtMs);
  }

  get size(): number {
    return this.#running.size;
  }

  /** Waits for one command's outcome; undefined when the work id is not running. */
  wait(workId: string): Promise<DetachedOutcome> | undefined {
    return this.#running.get(workId)?.done;
  }

  /** Terminates one detached command (SIGTERM, then SIGKILL) and waits for its outcome. */
  async kill(workId: string, graceMs?: number): Promise<DetachedOutcome | undefined> {
    const e = this.#running.get(workId);
    if (!e) return undefined;
    await terminate({ pid: e.info.pid, status: e.status }, graceMs);
    return await e.done;
  }

  /**
   * The session is ending and leaves its detached commands to run out on their own (docs/hooks.md
   * "Detached shells"): stop reading their output so the runtime can exit. Returns what was still
   * running.
   */
  releaseAll(): DetachedShellInfo[] {
    const left = this.list();
    for (const e of this.#running.values()) e.release();
    this.#running.clear();
    return left;
  }

  /** Terminates every detached command and waits until each has settled. */
  async killAll(graceMs?: number): Promise<void> {
    await Promise.all([...this.#running.keys()].map((id) => this.kill(id, graceMs)));
  }
}
