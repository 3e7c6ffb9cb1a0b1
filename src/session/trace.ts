/**
 * `trace.jsonl`: one JSON line per runtime event, envelope first (`event_type, event_id,
 * parent_id, session_id, timestamp`), then the event's fields. Lines are written synchronously,
 * so what a SIGKILL interrupts is only the line being written, and the order is the call order.
 * What a line may hold is `src/trace_events.ts`: the writer takes nothing else.
 */
import { errorMessage, MurError } from "../errors.ts";
import { IdSource } from "../ids.ts";
import type { TraceEventType, TraceFieldsOf } from "../trace_events.ts";

/** The envelope every line opens with. */
export interface TraceEnvelope {
  event_id: string;
  parent_id: string | null;
  session_id: string;
  timestamp: number;
}

/** One line's text (with its newline): the envelope, then the fields in the caller's order. */
export function traceLine<K extends TraceEventType>(
  eventType: K,
  envelope: TraceEnvelope,
  fields: TraceFieldsOf[K],
): string {
  return JSON.stringify({ event_type: eventType, ...envelope, ...fields }) + "\n";
}

export class TraceWriter {
  #file: Deno.FsFile | null;
  #failed: MurError | null = null;
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

  /** Writes one line and returns its `event_id` (the parent of later lines). */
  write<K extends TraceEventType>(
    eventType: K,
    parentId: string | null,
    fields: TraceFieldsOf[K],
  ): string {
    const eventId = this.ids.next("evt");
    if (!this.#file || this.#failed) return eventId;
    const line = traceLine(eventType, {
      event_id: eventId,
      parent_id: parentId,
      session_id: this.sessionId,
      timestamp: this.clock(),
    }, fields);
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
    }
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
