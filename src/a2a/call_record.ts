/**
 * One A2A request as an OpenTelemetry span records it (docs/opentelemetry.md "A2A spans"): a
 * crew call's request to a member's door (`client`) or a request to this capsule's door
 * (`server`). The door and the crew calls report these; src/otel/a2a_spans.ts turns each into
 * an `a2a.client` / `a2a.server` span named for its method.
 */
export interface A2aCallRecord {
  side: "client" | "server";
  /** `SendMessage`, `GetTask`, … (`a2a.method.name`). */
  method: string;
  startedAt: number;
  endedAt: number;
  /** The task the request is about: its params' id, or the task the answer names. */
  taskId?: string;
  /** That task's state in the answer (or once the request was handled). */
  state?: string;
  contextId?: string;
  /** The message the request carried (SendMessage, SendStreamingMessage). */
  messageId?: string;
  /** Why it failed (an A2A error, a refusal, no answer); absent when it did not. */
  error?: string;
  /** The client's peer: the member's door (`host:port`). */
  peer?: string;
}

/** Reads the ids a request's params and answer name, for a record. */
export function idsOf(
  params: Record<string, unknown>,
  result?: Record<string, unknown>,
): Pick<A2aCallRecord, "taskId" | "state" | "contextId" | "messageId"> {
  const msg = (params.message ?? {}) as Record<string, unknown>;
  const task = (result?.task ?? (result && "status" in result ? result : undefined)) as
    | Record<string, unknown>
    | undefined;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const taskId = str(task?.id) ?? str(params.id) ?? str(msg.taskId);
  const state = str((task?.status as Record<string, unknown> | undefined)?.state);
  const contextId = str(task?.contextId) ?? str(msg.contextId);
  const messageId = str(msg.messageId);
  return {
    ...(taskId && { taskId }),
    ...(state && { state }),
    ...(contextId && { contextId }),
    ...(messageId && { messageId }),
  };
}
