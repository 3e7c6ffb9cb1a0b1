/**
 * The session folder's `tasks.jsonl` (docs/running.md "Files"): what GetTask answers about each
 * task of the session, kept so that `mur run --resume` answers the tasks of the session it resumes
 * (docs/protocol.md "Task history": "Across --resume"). One JSON line per fact that a task at rest
 * keeps, appended when the registry records it (src/session/registry.ts), never rewritten:
 *
 *   {"t":"task","id","contextId","createdAt","origin","source","dropped"?}   created
 *   {"t":"msg","id","m":<Message>}                                           one history message
 *   {"t":"pub","id","artifact","copy"?}                                      one published artifact
 *   {"t":"end","id","state","status","changedAt","response"?,"noAnswer"?,"residue"?}  its ending
 *
 * A task costs one line per message of its history and per artifact, plus two: no line per event,
 * so a turn's cost does not grow with the session (frames and working statuses are not kept; a
 * task at rest answers neither). Best effort, as the conversation record is: a journal that
 * cannot be written costs a resume its old tasks, nothing else.
 *
 * A resumed session reads the old session's journal once at start (`loadJournal`), keeps each
 * task's newest `lifecycle.history_limit` messages (the rest counted as dropped), and writes what
 * it kept at the head of its own journal, so a resume of a resume still answers every task.
 */
import type { Artifact, Message, TaskState, TaskStatus } from "../a2a/types.ts";
import { isTerminal, timestamp } from "../a2a/types.ts";
import type { Origin, ResidueItem, TaskRecord, TaskSource } from "./task_record.ts";
import { laneOf } from "./task_record.ts";
import { TaskHistory } from "./task_history.ts";
import type { PublishedFile } from "./published_files.ts";

export function journalPath(sessionDir: string): string {
  return `${sessionDir}/tasks.jsonl`;
}

type Line =
  | {
    t: "task";
    id: string;
    contextId: string;
    createdAt: number;
    origin: Origin;
    source: TaskSource;
    dropped?: number;
  }
  | { t: "msg"; id: string; m: Message }
  | { t: "pub"; id: string; artifact: Artifact; copy?: PublishedFile["copy"] }
  | {
    t: "end";
    id: string;
    state: TaskState;
    status: TaskStatus;
    changedAt: number;
    response?: string;
    noAnswer?: string;
    residue?: ResidueItem[];
  };

const enc = new TextEncoder();

/** The writer the registry calls; every method appends at most one line. */
export class TaskJournal {
  #file: Deno.FsFile | null = null;
  #broken = false;

  constructor(readonly path: string) {}

  created(t: TaskRecord, dropped = 0): void {
    this.#write({
      t: "task",
      id: t.id,
      contextId: t.contextId,
      createdAt: t.createdAt,
      origin: t.origin,
      source: t.source,
      ...(dropped > 0 ? { dropped } : {}),
    });
  }

  message(t: TaskRecord, m: Message): void {
    this.#write({ t: "msg", id: t.id, m });
  }

  published(t: TaskRecord, f: PublishedFile): void {
    this.#write({ t: "pub", id: t.id, artifact: f.artifact, ...(f.copy ? { copy: f.copy } : {}) });
  }

  ended(t: TaskRecord): void {
    this.#write({
      t: "end",
      id: t.id,
      state: t.state,
      status: t.status,
      changedAt: t.changedAt,
      ...(t.response !== undefined ? { response: t.response } : {}),
      ...(t.noAnswer !== undefined ? { noAnswer: t.noAnswer } : {}),
      ...(t.residue.length > 0 ? { residue: t.residue } : {}),
    });
  }

  /** A reloaded task, whole: its creation, kept messages, artifacts and ending. */
  carried(t: TaskRecord): void {
    this.created(t, t.history.dropped);
    for (const m of t.history.newest()) this.message(t, m);
    for (const f of t.published) this.published(t, f);
    this.ended(t);
  }

  #write(line: Line): void {
    if (this.#broken) return;
    try {
      this.#file ??= Deno.openSync(this.path, { append: true, create: true });
      const bytes = enc.encode(JSON.stringify(line) + "\n");
      let at = 0;
      while (at < bytes.length) at += this.#file.writeSync(bytes.subarray(at));
    } catch {
      // See the module comment: the journal stops, the session does not.
      this.#broken = true;
    }
  }

  close(): void {
    try {
      this.#file?.close();
    } catch {
      // already closed
    }
    this.#file = null;
  }
}

/** What `loadJournal` read: the tasks, oldest first, and a torn last line's first bytes. */
export interface LoadedJournal {
  tasks: TaskRecord[];
  torn: string | null;
}

/**
 * The tasks of an ended session's journal, as records at rest (terminal; a task the session did
 * not end, because it was killed, is answered as failed with `endedWithout`'s message). Null when
 * the folder has no journal (a session of an older mur). A line that is not JSON ends the read:
 * only a kill mid-append leaves one, and nothing after it was written.
 */
export function loadJournal(
  sessionDir: string,
  limit: number,
  endedWithout: string,
): LoadedJournal | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(journalPath(sessionDir));
  } catch {
    return null;
  }
  const lines = text.split("\n");
  const tail = lines.pop()!;
  const byId = new Map<string, TaskRecord>();
  for (const raw of lines) {
    let l: Line;
    try {
      l = JSON.parse(raw);
    } catch {
      break;
    }
    if (l.t === "task") {
      byId.set(l.id, restTask(l, limit));
      continue;
    }
    const t = byId.get(l.id);
    if (!t) continue;
    if (l.t === "msg") t.history.append(l.m);
    else if (l.t === "pub") {
      t.published.push(l.copy ? { artifact: l.artifact, copy: l.copy } : { artifact: l.artifact });
    } else if (l.t === "end") {
      t.state = l.state;
      t.status = l.status;
      t.changedAt = l.changedAt;
      t.response = l.response;
      t.noAnswer = l.noAnswer;
      t.residue = l.residue ?? [];
    }
  }
  for (const t of byId.values()) {
    if (isTerminal(t.state)) continue;
    // Killed mid-task: nothing will ever end it, so it is answered as ended, not as still running.
    t.state = "TASK_STATE_FAILED";
    t.status = {
      state: t.state,
      message: {
        messageId: `msg_${t.id}_status`,
        contextId: t.contextId,
        taskId: t.id,
        role: "ROLE_AGENT",
        parts: [{ text: endedWithout, mediaType: "text/plain" }],
      },
      timestamp: timestamp(t.changedAt),
    };
  }
  return { tasks: [...byId.values()], torn: tail === "" ? null : tail.slice(0, 80) };
}

function restTask(l: Extract<Line, { t: "task" }>, limit: number): TaskRecord {
  return {
    id: l.id,
    contextId: l.contextId,
    origin: l.origin,
    lane: laneOf(l.origin),
    source: l.source,
    trusted: false,
    text: "",
    createdAt: l.createdAt,
    state: "TASK_STATE_SUBMITTED",
    status: { state: "TASK_STATE_SUBMITTED", timestamp: timestamp(l.createdAt) },
    changedAt: l.createdAt,
    history: new TaskHistory(limit, l.dropped ?? 0),
    published: [],
    residue: [],
    attachments: new Map(),
    abort: new AbortController(),
    indirect: true,
    done: Promise.resolve(),
    markDone: () => {},
  };
}
