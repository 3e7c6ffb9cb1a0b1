/**
 * The task registry: the single source of truth for GetTask, ListTasks and CancelTask. Every
 * state change goes through it, and it writes the status event itself, after the record already
 * answers the new state — so "GetTask answers the state before the terminal status is written"
 * holds by construction.
 */
import type { Message, Part, TaskState } from "../a2a/types.ts";
import { isTerminal, timestamp } from "../a2a/types.ts";
import { frameInput, responseInput, statusInput } from "../events/emit.ts";
import type { TaskFrame } from "../events/frames.ts";
import type { EventLog } from "../events/log.ts";
import { IdSource } from "../ids.ts";
import type { Lane, Origin, TaskRecord, TaskSource } from "./task_record.ts";
import { agentMessage, artifactOf, laneOf, replyMessage } from "./task_record.ts";
import { DEFAULT_HISTORY_LIMIT, TaskHistory } from "./task_history.ts";
import type { PublishedFile } from "./published_files.ts";
import type { TaskJournal } from "./task_journal.ts";

export interface NewTask {
  contextId?: string;
  origin: Origin;
  source: TaskSource;
  trusted: boolean;
  text: string;
  messageId?: string;
  /** Forget the context's harness session before the task runs (process transport). */
  forgetSession?: boolean;
  /** The A2A message that started it, as its history keeps it (absent: one text part of `text`). */
  message?: UserMessage;
}

/** A user's message as a task's history keeps it: the task and context ids are the registry's. */
export interface UserMessage {
  messageId: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

export class Registry {
  readonly #tasks = new Map<string, TaskRecord>();
  /** Tasks of the session this one resumed (task_journal.ts): at rest, answered, never run. */
  readonly #past = new Map<string, TaskRecord>();
  /** Where each task's record is kept for a later `--resume` (absent: nowhere). */
  journal: TaskJournal | null = null;
  readonly #held = new Map<string, TaskFrame[]>();
  /** Tasks recorded terminal whose final status event is still to be written. */
  readonly #finalHeld = new Set<string>();

  readonly #ids: IdSource;

  constructor(
    private readonly log: EventLog,
    private readonly clock: () => number = Date.now,
    ids?: IdSource,
    /** `lifecycle.history_limit`: messages each task keeps. */
    private readonly historyLimit: number = DEFAULT_HISTORY_LIMIT,
  ) {
    this.#ids = ids ?? new IdSource(clock);
  }

  get(id: string): TaskRecord | undefined {
    return this.#tasks.get(id) ?? this.#past.get(id);
  }

