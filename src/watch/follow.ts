/**
 * `mur watch --task ID`: which events belong to the followed task, and when to stop waiting for
 * a final status the stream will never bring.
 *
 * The watch ends at the task's terminal status. Two cases would otherwise wait forever: the task
 * ended so long ago (or before `--since`) that its final status is no longer in the replay, and a
 * watch that fell behind lost it (`lagged`). GetTask says the task ended; a heartbeat says the
 * door has written everything it held for this connection (src/events/view.ts writes a heartbeat
 * only after taking every pending event). So:
 * - GetTask is asked before the stream opens. An ending it reports happened before the
 *   connection's replay was taken, and the connection's first heartbeat follows that replay.
 * - After a `lagged` frame, GetTask is asked at each heartbeat until it reports an ending; the
 *   next heartbeat without the final status ends the watch.
 */
import { stateWord, TERMINAL_WORDS } from "./format.ts";

/** What GetTask said of the followed task. */
export type TaskCheck =
  /** taskNotFound (src/diagnostics.ts): the session holds no such task. */
  | { kind: "missing"; why: string }
  /** The task's current state, `TASK_STATE_*`. */
  | { kind: "state"; state: string }
  /** The door could not be asked (a token without GetTask, an error): follow the stream only. */
  | { kind: "unknown"; why: string };

export interface TaskToFollow {
  id: string;
  /** GetTask for `id` (the CLI knows the door and the token). */
  check(): Promise<TaskCheck>;
}

export class Follow {
  /** The terminal state word GetTask reported, once it reported one. */
  private endedAs: string | undefined;
  /** The next heartbeat ends the watch (the final status is not coming). */
  private armed = false;
  /** This watch lost events (`lagged`): the final status may be among them. */
  private lost = false;
  /** GetTask could be asked. */
  private checkable = true;

  constructor(readonly task: TaskToFollow) {}

  get id(): string {
    return this.task.id;
  }

  /** Whether an event of `taskId` (undefined: a session event) is shown. */
  keeps(taskId: string | undefined): boolean {
    return taskId === undefined || taskId === this.task.id;
  }

  /** Before the stream opens; returns the check so the caller can refuse a missing task. */
  async start(): Promise<TaskCheck> {
    const c = await this.task.check();
    this.learn(c);
    if (this.endedAs !== undefined) this.armed = true;
    return c;
  }

  /** A `lagged` frame arrived. */
  lagged(): void {
    this.lost = true;
  }

  /**
   * A heartbeat arrived. Returns the terminal state word to end with when the final status is
   * not coming, else undefined.
   */
  async heartbeat(): Promise<string | undefined> {
    if (this.armed && this.endedAs !== undefined) return this.endedAs;
    if (this.lost && this.checkable && this.endedAs === undefined) {
      this.learn(await this.task.check());
      if (this.endedAs !== undefined) this.armed = true;
    }
    return undefined;
  }

  private learn(c: TaskCheck): void {
    if (c.kind === "unknown") this.checkable = false;
    if (c.kind !== "state") return;
    const word = stateWord(c.state);
    if (TERMINAL_WORDS.has(word)) this.endedAs = word;
  }
}
