/**
 * The door's unary methods: SendMessage, GetTask, ListTasks, CancelTask, murmur.StopSession and
 * GetExtendedAgentCard. They answer from the registry at once; only SendMessage without
 * `returnImmediately` waits (for the task to end or ask for input), and that wait is the
 * caller's alone.
 */
import type { Task } from "../a2a/types.ts";
import { isTerminal } from "../a2a/types.ts";
import type { Session } from "../session/session.ts";
import type { Origin, TaskRecord } from "../session/task_record.ts";
import { toA2A } from "../session/task_record.ts";
import { a2aError, invalidParams, param, RpcError, taskNotFound, unsupported } from "./jsonrpc.ts";
import { type IncomingMessage, readMessage } from "./message.ts";

export interface CallContext {
  session: Session;
  origin: Origin;
  trusted: boolean;
  extendedCard: unknown | null;
}

/** What a message routes to: a new task, a reply to a waiting one, or a refusal. */
export type Routed =
  | { kind: "new"; msg: IncomingMessage }
  | { kind: "reply"; msg: IncomingMessage; task: TaskRecord };

/** Reads the message and routes it by taskId (door-facts §5). Refusals change nothing. */
export function routeMessage(ctx: CallContext, params: Record<string, unknown>): Routed {
  const msg = readMessage(params);
  if (msg instanceof RpcError) throw msg;
  if (msg.taskId === undefined) return { kind: "new", msg };
  const task = ctx.session.registry.get(msg.taskId);
  if (!task) throw taskNotFound(msg.taskId);
  const meta = { taskId: task.id, state: task.state };
  if (isTerminal(task.state)) {
    throw unsupported(
      `task ${task.id} has ended in ${task.state}; send a new message without taskId, in the same contextId, to start a new task`,
      meta,
    );
  }
  if (task.state !== "TASK_STATE_INPUT_REQUIRED") {
    throw unsupported(
      `task ${task.id} is ${task.state}; this agent takes a message on a task only while it waits in TASK_STATE_INPUT_REQUIRED`,
      meta,
    );
  }
  if (msg.contextId !== undefined && msg.contextId !== task.contextId) {
    throw invalidParams(
      `Invalid params: message.contextId ${msg.contextId} does not match task ${task.id}, whose contextId is ${task.contextId}`,
    );
  }
  return { kind: "reply", msg, task };
}

/** Delivers a reply to a waiting task; the task answers in TASK_STATE_WORKING. */
export function deliverReply(ctx: CallContext, task: TaskRecord, msg: IncomingMessage): void {
  if (!ctx.session.reply(task, msg.text)) {
    throw unsupported(`task ${task.id} is no longer waiting for input`, {
      taskId: task.id,
      state: task.state,
    });
  }
}

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

export async function sendMessage(
  ctx: CallContext,
  params: Record<string, unknown>,
): Promise<{ task: Task }> {
  const routed = routeMessage(ctx, params);
  const cfg = param(params, "configuration");
  const immediate = typeof cfg === "object" && cfg !== null &&
    param(cfg as Record<string, unknown>, "returnImmediately") === true;
  if (routed.kind === "reply") {
    deliverReply(ctx, routed.task, routed.msg);
    const answered = toA2A(routed.task);
    if (!immediate) await settled(ctx, routed.task);
    return { task: immediate ? answered : toA2A(routed.task) };
  }
  if (!ctx.session.acceptsTasks) {
    throw unsupported("this capsule takes no tasks: its lifecycle.task_acceptance is none");
  }
  const res = ctx.session.submit({
    text: routed.msg.text,
    messageId: routed.msg.messageId,
    contextId: routed.msg.contextId,
    origin: ctx.origin,
    trusted: ctx.trusted,
  });
  if (res.kind === "rejected" || immediate) return { task: toA2A(res.task) };
  await settled(ctx, res.task);
  return { task: toA2A(res.task) };
}

function requireId(params: Record<string, unknown>, message: string): string {
  const id = params.id;
  if (typeof id !== "string") throw invalidParams(message);
  return id;
}

