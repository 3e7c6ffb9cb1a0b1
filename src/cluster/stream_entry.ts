/**
 * One numbered event as a Redis stream entry and back: the capsule's `LogEntry` (src/events/log.ts)
 * becomes entry id `<event id>-0` with the fields below, and an edge turns the fields into the
 * `MirroredEvent` its own log takes, so both frame the same bytes under the same id.
 */
import type { TaskState } from "../a2a/types.ts";
import type { LogEntry, MirroredEvent } from "../events/log.ts";

const dec = new TextDecoder();

/** Fields of an event entry: task, context, state, flags, activated JSON, plain JSON if other. */
export function entryFields(e: LogEntry): string[] {
  const flags = (e.standard ? "s" : "") + (e.terminal ? "T" : "") + (e.inputRequired ? "i" : "");
  const fields = [
    "t",
    e.taskId,
    "c",
    e.contextId,
    "s",
    e.state,
    "f",
    flags,
    "a",
    dec.decode(e.activated),
  ];
  if (e.plain !== null && e.plain !== e.activated) fields.push("p", dec.decode(e.plain));
  return fields;
}

/** The stream entry id of event `id`. */
export const entryId = (id: number) => `${id}-0`;

/** The entry that marks the end of a session's stream, after its last event. */
export const closedId = (lastId: number) => `${lastId}-1`;

export type StreamItem =
  | { kind: "event"; event: MirroredEvent }
  | { kind: "closed"; status?: string }
  | { kind: "unknown"; id: string };

/** An entry as XREAD / XRANGE answer it: `[id, [field, value, …]]`. */
export function readEntry(id: string, fields: string[]): StreamItem {
  const m = /^(\d+)-(\d+)$/.exec(id);
  if (!m) return { kind: "unknown", id };
  if (m[2] !== "0") {
    if (fields[0] !== "closed") return { kind: "unknown", id };
    // The session's status, when the capsule knew it as its stream closed (publisher.ts).
    const at = fields.indexOf("status", 2);
    return at > 0 && at % 2 === 0 && typeof fields[at + 1] === "string"
      ? { kind: "closed", status: fields[at + 1] }
      : { kind: "closed" };
  }
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i], fields[i + 1]);
  const a = f.get("a");
  const t = f.get("t");
  const flags = f.get("f") ?? "";
  if (a === undefined || t === undefined) return { kind: "unknown", id };
  return {
    kind: "event",
    event: {
      id: Number(m[1]),
      taskId: t,
      contextId: f.get("c") ?? "",
      state: (f.get("s") ?? "TASK_STATE_WORKING") as TaskState,
      standard: flags.includes("s"),
      terminal: flags.includes("T"),
      inputRequired: flags.includes("i"),
      activated: a,
      plain: f.get("p") ?? null,
    },
  };
}