  /** This session's tasks (what it runs, ends and decides its status by). */
  all(): TaskRecord[] {
    return [...this.#tasks.values()];
  }

  /** Every task a client can read: the resumed session's, then this one's (ListTasks). */
  listed(): TaskRecord[] {
    return this.#past.size === 0 ? this.all() : [...this.#past.values(), ...this.#tasks.values()];
  }

  /**
   * The tasks of the session this one resumes, answered as they ended (docs/protocol.md "Task
   * history"), and carried into this session's journal so a later resume answers them too.
   */
  adoptPast(tasks: TaskRecord[]): void {
    for (const t of tasks) {
      if (this.#tasks.has(t.id)) continue;
      this.#past.set(t.id, t);
      this.journal?.carried(t);
    }
  }

  /**
   * The url parts of past tasks' files name the door that published them: name this one (its
   * `/files/` route serves them from the old session folder's copies).
   */
  rebasePastFiles(doorBase: string): void {
    for (const t of this.#past.values()) {
      for (const f of t.published) {
        if (!f.copy) continue;
        for (const part of f.artifact.parts) {
          if (!("url" in part)) continue;
          const at = part.url.lastIndexOf("/files/");
          if (at >= 0) part.url = doorBase + part.url.slice(at);
        }
      }
    }
  }

  /** A new task in TASK_STATE_SUBMITTED. Writes no event: the opening `task` is per stream. */
  create(init: NewTask): TaskRecord {
    const now = this.clock();
    let markDone!: () => void;
    const done = new Promise<void>((r) => (markDone = r));
    const id = this.#ids.next("tsk");
    const task: TaskRecord = {
      id,
      contextId: init.contextId ?? this.#ids.next("ctx"),
      origin: init.origin,
      lane: laneOf(init.origin),
      source: init.source,
      trusted: init.trusted,
      text: init.text,
      messageId: init.messageId,
      ...(init.forgetSession ? { forgetSession: true } : {}),
      createdAt: now,
      state: "TASK_STATE_SUBMITTED",
      status: { state: "TASK_STATE_SUBMITTED", timestamp: timestamp(now) },
      changedAt: now,
      history: new TaskHistory(this.historyLimit),
      published: [],
      residue: [],
      attachments: new Map(),
      abort: new AbortController(),
      done,
      markDone,
    };
    task.history.append(this.#userMessage(
      task,
      init.message ?? {
        messageId: init.messageId ?? `msg_${id}_task`,
        parts: [{ text: init.text, mediaType: "text/plain" }],
      },
    ));
    this.#tasks.set(id, task);
    if (this.journal) {
      this.journal.created(task);
      this.journal.message(task, task.history.newest(1)[0]);
    }
    return task;
  }

  #append(task: TaskRecord, m: Message): void {
    task.history.append(m);
    this.journal?.message(task, m);
  }

  #userMessage(task: TaskRecord, m: UserMessage): Message {
    return {
      messageId: m.messageId,
      contextId: task.contextId,
      taskId: task.id,
      role: "ROLE_USER",
      parts: m.parts,
      ...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
    };
  }

  /** A user's message that continues a task (the answer to an input wait): into its history. */
  userMessage(task: TaskRecord, m: UserMessage): void {
    this.#append(task, this.#userMessage(task, m));
  }

  /**
   * A task refused at the door: never kept, never numbered (the one `task` event of its stream).
   */
  rejectedAtDoor(init: NewTask, message: string): TaskRecord {
    const journal = this.journal;
    this.journal = null;
    const task = this.create(init);
    this.journal = journal;
    this.#tasks.delete(task.id);
    task.state = "TASK_STATE_REJECTED";
    task.status = {
      state: "TASK_STATE_REJECTED",
      message: agentMessage(`msg_${task.id}_status`, task, message),
      timestamp: timestamp(task.changedAt),
    };
    task.markDone();
    return task;
  }

