/**
 * What `mur attach` keeps from the session's stream (attach.ts): the tasks that wait for a person
 * (a question, or an approval with the hash of the call it would run), the tasks still running,
 * and the conversation a plain line continues. Pure: events in, decisions out, so the choices a
 * line makes are unit-tested without a terminal.
 */
import { classify } from "../watch/schema.ts";
import { stateWord, TERMINAL_WORDS } from "../watch/format.ts";
import { type PendingApproval, pendingApproval } from "./steer_messages.ts";

export interface Waiting {
  taskId: string;
  contextId?: string;
  /** Set when the task waits for an approval rather than an answer. */
  approval: PendingApproval | null;
}

/** What a line typed into `mur attach` does. */
export type LineAction =
  | { kind: "nothing" }
  | { kind: "quit" }
  | { kind: "answer"; taskId: string; text: string }
  | { kind: "task"; text: string; contextId?: string }
  | { kind: "decide"; taskId: string; approve: boolean; argumentsHash: string; reason?: string }
  | { kind: "cancel"; taskId: string }
  | { kind: "steer"; taskId: string; text: string }
  | { kind: "say"; text: string };

export const ATTACH_COMMANDS = "/approve, /deny [reason], /steer [task] text, /cancel, /quit";

export class AttachState {
  /** Tasks waiting for a person, oldest first (a Map keeps insertion order). */
  readonly waiting = new Map<string, Waiting>();
  /** Tasks seen and not ended, oldest first. */
  readonly running = new Map<string, string | undefined>();
  /** Tasks whose newest state is WORKING, oldest first: the ones a steer may go to. */
  readonly working = new Set<string>();
  /** The conversation of the task seen last: where a plain line follows up. */
  lastContext: string | undefined;

  /** One StreamResponse, as `mur watch` read it; returns the task that now waits, if one does. */
  see(result: unknown): Waiting | null {
    const ev = classify(result);
    if (ev.kind !== "status") return null;
    const word = stateWord(ev.state);
    if (ev.contextId) this.lastContext = ev.contextId;
    this.waiting.delete(ev.taskId);
    this.working.delete(ev.taskId);
    if (word === "working") this.working.add(ev.taskId);
    if (TERMINAL_WORDS.has(word)) {
      this.running.delete(ev.taskId);
      return null;
    }
    this.running.delete(ev.taskId);
    this.running.set(ev.taskId, ev.contextId);
    if (word !== "input-required") return null;
    const message = (result as { statusUpdate?: { status?: { message?: unknown } } })
      ?.statusUpdate?.status?.message;
    const w = { taskId: ev.taskId, contextId: ev.contextId, approval: pendingApproval(message) };
    this.waiting.set(ev.taskId, w);
    return w;
  }

  /** The newest task waiting for a question's answer / an approval. */
  private newest(approval: boolean): Waiting | undefined {
    return [...this.waiting.values()].filter((w) => (w.approval !== null) === approval).at(-1);
  }

  /** A typed line → what to do (a plain line answers the newest question, else follows up). */
  line(raw: string): LineAction {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return { kind: "nothing" };
    if (!line.startsWith("/")) {
      const q = this.newest(false);
      if (q) return { kind: "answer", taskId: q.taskId, text: line };
      return {
        kind: "task",
        text: line,
        ...(this.lastContext ? { contextId: this.lastContext } : {}),
      };
    }
    const [cmd, ...rest] = line.trim().split(/\s+/);
    const arg = line.trim().slice(cmd.length).trim();
    switch (cmd) {
      case "/quit":
        return { kind: "quit" };
      case "/approve":
      case "/deny": {
        const a = this.newest(true);
        if (!a) return { kind: "say", text: "no call waits for approval" };
        return {
          kind: "decide",
          taskId: a.taskId,
          approve: cmd === "/approve",
          argumentsHash: a.approval!.argumentsHash,
          ...(cmd === "/deny" && arg !== "" ? { reason: arg } : {}),
        };
      }
      case "/cancel": {
        const named = rest[0]?.toLowerCase();
        const ids = [...this.running.keys()];
        const id = named ? ids.find((t) => t.endsWith(named)) : ids.at(-1);
        if (!id) {
          return {
            kind: "say",
            text: named ? `no running task ends in ${named}` : "no task is running",
          };
        }
        return { kind: "cancel", taskId: id };
      }
      case "/steer":
        return this.steer(rest, arg);
      default:
        return { kind: "say", text: `unknown command ${cmd}: ${ATTACH_COMMANDS}` };
    }
  }

  /**
   * `/steer TEXT` steers the newest working task; `/steer TASK TEXT` the working task whose id
   * ends in TASK (a first word that names no working task is part of the text).
   */
  private steer(words: string[], arg: string): LineAction {
    const ids = [...this.working];
    const first = words[0]?.toLowerCase() ?? "";
    const named = words.length > 1 && first.length >= 4
      ? ids.find((t) => t.toLowerCase().endsWith(first))
      : undefined;
    const text = named ? arg.slice(words[0].length).trim() : arg;
    if (text === "") return { kind: "say", text: "usage: /steer [task] text" };
    const id = named ?? ids.at(-1);
    if (!id) return { kind: "say", text: "no task is working: a steer goes to a working task" };
    return { kind: "steer", taskId: id, text };
  }
}
