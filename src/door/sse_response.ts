/**
 * An SSE response, the two request headers every stream endpoint reads and its refusals, shared by the door
 * (src/door/streams.ts) and `mur edge` (src/edge/server.ts), so both answer with the same headers:
 * `A2A-Extensions` naming the stream extension activates it; `Last-Event-ID` resumes a stream.
 */
import type { TaskState } from "../a2a/types.ts";
import { STREAM_URI } from "../events/frames.ts";
import { type RpcError, unsupported } from "./jsonrpc.ts";

/** SubscribeToTask on a capsule that takes no tasks (the door's and the edge's refusal). */
export function noTaskToSubscribe(): RpcError {
  return unsupported(
    "this capsule takes no tasks (lifecycle.task_acceptance is none), so there is no task to subscribe to",
  );
}

/** SubscribeToTask on a task that has ended (the door's and the edge's refusal). */
export function taskEnded(taskId: string, state: TaskState): RpcError {
  return unsupported(`task ${taskId} has ended in ${state}; read it with GetTask`, {
    taskId,
    state,
  });
}

/** The request named the stream extension in any A2A-Extensions line (exact match). */
export function activates(headers: Headers): boolean {
  const raw = headers.get("a2a-extensions");
  if (!raw) return false;
  return raw.split(",").map((s) => s.trim()).filter(Boolean).includes(STREAM_URI);
}

/** `Last-Event-ID` as a u64, or undefined when absent or not a number. */
export function lastEventId(headers: Headers): number | undefined {
  const raw = headers.get("last-event-id");
  if (raw === null) return undefined;
  const v = raw.trim();
  if (!/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** An SSE body with the headers every stream answers with, and the extensions it used. */
export function sseResponse(body: ReadableStream<Uint8Array>, extensions: string[]): Response {
  const headers = new Headers({
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
  });
  if (extensions.length) headers.set("A2A-Extensions", extensions.join(", "));
  return new Response(body, { headers });
}
