/**
 * How mur watch writes one line of each kind. Pure string functions, so the exact bytes are
 * unit-testable and the same with or without a terminal (colour aside).
 */
import type { ArtifactFrameIn } from "./schema.ts";

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`; anything else unprefixed is kept as sent. */
export function stateWord(state: string): string {
  return state.startsWith("TASK_STATE_")
    ? state.slice("TASK_STATE_".length).toLowerCase().replaceAll("_", "-")
    : state.toLowerCase();
}

export const TERMINAL_WORDS: ReadonlySet<string> = new Set([
  "completed",
  "failed",
  "canceled",
  "rejected",
]);

const ESC = "\x1b[";
const COLOURS: Record<string, string> = {
  submitted: "2",
  working: "36",
  "input-required": "33",
  completed: "32",
  failed: "31",
  canceled: "35",
  rejected: "31",
  artifact: "34",
  "artifact-error": "31",
  label: "2",
};

export function paint(text: string, key: string, color: boolean): string {
  const code = COLOURS[key];
  return color && code ? `${ESC}${code}m${text}${ESC}0m` : text;
}

/**
 * On a terminal, control characters in untrusted text (model output, tool results) are shown
 * in caret notation instead of being interpreted: a tool's output must not drive the terminal.
 * Pipes get the bytes unchanged.
 */
export function showControls(text: string, terminal: boolean): string {
  if (!terminal) return text;
  return text.replace(
    // deno-lint-ignore no-control-regex
    /[\x00-\x08\x0b-\x1f\x7f]/g,
    (c) => c === "\x7f" ? "^?" : `^${String.fromCharCode(c.charCodeAt(0) + 64)}`,
  );
}

/** `[working] inference turn 1`; a terminal status (or one without a message) is `[<state>]` alone. */
export function statusLine(word: string, text: string | undefined, color: boolean): string {
  const head = paint(`[${word}]`, word, color);
  if (TERMINAL_WORDS.has(word) || text === undefined || text === "") return head;
  return `${head} ${text}`;
}

const OPEN = "<untrusted-content source=";
const CLOSE = "\n</untrusted-content>";

/**
 * The content between the untrusted fence's markers (the line already names the tool), with
 * any runtime note written after the closer kept. Content that is not a well-formed fence is
 * shown as it is.
 */
export function unfence(content: string, fenceSource: string | null | undefined): string {
  if (typeof fenceSource !== "string" || !content.startsWith(OPEN)) return content;
  const nl = content.indexOf("\n");
  const close = content.lastIndexOf(CLOSE);
  if (nl < 0 || close < nl) return content;
  return content.slice(nl + 1, close) + content.slice(close + CLOSE.length);
}

/**
 * `[artifact] tool: bash [ok, exit 0, 12ms] | first line`, then the content's other lines and
 * one line per attachment, each indented two spaces. The bracket holds `ok` or `error`, then
 * `exit <n>` when an exit code is known, `<n>ms` when a duration is, and `truncated` when set.
 */
export function artifactLines(f: ArtifactFrameIn, color: boolean, terminal = false): string[] {
  const bits = [f.isError ? "error" : "ok"];
  if (f.exitCode !== null && f.exitCode !== undefined) bits.push(`exit ${f.exitCode}`);
  if (f.durationMs !== null && f.durationMs !== undefined) bits.push(`${f.durationMs}ms`);
  if (f.truncated) bits.push("truncated");
  const content = showControls(unfence(f.content, f.fenceSource), terminal).replace(/\n+$/, "");
  const lines = content === "" ? [] : content.split("\n");
  const tag = paint("[artifact]", f.isError ? "artifact-error" : "artifact", color);
  const head = `${tag} tool: ${f.toolName} [${bits.join(", ")}]`;
  const out = [lines.length ? `${head} | ${lines[0]}` : head];
  for (const line of lines.slice(1)) out.push(`  ${line}`);
  for (const a of f.attachments ?? []) {
    out.push(`  attachment: ${a.mediaType}, ${a.sizeBytes} bytes, ${a.url}`);
  }
  return out;
}

/** A size as a person reads it: `512 B`, `1.2 KiB`, `5.0 MiB`. */
function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * One line per published file or data (docs/protocol.md "Files and data"):
 * `[artifact] report.md text/markdown 1.2 KiB inline`, `[artifact] big.bin … url <url>`.
 */
export function publishedLine(
  a: { name: string; mediaType?: string; how: string; bytes?: number; url?: string },
  safe: (s: string) => string,
): string {
  const parts = ["[artifact]", safe(a.name)];
  if (a.mediaType) parts.push(safe(a.mediaType));
  if (a.how === "inline") parts.push(size(a.bytes ?? 0), "inline");
  else if (a.how === "url") parts.push("url", safe(a.url ?? ""));
  else parts.push("data");
  return parts.join(" ");
}

/**
 * The `response` artifact under its `[completed]` line: every line indented two spaces and,
 * when a width is given (a terminal), word-wrapped to it. Without a width, lines are kept whole
 * so a pipe reads the answer byte for byte.
 */
export function responseLines(text: string, width?: number): string[] {
  const body = text.replace(/\n+$/, "");
  if (body === "") return [];
  const out: string[] = [];
  for (const line of body.split("\n")) {
    if (!width || width <= 12 || line.length + 2 <= width) {
      out.push(`  ${line}`);
      continue;
    }
    let current = "";
    for (const word of line.split(" ")) {
      if (current !== "" && current.length + 1 + word.length + 2 > width) {
        out.push(`  ${current}`);
        current = word;
      } else current = current === "" ? word : `${current} ${word}`;
    }
    out.push(`  ${current}`);
  }
  return out;
}

/**
 * A short label for a task: `tsk` and the last 6 hex digits of its id (what `mur cancel` takes as a
 * task suffix), else the id itself.
 */
export function taskLabel(taskId: string): string {
  const m = /^tsk_[0-9a-f]{26}([0-9a-f]{6})$/.exec(taskId);
  if (m) return `tsk ${m[1]}`;
  return taskId.length > 16 ? `tsk …${taskId.slice(-12)}` : `tsk ${taskId}`;
}

/** A short label for a context on a threaded session: the last 6 hex of a `ctx_` id, else the id. */
export function contextLabel(contextId: string | undefined): string {
  if (!contextId) return "ctx ?";
  const m = /^ctx_[0-9a-f]{26}([0-9a-f]{6})$/.exec(contextId);
  if (m) return `ctx ${m[1]}`;
  return contextId.length > 16 ? `ctx …${contextId.slice(-12)}` : `ctx ${contextId}`;
}
