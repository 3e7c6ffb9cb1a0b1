/**
 * What a stream view (view.ts) is opened with, and what it hands back: the kinds of connection,
 * the options a door endpoint passes (src/door/streams.ts), the task probe a task stream recovers
 * from lag with, and the error a faulted connection's stream ends with.
 */
import type { StreamResponse, TaskState } from "../a2a/types.ts";
import type { EventLog } from "./log.ts";
import type { WireRebase } from "./wire.ts";

export type ViewKind = "send" | "subscribe" | "watch";

export const METHOD: Record<ViewKind, string> = {
  send: "SendStreamingMessage",
  subscribe: "SubscribeToTask",
  watch: "murmur.WatchSession",
};

/**
 * What a faulted connection's stream is errored with (its fault is already on stderr, said once,
 * by the view): the HTTP layer ends the response with it and need not report it again.
 */
export class ConnectionFault extends Error {
  constructor(readonly line: string, options?: ErrorOptions) {
    super(line, options);
    this.name = "ConnectionFault";
  }
}

/** What a task stream needs to know about its task when it lost events (lagged recovery). */
export interface TaskProbe {
  state(): TaskState;
  /**
   * The task's ending as GetTask reports it: the response artifact (if any) and terminal status.
   */
  ending(): StreamResponse[];
  /** The INPUT_REQUIRED status carrying the prompt. */
  inputRequired(): StreamResponse;
}

export interface ViewOptions {
  kind: ViewKind;
  log: EventLog;
  /** The JSON-RPC request id, echoed verbatim in every event; null: bare HTTP+JSON events. */
  requestId: string | number | null;
  /** Activated connections receive murmur frames (always on watch). */
  activated: boolean;
  heartbeatMs: number;
  /** Task streams: the task's id and its probe. */
  taskId?: string;
  probe?: TaskProbe;
  /** The unnumbered opening event: the `task` (task streams). */
  opening?: StreamResponse;
  /** Watch: the connection-ack frame's conversation mode. */
  conversationMode?: "stateless" | "threaded";
  /** `Last-Event-ID`, when the request carried a numeric one. */
  lastEventId?: number;
  /** stderr line for a connection's fault, and (unless `quietLag`) for a lagged connection. */
  warn(line: string): void;
  /** An edge's connection: mirrored events naming published files are rewritten (wire.ts). */
  rebase?: WireRebase;
  /**
   * No stderr line when this connection lags: on an edge, events missing from Redis reach every
   * watcher of the session at once, and the mirror says that once (src/edge/mirror.ts).
   */
  quietLag?: boolean;
}
