/**
 * `mur run --resume [SESSION]` (docs/hooks.md "Resuming a session"): a new session continuing the
 * context of a finished one. The old session's trace.jsonl gives the context (its first
 * `task_start`) and the detached shells it never accounted for; its conversation record gives the
 * history. Each lost command is reported once: the report task is enqueued here and every command
 * it names is marked `shell_lost` in the old trace, so a second resume of the same session reports
 * nothing.
 */
import type { ConversationMessage } from "../drivers/types.ts";
import { errorMessage, MurError } from "../errors.ts";
import { newId } from "../ids.ts";
import { loadConversation } from "./conversation_record.ts";
import { traceLine } from "../trace_writer.ts";
import { loadJournal } from "./task_journal.ts";
import { DEFAULT_HISTORY_LIMIT } from "./task_history.ts";
import type { TaskRecord } from "./task_record.ts";

export interface LostShell {
  workId: string;
  binary: string;
  command: string;
  /** When it was detached: the `shell_detached` line's timestamp (unix ms). */
  detachedAtMs: number;
}

export interface ResumePlan {
  fromSession: string;
  /** The old session's folder and trace file. */
  fromDir: string;
  trace: string;
  /** `event_id` of the old session_start: the parent of the `shell_lost` lines. */
  sessionStartEvt: string;
  contextId: string;
  history: ConversationMessage[];
  /** The record's last line, cut by a kill mid-write and ignored (its first bytes), or null. */
  tornLine: string | null;
  lost: LostShell[];
  /** The old session's tasks at rest (task_journal.ts), which the new session answers. */
  tasks: TaskRecord[];
}

type Line = Record<string, unknown>;

/** The trace's lines; a half-written last line (a killed runtime) is skipped. */
function readLines(path: string): Line[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    throw new MurError(
      "E-TRC-002",
      `cannot read ${path}: ${errorMessage(e)}`,
      "give a session folder that holds a trace.jsonl",
    );
  }
  const out: Line[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      const v = JSON.parse(raw);
      if (typeof v === "object" && v !== null && !Array.isArray(v)) out.push(v as Line);
    } catch {
      // an interrupted write: nothing after it was written either
    }
  }
  return out;
}

/**
 * Reads what a resume needs from the old session's trace and folder. `sessionId` picks one
 * session from a trace an older mur appended several sessions to (default: its last).
 */
export function planResume(
  trace: string,
  sessionId?: string,
  historyLimit = DEFAULT_HISTORY_LIMIT,
): ResumePlan {
  const fromDir = trace.slice(0, trace.lastIndexOf("/")) || ".";
  const every = readLines(trace);
  const starts = every.filter((l) => l.event_type === "session_start").map((l) => l.session_id);
  const want = sessionId ?? starts.at(-1);
  const lines = new Set(starts).size > 1 ? every.filter((l) => l.session_id === want) : every;
  const start = lines.find((l) => l.event_type === "session_start");
  const fromSession = typeof start?.session_id === "string"
    ? start.session_id
    : fromDir.slice(fromDir.lastIndexOf("/") + 1);
  const first = lines.find((l) =>
    l.event_type === "task_start" && typeof l.context_id === "string" && l.context_id !== ""
  );
  if (!first) {
    throw new MurError(
      "E-RUN-016",
      `cannot resume session ${fromSession}: its trace.jsonl records no task_start carrying a context id`,
      "resume a session that ran a task, or start a new one without --resume",
    );
  }
  const contextId = first.context_id as string;
  const record = loadConversation(fromDir, contextId);
  if (record === null) {
    throw new MurError(
      "E-RUN-017",
      `cannot resume session ${fromSession}: context '${contextId}' has no readable conversation record (${fromDir}/conversation/${contextId}.jsonl)`,
      "the record was removed or never written; start a new session, with --context to keep the context id",
    );
  }
  const accounted = new Set(
    lines.filter((l) =>
      l.event_type === "shell_completed" || l.event_type === "shell_abandoned" ||
      l.event_type === "shell_lost"
    ).map((l) => l.work_id),
  );
  const lost: LostShell[] = lines
    .filter((l) => l.event_type === "shell_detached" && !accounted.has(l.work_id))
    .map((l) => ({
      workId: String(l.work_id),
      binary: String(l.binary),
      command: String(l.command),
      detachedAtMs: Number(l.timestamp),
    }));
  const journal = loadJournal(
    fromDir,
    historyLimit,
    `task failed: the session ${fromSession} that ran it ended before the task did (it was killed)`,
  );
  return {
    fromSession,
    fromDir,
    tasks: journal?.tasks ?? [],
    trace,
    sessionStartEvt: typeof start?.event_id === "string" ? start.event_id : "",
    contextId,
    history: record.messages,
    tornLine: record.torn,
    lost,
  };
}

/** The report task's text: a report of loss, not a result. */
export function lossReport(plan: ResumePlan): string {
  const n = plan.lost.length;
  const lines = plan.lost.map((l) =>
    `- ${l.workId}: \`${l.binary}\` \`${l.command}\`, detached at ${
      new Date(l.detachedAtMs).toISOString()
    }`
  );
  return `The session ${plan.fromSession}, which this session resumes, ended without reporting ` +
    `${n} background command${n === 1 ? "" : "s"}: its runtime stopped before ${
      n === 1 ? "it" : "they"
    } could be accounted for.\n${lines.join("\n")}\n` +
    `This is a report of loss, not a result: there is no exit code, no output and no log for ` +
    `${n === 1 ? "this command" : "these commands"}, and whether ${
      n === 1 ? "it" : "each"
    } finished is unknown. Nothing was recovered; run ${
      n === 1 ? "it" : "them"
    } again if the result is still needed.`;
}

/** Appends one `shell_lost` line per reported command to the old session's trace. */
export function markLost(plan: ResumePlan, bySession: string, taskId: string): void {
  let text = "";
  for (const l of plan.lost) {
    text += traceLine("shell_lost", {
      event_id: newId("evt"),
      parent_id: plan.sessionStartEvt || null,
      session_id: plan.fromSession,
      timestamp: Date.now(),
    }, {
      work_id: l.workId,
      binary: l.binary,
      command: l.command,
      detached_at_ms: l.detachedAtMs,
      reconciled_by_session: bySession,
      reconciled_task_id: taskId,
    });
  }
  if (text === "") return;
  // A runtime killed mid-write leaves a last line without its newline: start on a fresh line.
  let sep = "";
  try {
    const bytes = Deno.readFileSync(plan.trace);
    if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) sep = "\n";
  } catch {
    // written below or failing there
  }
  Deno.writeTextFileSync(plan.trace, sep + text, { append: true });
}
