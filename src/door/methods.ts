/**
 * The door's unary methods: SendMessage, GetTask, ListTasks, CancelTask, murmur.StopSession and
 * GetExtendedAgentCard. They answer from the registry at once; only SendMessage without
 * `returnImmediately` waits (for the task to end or ask for input), and that wait is the
 * caller's alone.
 */
import type { Task } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import type { TaskRecord } from "../session/task_record.ts";
import { toA2A } from "../session/task_record.ts";
import { a2aError, invalidParams, taskNotFound, unsupported } from "./jsonrpc.ts";
import { type CallContext, taskFor } from "./call_context.ts";
import { routeMessage, take } from "./send.ts";
import { type ParamsOf, parseParams } from "../a2a/spec.ts";
import { directReplyOf } from "./direct_reply.ts";
import { steerAnswer } from "./steer_message.ts";
import type { Message } from "../a2a/types.ts";

export type { CallContext };
export { taskFor };

/** Resolves when the task is terminal or waits for input. */
function settled(ctx: CallContext, task: TaskRecord): Promise<void> {
  if (isTerminal(task.state) || task.state === "TASK_STATE_INPUT_REQUIRED") {
    return Promise.resolve();
  }
  const sub = ctx.session.log.subscribe((e) =>
    e.taskId === task.id && (e.terminal || e.inputRequired)
  );
  return (async () => {
    try {
      while (!isTerminal(task.state) && task.state !== "TASK_STATE_INPUT_REQUIRED") {
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
  })();
}

/**
 * SendMessage. `configuration.returnImmediately` (A2A v1.0; docs/door.md): answer at once; else
 * the call waits until the task ends or asks for input. A wrong-typed configuration was refused
 * by its spec (src/a2a/spec.ts), not read as "wait".
 */
export async function sendMessage(
  ctx: CallContext,
  params: ParamsOf<"SendMessage">,
  headers: Headers = new Headers(),
): Promise<{ task: Task } | { message: Message }> {
  const routed = routeMessage(ctx, params.message);
  const immediate = params.configuration?.returnImmediately === true;
  const history = params.configuration?.historyLength;
  const answer = (t: TaskRecord) => ({ task: toA2A(t, true, history) });
  if (routed.kind === "retry") {
    // The first send's answer, as it would be now: nothing is started or delivered again.
    if (!immediate) await settled(ctx, routed.task);
    return directReplyOf(ctx.session.manifest, routed.task) ?? answer(routed.task);
  }
  const taken = await take(ctx, routed, params.configuration, headers, () => {
    if (!ctx.session.acceptsTasks) {
      throw unsupported("this capsule takes no tasks: its lifecycle.task_acceptance is none");
    }
  });
  if (taken.kind === "steer") {
    // How the running task took it (steer_message.ts); at once with returnImmediately.
    const outcome = immediate ? null : await taken.outcome;
    return { message: steerAnswer(taken.task, params.message.messageId, outcome) };
  }
  if (taken.kind === "reply") {
    const answered = answer(taken.task);
    if (!immediate) await settled(ctx, taken.task);
    return immediate ? answered : answer(taken.task);
  }
  const res = taken.result;
  if (res.kind === "rejected" || immediate) return answer(res.task);
  await settled(ctx, res.task);
  // A one-turn answer with no tool call, under lifecycle.direct_reply: a bare Message.
  return directReplyOf(ctx.session.manifest, res.task) ?? answer(res.task);
}

export function getTask(ctx: CallContext, params: ParamsOf<"GetTask">): Task {
  const task = taskFor(ctx, params.id);
  if (!task) throw taskNotFound(params.id);
  return toA2A(task, true, params.historyLength);
}

export function cancelTask(ctx: CallContext, params: ParamsOf<"CancelTask">): Task {
  const task = taskFor(ctx, params.id);
  if (!task) throw taskNotFound(params.id);
  if (!ctx.session.cancel(task)) {
    throw a2aError(
      "taskNotCancelable",
      `Task cannot be canceled: it is already ${task.state}`,
      { taskId: task.id, state: task.state },
    );
  }
  return toA2A(task);
}

/** One task as ListTasks filters, sorts and answers it (the registry's, or an edge's from Redis). */
export interface ListRow {
  id: string;
  contextId: string;
  state: string;
  changedAt: number;
  /** The task as ListTasks answers it (`historyLength` as GetTask reads it). */
  task(includeArtifacts: boolean, historyLength?: number): Task;
}

/** ListTasks (A2A v1.0; docs/door.md): newest status first, cursor pages. */
export function listTasks(ctx: CallContext, params: ParamsOf<"ListTasks">) {
  return listRowsOf(
    ctx.session.registry.listed().map((t) => ({
      id: t.id,
      contextId: t.contextId,
      state: t.state,
      changedAt: t.changedAt,
      task: (include: boolean, history?: number) => toA2A(t, include, history),
    })),
    params,
  );
}

/** ListTasks over any rows, its params as they came (src/edge/ reuses it): read by the spec. */
export function listRows(rows: ListRow[], params: Record<string, unknown>) {
  const read = parseParams("ListTasks", params);
  if (!read.ok) throw invalidParams(read.message);
  return listRowsOf(rows, read.params);
}

/** ListTasks over any rows: filters, order and pages. */
function listRowsOf(rows: ListRow[], params: ParamsOf<"ListTasks">) {
  const { contextId, status, historyLength: history, pageToken: tokenRaw } = params;
  const afterMs = params.statusTimestampAfter;
  const include = params.includeArtifacts;
  const pageSize = params.pageSize ?? 50;
  const cursor = tokenRaw ? decodeCursor(tokenRaw) : null;
  if (tokenRaw && !cursor) {
    throw invalidParams(
      "Invalid params: pageToken is not a nextPageToken this door issued; start again without it",
    );
  }
  const matching = rows
    .filter((t) =>
      (contextId === undefined || t.contextId === contextId) &&
      (status === undefined || t.state === status) &&
      (afterMs === undefined || t.changedAt >= afterMs)
    )
    .sort(newestFirst);
  // The cursor names the last task of the previous page by (last change, id): the next page is
  // what sorts after it, so tasks that changed meanwhile move without repeating the page.
  const start = cursor
    ? matching.findIndex((t) => newestFirst(t, { changedAt: cursor.at, id: cursor.id }) > 0)
    : 0;
  const from = start < 0 ? matching.length : start;
  const page = matching.slice(from, from + pageSize);
  const last = page[page.length - 1];
  const more = from + pageSize < matching.length;
  return {
    tasks: page.map((t) => t.task(include === true, history)),
    nextPageToken: more && last ? encodeCursor(last.changedAt, last.id) : "",
    pageSize,
    totalSize: matching.length,
  };
}

/** Newest last change first; equal times by id, descending (ids are time-ordered UUIDv7). */
function newestFirst(
  a: { changedAt: number; id: string },
  b: { changedAt: number; id: string },
): number {
  return b.changedAt - a.changedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

function encodeCursor(at: number, id: string): string {
  return btoa(JSON.stringify([at, id])).replace(/=+$/, "");
}

function decodeCursor(token: string): { at: number; id: string } | null {
  try {
    const v = JSON.parse(atob(token));
    if (
      Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && typeof v[1] === "string"
    ) {
      return { at: v[0], id: v[1] };
    }
  } catch {
    // not a token this door wrote: refused by the caller
  }
  return null;
}

export function stopSession(ctx: CallContext) {
  return ctx.session.stop();
}

export function extendedCard(ctx: CallContext): unknown {
  if (ctx.extendedCard === null) {
    throw unsupported("this agent serves no extended agent card");
  }
  return ctx.extendedCard;
}
