/**
 * `trace.jsonl`: one JSON line per runtime event, envelope first (`event_type, event_id,
 * parent_id, session_id, timestamp`), then the event's fields. Lines are written synchronously,
 * so what a SIGKILL interrupts is only the line being written, and the order is the call order.
 * What a line may hold is `src/trace_events.ts`: the writer takes nothing else.
 */
import { errorMessage, MurError } from "./errors.ts";
import { IdSource } from "./ids.ts";
import type { TraceEvent, TraceEventType, TraceFieldsOf } from "./trace_events.ts";

/** The envelope every line opens with. */
export interface TraceEnvelope {
  event_id: string;
  parent_id: string | null;
  session_id: string;
  timestamp: number;
}

/** One trace line as the writer wrote it: envelope and fields (what an observer is told). */
export type TraceLine = TraceEvent & TraceEnvelope;

/** One line's text (with its newline): the envelope, then the fields in the caller's order. */
export function traceLine<K extends TraceEventType>(
  eventType: K,
  envelope: TraceEnvelope,
  fields: TraceFieldsOf[K],
): string {
  return JSON.stringify({ event_type: eventType, ...envelope, ...fields }) + "\n";
}

/** Something that sees every line as it is written (src/otel/: the OpenTelemetry export). */
export type TraceObserver = (line: TraceEvent & TraceEnvelope) => void;

export class TraceWriter {
  #file: Deno.FsFile | null;
  #failed: MurError | null = null;
  #observer: TraceObserver | null = null;
  readonly #enc = new TextEncoder();

  constructor(
    readonly path: string,
    readonly sessionId: string,
    private readonly onFailure: (e: MurError) => void = () => {},
    private readonly clock: () => number = Date.now,
    private readonly ids: IdSource = new IdSource(clock),
  ) {
    this.#file = Deno.openSync(path, { create: true, append: true, mode: 0o644 });
  }

  get failed(): MurError | null {
    return this.#failed;
  }

  /**
   * One observer hears each line once it is written. It is a view of the trace, never a part of
   * it: an observer that throws is dropped and the session goes on (logged to `onObserverError`).
   */
  observe(observer: TraceObserver, onObserverError: (e: unknown) => void = () => {}): void {
    this.#observer = (line) => {
      try {
        observer(line);
      } catch (e) {
        this.#observer = null;
        onObserverError(e);
      }
    };
  }

  /** Writes one line and returns its `event_id` (the parent of later lines). */
  write<K extends TraceEventType>(
    eventType: K,
    parentId: string | null,
    fields: TraceFieldsOf[K],
  ): string {
    const eventId = this.ids.next("evt");
    if (!this.#file || this.#failed) return eventId;
    const envelope = {
      event_id: eventId,
      parent_id: parentId,
      session_id: this.sessionId,
      timestamp: this.clock(),
    };
    const line = traceLine(eventType, envelope, fields);
    try {
      const bytes = this.#enc.encode(line);
      let off = 0;
      while (off < bytes.length) off += this.#file.writeSync(bytes.subarray(off));
    } catch (e) {
      this.#failed = new MurError(
        "E-RUN-007",
        `the session trace could not be written (${this.path}): ${errorMessage(e)}`,
        "check the disk and the workdir's permissions; the session ends",
      );
      this.onFailure(this.#failed);
      return eventId;
    }
    this.#observer?.(
      { event_type: eventType, ...envelope, ...fields } as TraceEvent & TraceEnvelope,
    );
    return eventId;
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