export function getTask(ctx: CallContext, params: Record<string, unknown>): Task {
  const id = requireId(params, "GetTask requires an id");
  if (id === "") throw invalidParams("GetTask requires an id");
  const task = ctx.session.registry.get(id);
  if (!task) throw taskNotFound(id);
  return toA2A(task);
}

export function cancelTask(ctx: CallContext, params: Record<string, unknown>): Task {
  const id = requireId(params, "Invalid params: CancelTask requires an id");
  const task = ctx.session.registry.get(id);
  if (!task) throw taskNotFound(id);
  if (!ctx.session.cancel(task)) {
    throw a2aError(
      -32002,
      "TASK_NOT_CANCELABLE",
      `Task cannot be canceled: it is already ${task.state}`,
      { taskId: task.id, state: task.state },
    );
  }
  return toA2A(task);
}

const STATES = new Set([
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

/** ListTasks (A2A v1.0, contract §5): newest status first, cursor pages. */
export function listTasks(ctx: CallContext, params: Record<string, unknown>) {
  const contextId = param(params, "contextId");
  if (contextId !== undefined && typeof contextId !== "string") {
    throw invalidParams("Invalid params: contextId must be a string");
  }
  const status = param(params, "status");
  if (status !== undefined && (typeof status !== "string" || !STATES.has(status))) {
    throw invalidParams("Invalid params: status must be a TASK_STATE_* value");
  }
  const pageSizeRaw = param(params, "pageSize");
  let pageSize = 50;
  if (pageSizeRaw !== undefined) {
    if (typeof pageSizeRaw !== "number" || !Number.isInteger(pageSizeRaw)) {
      throw invalidParams("Invalid params: pageSize must be an integer from 1 to 100");
    }
    if (pageSizeRaw < 1 || pageSizeRaw > 100) {
      throw invalidParams("Invalid params: pageSize must be an integer from 1 to 100");
    }
    pageSize = pageSizeRaw;
  }
  const after = param(params, "statusTimestampAfter");
  let afterMs: number | undefined;
  if (after !== undefined) {
    afterMs = typeof after === "string" ? Date.parse(after) : NaN;
    if (Number.isNaN(afterMs)) {
      throw invalidParams("Invalid params: statusTimestampAfter must be an RFC 3339 timestamp");
    }
  }
  const include = param(params, "includeArtifacts");
  if (include !== undefined && typeof include !== "boolean") {
    throw invalidParams("Invalid params: includeArtifacts must be a boolean");
  }
  const tokenRaw = param(params, "pageToken");
  if (tokenRaw !== undefined && typeof tokenRaw !== "string") {
    throw invalidParams("Invalid params: pageToken must be a string");
  }
  const matching = ctx.session.registry.all()
    .filter((t) =>
      (contextId === undefined || t.contextId === contextId) &&
      (status === undefined || t.state === status) &&
      (afterMs === undefined || t.changedAt >= afterMs)
    )
    .sort((a, b) => b.changedAt - a.changedAt || (a.id < b.id ? 1 : -1));
  let start = 0;
  if (tokenRaw) {
    const cursor = decodeCursor(tokenRaw);
    if (!cursor) throw invalidParams("Invalid params: pageToken is not a token this door issued");
    start = matching.findIndex((t) =>
      t.changedAt < cursor.at || (t.changedAt === cursor.at && t.id < cursor.id)
    );
    if (start < 0) start = matching.length;
  }
  const page = matching.slice(start, start + pageSize);
  const last = page[page.length - 1];
  const more = start + pageSize < matching.length;
  return {
    tasks: page.map((t) => toA2A(t, include === true)),
    nextPageToken: more && last ? encodeCursor(last.changedAt, last.id) : "",
    pageSize,
    totalSize: matching.length,
  };
}

function encodeCursor(at: number, id: string): string {
  return btoa(JSON.stringify([at, id]));
}

function decodeCursor(token: string): { at: number; id: string } | null {
  try {
    const v = JSON.parse(atob(token));
    if (Array.isArray(v) && typeof v[0] === "number" && typeof v[1] === "string") {
      return { at: v[0], id: v[1] };
    }
  } catch {
    // not ours
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
