/**
 * Reading a `trace.jsonl` (docs/running.md "Files": trace.jsonl; every line is src/trace_events.ts): one
 * JSON object per line with the envelope `event_type, event_id, parent_id, session_id, timestamp`,
 * then the event's fields.
 */
import { errorMessage, MurError } from "../errors.ts";

/** A trace line: the envelope, then the event's own fields. */
export interface TraceEvent {
  event_type: string;
  event_id: string;
  parent_id: string | null;
  session_id: string;
  timestamp: number;
  [field: string]: unknown;
}

/**
 * Whether a parsed line carries the envelope. Checked by hand, not with a schema library, so that
 * `mur trace` loads none at start (docs/benchmarks.md "Cost per session");
 * tests/cli/trace_envelope_test.ts holds it to the zod schema it replaced.
 */
export function isTraceEvent(v: unknown): v is TraceEvent {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  return typeof e.event_type === "string" && typeof e.event_id === "string" &&
    (e.parent_id === null || typeof e.parent_id === "string") &&
    typeof e.session_id === "string" && typeof e.timestamp === "number" &&
    Number.isFinite(e.timestamp);
}

/**
 * One session's lines, in file order. Malformed lines and a trace without session_start are
 * E-TRC-001. A file an older mur appended several sessions to (one `--workdir` used twice) is
 * read for `sessionId`, or for its last session when none is named.
 */
export async function readTrace(path: string, sessionId?: string | null): Promise<TraceEvent[]> {
  const all = await readTraceFile(path);
  const starts = all.filter((e) => e.event_type === "session_start").map((e) => e.session_id);
  const want = sessionId ?? starts.at(-1);
  if (new Set(starts).size <= 1 && (sessionId == null || starts[0] === sessionId)) return all;
  const mine = all.filter((e) => e.session_id === want);
  if (!mine.some((e) => e.event_type === "session_start")) {
    throw new MurError("E-TRC-002", `${path} holds no session ${want}`);
  }
  return mine;
}

/** The sessions a trace file holds, in the order they started. */
export function sessionsOf(events: TraceEvent[]): string[] {
  return events.filter((e) => e.event_type === "session_start").map((e) => e.session_id);
}

async function readTraceFile(path: string): Promise<TraceEvent[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new MurError("E-TRC-001", `could not read ${path}: ${errorMessage(e)}`);
  }
  const events: TraceEvent[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    // The last line of a live session's trace may be half written: skip it rather than fail.
    const last = i === lines.length - 1;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      if (last) return;
      throw new MurError(
        "E-TRC-001",
        `${path}:${i + 1}: the line is not JSON`,
        "the trace is damaged; nothing was changed",
      );
    }
    if (!isTraceEvent(json)) {
      throw new MurError(
        "E-TRC-001",
        `${path}:${
          i + 1
        }: the line lacks the trace envelope (event_type, event_id, parent_id, session_id, timestamp)`,
        "the trace is damaged; nothing was changed",
      );
    }
    events.push(json);
  });
  if (events.length === 0) {
    throw new MurError(
      "E-TRC-001",
      `${path} is empty`,
      "a launch that failed before session_start leaves an empty trace",
    );
  }
  if (!events.some((e) => e.event_type === "session_start")) {
    throw new MurError(
      "E-TRC-001",
      `${path} has no session_start`,
      "the trace is damaged or not a murmur trace",
    );
  }
  return events;
}

/** Field readers that tolerate absent or mistyped fields (a trace from another version). */
export const num = (e: TraceEvent | undefined, k: string): number | undefined =>
  typeof e?.[k] === "number" ? (e[k] as number) : undefined;
export const str = (e: TraceEvent | undefined, k: string): string | undefined =>
  typeof e?.[k] === "string" ? (e[k] as string) : undefined;

/** `1234` → `1.234s`, `61000` → `1m01s`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return "?";
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(3).replace(/\.?0+$/, "")}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${m}m${String(s).padStart(2, "0")}s`;
}

/** A JSON value on one line, cut at `max` characters with `…`. */
export function short(value: unknown, max = 120): string {
  const s = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  const one = s.replaceAll("\n", "\\n");
  return one.length > max ? one.slice(0, max) + "…" : one;
}

/**
 * A trace line's turn as people count it: trace.jsonl's `turn` is 0-based (src/trace_events.ts), while the stream says `inference turn 1` for a task's first turn; every reader shows
 * the stream's number.
 */
export function turnNumber(e: TraceEvent | undefined): string {
  const t = num(e, "turn");
  return t === undefined ? "?" : String(t + 1);
}

/** `tsk a1b2c3`: the label `mur watch` shows for a task (its id's last 6 hex digits). */
export function taskTag(id: string | undefined): string {
  if (id === undefined) return "tsk ?";
  return /^tsk_[0-9a-f]{32}$/.test(id) ? `tsk ${id.slice(-6)}` : `tsk ${id}`;
}
