/**
 * The terminal renderer of mur watch (docs/protocol.md "What mur watch does"): StreamResponses
 * in, pieces of stdout and stderr out. No I/O here; the caller writes each piece as it comes.
 *
 * Text is printed as it arrives, so stdout is not always at the start of a line: the renderer
 * remembers that, and ends the open line before the next status or artifact line.
 *
 * On a `threaded` session (connection-ack's conversationMode), lines of several contexts
 * interleave, so every stdout line starts with its context's label, `[ctx a1b2c3] `, and text of
 * one context never continues on a line another context's text opened.
 *
 * Status lines name their task, `[tsk a1b2c3] ` (the last 6 hex digits of its id), once the watch
 * has seen more than one task (a queued task canceled or rejected without ever running included),
 * or from the first line with `labels` (`mur watch --labels`). A session that runs one task, and a
 * watch of one named task (`--task`), read as before. The suffix is what `mur cancel SESSION
 * a1b2c3` takes.
 */
import { classify } from "./schema.ts";
import {
  artifactLines,
  contextLabel,
  paint,
  publishedLine,
  responseLines,
  showControls,
  stateWord,
  statusLine,
  taskLabel,
  TERMINAL_WORDS,
} from "./format.ts";

export interface Out {
  to: "stdout" | "stderr";
  text: string;
}

export interface RenderOptions {
  /** ANSI colour on stdout (only when stdout is a terminal and NO_COLOR is unset). */
  color?: boolean;
  /** stdout is a terminal: control characters in untrusted text are shown, not sent. */
  terminal?: boolean;
  /** Terminal width for wrapping the response; absent in a pipe (no wrapping). */
  width?: number;
  /** Label every status line with its task, not only once a second task shows up. */
  labels?: boolean;
  /** The watch follows one named task (`--task`): no automatic labels, the user named it. */
  oneTask?: boolean;
  /**
   * The command that answers a task waiting for input (`mur answer …`), printed on stderr under
   * its `[input-required]` line; absent: no hint.
   */
  answerCommand?: (taskId: string) => string;
  /** The command that approves or denies a pending approval (`mur approve …`); absent: none. */
  decideCommand?: (verb: "approve" | "deny", taskId: string) => string;
}

export class WatchRenderer {
  conversationMode: "stateless" | "threaded" = "stateless";
  /** True once a capsule-closed frame was read: the caller exits 0. */
  closed = false;
  /** stdout's last byte is not a newline (text that did not end its line). */
  private midLine = false;
  /** The context whose text left the line open (threaded only). */
  private midLineContext: string | undefined;
  /** The `response` artifact of each task, held for its `[completed]` line. */
  private held = new Map<string, string>();
  private color: boolean;
  private terminal: boolean;
  private width?: number;
  private labels: boolean;
  private oneTask: boolean;
  private answerCommand?: (taskId: string) => string;
  private decideCommand?: (verb: "approve" | "deny", taskId: string) => string;
  /** Every task this watch has read an event of. */
  private tasks = new Set<string>();

  constructor(opts: RenderOptions = {}) {
    this.color = opts.color ?? false;
    this.terminal = opts.terminal ?? false;
    this.width = opts.width;
    this.labels = opts.labels ?? false;
    this.oneTask = opts.oneTask ?? false;
    this.answerCommand = opts.answerCommand;
    this.decideCommand = opts.decideCommand;
  }