  /**
   * A non-terminal status: a state change or a working step. `annotation` is the reopen ordinal
   * that only activated connections see.
   */
  status(
    task: TaskRecord,
    state: Exclude<TaskState, "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED">,
    message?: string,
    annotation?: Record<string, unknown>,
    /** Parts after the message's text part (an approval's data part: src/session/approval.ts). */
    extraParts?: Part[],
  ): void {
    if (isTerminal(task.state)) return;
    // Anything but the first turn's own status means more than a one-turn answer.
    if (
      state !== "TASK_STATE_WORKING" || (message !== undefined && message !== "inference turn 1")
    ) {
      task.indirect = true;
    }
    const now = this.clock();
    task.state = state;
    task.status = {
      state,
      ...(message !== undefined
        ? { message: agentMessage(this.#ids.next("msg"), task, message, extraParts) }
        : {}),
      timestamp: timestamp(now),
    };
    task.changedAt = now;
    // The question of an input wait is the agent's turn of the task's conversation.
    if (state === "TASK_STATE_INPUT_REQUIRED" && task.status.message) {
      this.#append(task, task.status.message);
    }
    if (state !== "TASK_STATE_INPUT_REQUIRED") task.prompt = undefined;
    this.log.append(statusInput(task, task.status, annotation));
    if (state === "TASK_STATE_WORKING") this.#flushHeld(task, state);
  }

  /** A murmur frame of a working task. */
  frame(task: TaskRecord, frame: TaskFrame): void {
    if (isTerminal(task.state)) return;
    if (frame.frame === "tool-call-started") task.indirect = true;
    if (task.state === "TASK_STATE_INPUT_REQUIRED") {
      // Frames are carried by a WORKING status (docs/protocol.md "Carriers"): one a harness reports
      // while the task waits for input (a quota window) is written once the task works again.
      (this.#held.get(task.id) ?? this.#held.set(task.id, []).get(task.id)!).push(frame);
      return;
    }
    this.log.append(frameInput(task, task.state, frame, this.clock()));
  }

  /**
   * A file or data the task published (publish.ts, a data tool): kept for GetTask and written
   * as the stream's `artifactUpdate` at once.
   */
  publish(task: TaskRecord, file: PublishedFile): void {
    if (isTerminal(task.state)) return;
    task.published.push(file);
    this.journal?.published(task, file);
    this.log.append(responseInput(task, file.artifact, task.state));
  }

  /** Frames held during an input wait, written after the status that ends the wait. */
  #flushHeld(task: TaskRecord, state: TaskState): void {
    const held = this.#held.get(task.id);
    if (!held) return;
    this.#held.delete(task.id);
    for (const f of held) this.log.append(frameInput(task, state, f, this.clock()));
  }

  /**
   * The one final status. The record answers it first; then the `response` artifactUpdate (when
   * completed with a non-empty answer), then the terminal status, as the task's last events.
   * Returns false when the task had already ended (a cancel won).
   */
  finish(
    task: TaskRecord,
    state: TaskState,
    message: string,
    response?: string,
    opts: { holdEvent?: boolean } = {},
  ): boolean {
    if (this.#finalHeld.has(task.id)) {
      // A cancel recorded at once, whose final status waited for the attempt to say how it ended
      // (a harness that had to be killed): the state stays CANCELED, the message is the ending's.
      this.#finalHeld.delete(task.id);
      task.status = {
        ...task.status,
        message: agentMessage(`msg_${task.id}_status`, task, message),
      };
      this.journal?.ended(task);
      this.log.append(statusInput(task, task.status));
      task.markDone();
      return true;
    }
    if (isTerminal(task.state)) return false;
    // A task that ends from an input wait still delivers what it held, before its final status.
    this.#flushHeld(task, task.state);
    const now = this.clock();
    task.state = state;
    task.changedAt = now;
    task.prompt = undefined;
    task.inputWaiter = undefined;
    if (state === "TASK_STATE_COMPLETED" && response) {
      task.response = response;
      // The reply is both the `response` artifact and the agent's last message of the history.
      this.#append(task, replyMessage(task, response));
    }
    task.status = {
      state,
      message: agentMessage(`msg_${task.id}_status`, task, message),
      timestamp: timestamp(now),
    };
    this.journal?.ended(task);
    if (opts.holdEvent) {
      // GetTask answers the new state now; the one final status is written by the next finish().
      this.#finalHeld.add(task.id);
      return true;
    }
    if (task.response && state === "TASK_STATE_COMPLETED") {
      this.log.append(responseInput(task, artifactOf("response", task.response), state));
    }
    this.log.append(statusInput(task, task.status));
    task.markDone();
    return true;
  }

  /** Tasks waiting to start, per lane, in arrival order. */
  queued(): TaskRecord[] {
    return this.all().filter((t) => t.state === "TASK_STATE_SUBMITTED");
  }

  /**
   * The front of the highest non-empty lane (user > peer > bg, FIFO within a lane; README "The
   * door").
   */
  nextQueued(): TaskRecord | undefined {
    const order: Lane[] = ["user", "peer", "bg"];
    const waiting = this.queued();
    for (const lane of order) {
      const t = waiting.find((w) => w.lane === lane);
      if (t) return t;
    }
    return undefined;
  }
}
