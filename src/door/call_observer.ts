/**
 * A door request as an A2A record (src/a2a/call_record.ts) for its `a2a.server` span
 * (docs/opentelemetry.md "A2A spans"): the method, when it was handled, the task its params or
 * its JSON answer name and that task's state; an error answer's message. A streaming answer is
 * recorded as it opened (its events are the stream's, not the request's). Only a door whose
 * session exports spans observes its requests; the answer itself is never changed.
 */
import { type A2aCallRecord, idsOf } from "../a2a/call_record.ts";
import type { Session } from "../session/session.ts";

export async function observedCall(
  method: string,
  params: Record<string, unknown>,
  session: Session,
  observe: (r: A2aCallRecord) => void,
  run: () => Response | Promise<Response>,
): Promise<Response> {
  const startedAt = Date.now();
  let res: Response;
  try {
    res = await run();
  } catch (e) {
    // A refusal the dispatcher answers (an RpcError): the span says why.
    const error = e instanceof Error ? e.message : String(e);
    observe({ side: "server", method, startedAt, endedAt: Date.now(), ...idsOf(params), error });
    throw e;
  }
  let result: Record<string, unknown> | undefined;
  let error: string | undefined;
  if ((res.headers.get("content-type") ?? "").startsWith("application/json")) {
    try {
      const body = await res.clone().json() as Record<string, unknown>;
      const err = body.error as { message?: string } | undefined;
      if (err && typeof err === "object") error = err.message ?? "error";
      else result = (body.result ?? body) as Record<string, unknown>;
    } catch {
      // Not JSON after all: the record names the method only.
    }
  }
  if (!res.ok && error === undefined) error = `HTTP ${res.status}`;
  const ids = idsOf(params, result);
  const state = ids.state ?? (ids.taskId ? session.registry.get(ids.taskId)?.state : undefined);
  observe({
    side: "server",
    method,
    startedAt,
    endedAt: Date.now(),
    ...ids,
    ...(state && { state }),
    ...(error !== undefined && { error }),
  });
  return res;
}
