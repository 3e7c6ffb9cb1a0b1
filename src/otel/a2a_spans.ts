/**
 * A2A requests as spans (docs/opentelemetry.md "A2A spans"), per OpenTelemetry's GenAI
 * conventions for A2A: a crew call's request to a member's door is an `a2a.client` span (kind
 * CLIENT), a request to this capsule's door an `a2a.server` span (kind SERVER), each named for
 * its method (`{a2a.method.name}`), with `a2a.task.id`, `a2a.task.state`, `a2a.message.id` and
 * the context as `gen_ai.conversation.id`. The attribute names are written out here: the pinned
 * @opentelemetry/semantic-conventions (1.45.0) has no `a2a.*` constants yet.
 */
import {
  type Attributes,
  type Context,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from "@opentelemetry/semantic-conventions";
import { ATTR_GEN_AI_CONVERSATION_ID } from "@opentelemetry/semantic-conventions/incubating";
import type { A2aCallRecord } from "../a2a/call_record.ts";

export const A2A = {
  method: "a2a.method.name",
  taskId: "a2a.task.id",
  taskState: "a2a.task.state",
  messageId: "a2a.message.id",
} as const;

export function a2aAttributes(r: A2aCallRecord): Attributes {
  const [host, port] = r.peer ? splitHost(r.peer) : [undefined, undefined];
  return {
    [A2A.method]: r.method,
    ...(r.taskId && { [A2A.taskId]: r.taskId }),
    ...(r.state && { [A2A.taskState]: r.state }),
    ...(r.messageId && { [A2A.messageId]: r.messageId }),
    ...(r.contextId && { [ATTR_GEN_AI_CONVERSATION_ID]: r.contextId }),
    ...(host && { [ATTR_SERVER_ADDRESS]: host }),
    ...(port !== undefined && { [ATTR_SERVER_PORT]: port }),
  };
}

/** Starts and ends the request's span under `parent`. */
export function a2aSpan(tracer: Tracer, r: A2aCallRecord, parent: Context): void {
  const span = tracer.startSpan(r.method, {
    kind: r.side === "client" ? SpanKind.CLIENT : SpanKind.SERVER,
    startTime: r.startedAt,
    attributes: a2aAttributes(r),
  }, parent);
  if (r.error !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, "a2a_error");
    span.setStatus({ code: SpanStatusCode.ERROR, message: r.error });
  }
  span.end(r.endedAt);
}

function splitHost(peer: string): [string, number | undefined] {
  const m = /^(.*):(\d+)$/.exec(peer);
  return m ? [m[1].replace(/^\[|\]$/g, ""), Number(m[2])] : [peer, undefined];
}