  /** One StreamResponse (the JSON-RPC `result`) → what to write. */
  handle(result: unknown): Out[] {
    const ev = classify(result);
    // A task first met at its canceled or rejected status (a queued task that never ran) is named
    // even on a session that has shown no other task: that line is all the watch sees of it.
    const firstSight = "taskId" in ev && ev.taskId !== undefined && !this.tasks.has(ev.taskId);
    if ("taskId" in ev && ev.taskId !== undefined) this.tasks.add(ev.taskId);
    switch (ev.kind) {
      case "ignored":
        return [];
      case "response":
        this.held.set(ev.taskId, ev.text);
        return [];
      case "published":
        return this.lines([publishedLine(ev.artifact, (s) => this.safe(s))], ev.contextId);
      case "status": {
        const word = stateWord(ev.state);
        const named = this.labels ||
          (!this.oneTask &&
            (this.tasks.size > 1 || (firstSight && (word === "canceled" || word === "rejected"))));
        const tag = named ? paint(`[${taskLabel(ev.taskId)}]`, "label", this.color) + " " : "";
        const lines = [
          tag +
          statusLine(word, ev.text === undefined ? undefined : this.safe(ev.text), this.color),
        ];
        if (TERMINAL_WORDS.has(word)) {
          const response = this.held.get(ev.taskId);
          this.held.delete(ev.taskId);
          if (word === "completed" && response !== undefined) {
            const wrap = this.width !== undefined
              ? this.width - this.labelWidth(ev.contextId)
              : undefined;
            lines.push(...responseLines(this.safe(response), wrap));
          }
        }
        const out = this.lines(lines, ev.contextId);
        const safeText = ev.text === undefined ? undefined : this.safe(ev.text);
        const decide = this.decideCommand;
        const note = ev.approval && word === "input-required" && decide
          ? `[murmur] ${taskLabel(ev.taskId)} waits for approval; \`${
            decide("approve", ev.taskId)
          }\` or \`${decide("deny", ev.taskId)} --reason TEXT\`\n`
          : statusNote(word, ev.taskId, safeText, this.answerCommand);
        if (note !== null) out.push({ to: "stderr", text: note });
        return out;
      }
      case "frame": {
        const f = ev.frame;
        switch (f.frame) {
          case "text":
            return this.text(this.safe(f.text), ev.contextId);
          case "artifact":
            return this.lines(artifactLines(f, this.color, this.terminal), ev.contextId);
          case "gap":
            return [{
              to: "stderr",
              text:
                `[murmur] warning: gap: events before firstAvailableId ${f.firstAvailableId} are no longer in the capsule's replay buffer and are not shown\n`,
            }];
          case "lagged":
            return [{
              to: "stderr",
              text: `[murmur] warning: lagged: missed ${f.missed} event${
                f.missed === 1 ? "" : "s"
              } this watch fell too far behind to receive\n`,
            }];
          case "connection-ack":
            this.conversationMode = f.conversationMode === "threaded" ? "threaded" : "stateless";
            return [];
          case "capsule-closed":
            this.closed = true;
            return [...this.finish(), { to: "stderr", text: "[murmur] capsule closed\n" }];
        }
      }
    }
    return [];
  }

  /** Ends a line text left open; called before exiting so the shell prompt starts clean. */
  finish(): Out[] {
    if (!this.midLine) return [];
    this.midLine = false;
    this.midLineContext = undefined;
    return [{ to: "stdout", text: "\n" }];
  }

  private safe(text: string): string {
    return showControls(text, this.terminal);
  }

  private threaded(): boolean {
    return this.conversationMode === "threaded";
  }

  private label(contextId: string | undefined): string {
    return this.threaded() ? paint(`[${contextLabel(contextId)}]`, "label", this.color) + " " : "";
  }

  private labelWidth(contextId: string | undefined): number {
    return this.threaded() ? contextLabel(contextId).length + 3 : 0;
  }

  /** Whole lines (a status with its response, an artifact with its continuation lines). */
  private lines(lines: string[], contextId: string | undefined): Out[] {
    const out = this.finish();
    const label = this.label(contextId);
    out.push({ to: "stdout", text: lines.map((l) => label + l + "\n").join("") });
    return out;
  }

  /** Text as it arrives: continues the open line, starting labelled lines on a threaded session. */
  private text(text: string, contextId: string | undefined): Out[] {
    if (text === "") return [];
    const out: Out[] = [];
    if (this.threaded() && this.midLine && this.midLineContext !== contextId) {
      out.push(...this.finish());
    }
    let piece = "";
    if (this.threaded()) {
      const label = this.label(contextId);
      const parts = text.split("\n");
      parts.forEach((part, i) => {
        const last = i === parts.length - 1;
        if (part !== "" && !this.midLine) piece += label;
        piece += part;
        if (!last) {
          piece += "\n";
          this.midLine = false;
        } else if (part !== "") this.midLine = true;
      });
    } else {
      piece = text;
      this.midLine = !text.endsWith("\n");
    }
    this.midLineContext = this.midLine ? contextId : undefined;
    out.push({ to: "stdout", text: piece });
    return out;
  }
}

/**
 * What a status line leaves out, on stderr (scripts read stdout, where a terminal status stays
 * `[<state>]` alone: docs/protocol.md "What mur watch does"): why a task failed, was canceled or
 * rejected, and how to answer a task that waits for input.
 */
export function statusNote(
  word: string,
  taskId: string,
  text: string | undefined,
  answerCommand?: (taskId: string) => string,
): string | null {
  const label = taskLabel(taskId);
  if ((word === "failed" || word === "canceled" || word === "rejected") && text) {
    return `[murmur] ${label} ${word}: ${text.replace(/\s*\n\s*/g, " ")}\n`;
  }
  if (word === "input-required" && answerCommand) {
    return `[murmur] ${label} waits for input; answer with \`${answerCommand(taskId)}\`\n`;
  }
  return null;
}
