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
import { a2aError, invalidParams, param, taskNotFound, unsupported } from "./jsonrpc.ts";
import { type CallContext, taskFor } from "./call_context.ts";
import { routeMessage, take } from "./send.ts";
import { configHistoryLength, historyLengthOf, int32 } from "./history_length.ts";
import { directReplyOf } from "./direct_reply.ts";
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
 * `configuration.returnImmediately` (A2A v1.0; README "The door"). The rest of `configuration` is
 * ignored, but a wrong-typed configuration is refused rather than read as "wait": a caller that
 * meant not to wait must not be held by a typo in the shape.
 */
function returnImmediately(params: Record<string, unknown>): boolean {
  const cfg = param(params, "configuration");
  if (cfg === undefined || cfg === null) return false;
  if (typeof cfg !== "object" || Array.isArray(cfg)) {
    throw invalidParams("Invalid params: configuration must be a SendMessageConfiguration object");
  }
  const v = param(cfg as Record<string, unknown>, "returnImmediately");
  if (v !== undefined && v !== null && typeof v !== "boolean") {
    throw invalidParams("Invalid params: configuration.returnImmediately must be a boolean");
  }
  return v === true;
}

export async function sendMessage(
  ctx: CallContext,
  params: Record<string, unknown>,
  headers: Headers = new Headers(),
): Promise<{ task: Task } | { message: Message }> {
  const routed = routeMessage(ctx, params);
  const immediate = returnImmediately(params);
  const history = configHistoryLength(params);
  const answer = (t: TaskRecord) => ({ task: toA2A(t, true, history) });
  if (routed.kind === "retry") {
    // The first send's answer, as it would be now: nothing is started or delivered again.
    if (!immediate) await settled(ctx, routed.task);
    return directReplyOf(ctx.session.manifest, routed.task) ?? answer(routed.task);
  }
  const taken = await take(ctx, routed, params, headers, () => {
    if (!ctx.session.acceptsTasks) {
      throw unsupported("this capsule takes no tasks: its lifecycle.task_acceptance is none");
    }
  });
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

function requireId(params: Record<string, unknown>, message: string): string {
  const id = params.id;
  if (typeof id !== "string") throw invalidParams(message);
  return id;
}

export function getTask(ctx: CallContext, params: Record<string, unknown>): Task {
  const id = requireId(params, "GetTask requires an id");
  if (id === "") throw invalidParams("GetTask requires an id");
  const history = historyLengthOf(params);
  const task = taskFor(ctx, id);
  if (!task) throw taskNotFound(id);
  return toA2A(task, true, history);
}

export function cancelTask(ctx: CallContext, params: Record<string, unknown>): Task {
  const id = requireId(params, "Invalid params: CancelTask requires an id");
  const task = taskFor(ctx, id);
  if (!task) throw taskNotFound(id);
  if (!ctx.session.cancel(task)) {
    throw a2aError(
      "taskNotCancelable",
      `Task cannot be canceled: it is already ${task.state}`,
      { taskId: task.id, state: task.state },
    );
  }
  return toA2A(task);
}

/** TaskState by ProtoJSON name and number; UNSPECIFIED (0) filters nothing. */
const STATE_NUMBERS = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
];

/** The ListTasks `status` filter: undefined for none, else a state name. */
function statusFilter(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const name = typeof v === "number" && Number.isInteger(v) ? STATE_NUMBERS[v] : v;
  if (typeof name !== "string" || !STATE_NUMBERS.includes(name)) {
    throw invalidParams(
      `Invalid params: status ${
        JSON.stringify(v)?.slice(0, 80)
      } is not a TaskState; give a TASK_STATE_* name`,
    );
  }
  return name === "TASK_STATE_UNSPECIFIED" ? undefined : name;
}

/** RFC 3339 with a zone (`Z` or an offset), as ProtoJSON writes a Timestamp. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** One task as ListTasks filters, sorts and answers it (the registry's, or an edge's from Redis). */
export interface ListRow {
  id: string;
  contextId: string;
  state: string;
  changedAt: number;
  /** The task as ListTasks answers it (`historyLength` as GetTask reads it). */
  task(includeArtifacts: boolean, historyLength?: number): Task;
}

/** ListTasks (A2A v1.0; README "The door"): newest status first, cursor pages. */
export function listTasks(ctx: CallContext, params: Record<string, unknown>) {
  return listRows(
    ctx.session.registry.all().map((t) => ({
      id: t.id,
      contextId: t.contextId,
      state: t.state,
      changedAt: t.changedAt,
      task: (include: boolean, history?: number) => toA2A(t, include, history),
    })),
    params,
  );
}

/** ListTasks over any rows: the params' checks, filters, order and pages (src/edge/ reuses it). */
export function listRows(rows: ListRow[], params: Record<string, unknown>) {
  // ProtoJSON: a null field is an absent one (as for every other ListTasks field).
  const contextId = param(params, "contextId") ?? undefined;
  if (contextId !== undefined && typeof contextId !== "string") {
    throw invalidParams("Invalid params: contextId must be a string");
  }
  const status = statusFilter(param(params, "status"));
  const pageSizeRaw = param(params, "pageSize");
  let pageSize = 50;
  if (pageSizeRaw !== undefined && pageSizeRaw !== null) {
    const n = int32(pageSizeRaw);
    if (n === null || n < 1 || n > 100) {
      throw invalidParams("Invalid params: pageSize must be an integer from 1 to 100");
    }
    pageSize = n;
  }
  const history = historyLengthOf(params);
  const after = param(params, "statusTimestampAfter");
  let afterMs: number | undefined;
  if (after !== undefined && after !== null) {
    afterMs = typeof after === "string" && RFC3339.test(after) ? Date.parse(after) : NaN;
    if (Number.isNaN(afterMs)) {
      throw invalidParams(
        "Invalid params: statusTimestampAfter must be an RFC 3339 timestamp such as 2026-10-13T09:00:00.123Z",
      );
    }
  }
  const include = param(params, "includeArtifacts");
  if (include !== undefined && include !== null && typeof include !== "boolean") {
    throw invalidParams("Invalid params: includeArtifacts must be a boolean");
  }
  const tokenRaw = param(params, "pageToken");
  if (tokenRaw !== undefined && tokenRaw !== null && typeof tokenRaw !== "string") {
    throw invalidParams("Invalid params: pageToken must be a string");
  }
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
