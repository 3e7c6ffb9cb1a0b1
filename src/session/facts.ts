/**
 * A fact the loop both traces and streams, recorded by one call: the trace line first, then the
 * task's WORKING status that says it on the stream. keep_working and a reopen are such facts;
 * writing them through here keeps the two records from drifting apart (a status without its
 * line, or fields the line names and the status does not).
 */
import type { TraceEventType, TraceFieldsOf } from "../trace_events.ts";
import type { Registry } from "./registry.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "../trace_writer.ts";

export interface WorkingFact<K extends TraceEventType> {
  /** The trace line: its type, parent and fields. */
  line: K;
  parent: string;
  fields: TraceFieldsOf[K];
  /** The WORKING status message, and the annotation only activated connections see. */
  status: string;
  annotation?: Record<string, unknown>;
}

/** Writes the line, then the status; returns the line's event id. */
export function recordWorking<K extends TraceEventType>(
  d: { trace: TraceWriter; registry: Registry },
  task: TaskRecord,
  fact: WorkingFact<K>,
): string {
  const evt = d.trace.write(fact.line, fact.parent, fact.fields);
  d.registry.status(task, "TASK_STATE_WORKING", fact.status, fact.annotation);
  return evt;
}
