/**
 * The three stream endpoints (docs/protocol.md "Endpoints"): SendStreamingMessage, SubscribeToTask
 * and murmur.WatchSession. Every refusal is one JSON-RPC body before any stream opens; a stream is
 * an event view over the session's log.
 */
import type { StreamResponse } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import { DOOR_URI, STREAM_URI } from "../events/frames.ts";
import { openView, type TaskProbe, type ViewKind } from "../events/view.ts";
import type { TaskRecord } from "../session/task_record.ts";
import { artifactOf, toA2A } from "../session/task_record.ts";
import { frameOf } from "../events/wire.ts";
import { RpcError, taskNotFound, unsupported } from "./jsonrpc.ts";
import { type CallContext, taskFor } from "./call_context.ts";
import { routeMessage, take } from "./send.ts";
import {
  activates,
  lastEventId,
  noTaskToSubscribe,
  sseResponse,
  taskEnded,
} from "./sse_response.ts";
import type { ParamsOf } from "../a2a/spec.ts";
import { directDecided, directReplyOf } from "./direct_reply.ts";

export interface StreamRequest {
  /** The JSON-RPC request id its events echo; null: the HTTP+JSON binding (bare events). */
  id: string | number | null;
  params: Record<string, unknown>;
  headers: Headers;
  heartbeatMs: number;
  warn(line: string): void;
}

function probeOf(task: TaskRecord): TaskProbe {
  return {
    state: () => task.state,
    ending: () => {
      const out: StreamResponse[] = [];
      if (task.state === "TASK_STATE_COMPLETED" && task.response) {
        out.push({
          artifactUpdate: {
            taskId: task.id,
            contextId: task.contextId,
            artifact: artifactOf("response", task.response),
            lastChunk: true,
          },
        });
      }
      out.push({
        statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status },
      });
      return out;
    },
    inputRequired: () => ({
      statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status },
    }),
  };
}

function taskView(
  ctx: CallContext,
  req: StreamRequest,
  kind: ViewKind,
  task: TaskRecord,
  opening: StreamResponse,
  extensions: string[],
  /** Replay from here rather than from the request's Last-Event-ID (a held direct reply). */
  replayFrom?: number,
): Response {
  const activated = activates(req.headers);
  const body = openView({
    kind,
    log: ctx.session.log,
    requestId: req.id,
    activated,
    heartbeatMs: req.heartbeatMs,
    taskId: task.id,
    probe: probeOf(task),
    opening,
    lastEventId: replayFrom ?? lastEventId(req.headers),
    warn: req.warn,
  });
  return sseResponse(body, activated ? [...extensions, STREAM_URI] : extensions);
}

/** A stream of exactly one unnumbered event, then its end. */
function oneEvent(req: StreamRequest, result: StreamResponse, ext: string[]): Response {
  const one = new TextEncoder().encode(frameOf(req.id, JSON.stringify(result)));
  return sseResponse(
    new ReadableStream({
      start(c) {
        c.enqueue(one);
        c.close();
      },
    }),
    ext,
  );
}

/** A capsule that takes no tasks does not stream (answered before the params are read). */
export function refuseStreamsWithoutTasks(ctx: CallContext): void {
  if (!ctx.session.acceptsTasks) {
    throw unsupported(
      "this capsule does not stream: its lifecycle.task_acceptance is none, so it takes no tasks",
    );
  }
}

export async function sendStreaming(
  ctx: CallContext,
  req: StreamRequest,
  params: ParamsOf<"SendStreamingMessage">,
): Promise<Response> {
  refuseStreamsWithoutTasks(ctx);
  const routed = routeMessage(ctx, params.message);
  const ext = routed.msg.usedDoorExtension ? [DOOR_URI] : [];
  const history = params.configuration?.historyLength;
  const opening = (t: TaskRecord): StreamResponse => ({ task: toA2A(t, true, history) });
  if (routed.kind === "retry") {
    // The same stream again, resumed by the replay rules (Last-Event-ID): nothing new starts. A
    // task that has ended replays what the client missed up to its final status, then ends
    // (view.ts); one that waits for input has nothing live to follow: its state is the answer.
    const direct = directReplyOf(ctx.session.manifest, routed.task);
    if (direct) return oneEvent(req, direct, ext);
    if (routed.task.state === "TASK_STATE_INPUT_REQUIRED") {
      return oneEvent(req, opening(routed.task), ext);
    }
    return taskView(ctx, req, "send", routed.task, opening(routed.task), ext);
  }
  // The new task has no event before this: a held direct reply replays from here.
  const after = ctx.session.log.lastId;
  const taken = await take(ctx, routed, params.configuration, req.headers);
  const task = taken.kind === "new" ? taken.result.task : taken.task;
  if (taken.kind === "new" && taken.result.kind === "rejected") {
    // Exactly one unnumbered `task` event, then the stream ends.
    return oneEvent(req, opening(task), ext);
  }
  if (taken.kind === "new" && ctx.session.manifest.lifecycle.directReply) {
    // The answer is a Message or a task stream, and only the task's first turn tells which: the
    // stream waits until it does, then either writes the one Message, or opens as the task
    // stream it would have been, its events since the submit replayed (nothing is lost).
    const first = opening(task);
    await decided(ctx, task);
    const direct = directReplyOf(ctx.session.manifest, task);
    if (direct) return oneEvent(req, direct, ext);
    return taskView(ctx, req, "send", task, first, ext, after);
  }
  return taskView(ctx, req, "send", task, opening(task), ext);
}

/** Resolves once the task shows whether it is a direct reply (direct_reply.ts). */
async function decided(ctx: CallContext, task: TaskRecord): Promise<void> {
  if (directDecided(task)) return;
  const sub = ctx.session.log.subscribe((e) => e.taskId === task.id);
  try {
    while (!directDecided(task)) {
      if (sub.ended) {
        await task.done;
        break;
      }
      await sub.wait();
      sub.take();
    }
  } finally {
    sub.close();
  }
}

export function subscribeToTask(
  ctx: CallContext,
  req: StreamRequest,
  { id }: ParamsOf<"SubscribeToTask">,
): Response {
  if (!ctx.session.acceptsTasks) {
    throw noTaskToSubscribe();
  }
  const task = taskFor(ctx, id);
  if (!task) throw taskNotFound(id);
  if (isTerminal(task.state)) throw taskEnded(task.id, task.state);
  return taskView(ctx, req, "subscribe", task, { task: toA2A(task) }, []);
}

export function watchSession(ctx: CallContext, req: StreamRequest): Response {
  const body = openView({
    kind: "watch",
    log: ctx.session.log,
    requestId: req.id,
    activated: true,
    heartbeatMs: req.heartbeatMs,
    conversationMode: ctx.session.conversationMode,
    lastEventId: lastEventId(req.headers),
    warn: req.warn,
  });
  return sseResponse(body, [DOOR_URI, STREAM_URI]);
}

export { RpcError };
