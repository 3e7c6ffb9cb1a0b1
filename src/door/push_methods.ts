/**
 * The push-notification methods (docs/push.md; docs/protocol.md "Push notifications"): Create, Get, List and Delete of a task's
 * `TaskPushNotificationConfig`, and `configuration.taskPushNotificationConfig` on a send. With
 * push off every one answers PushNotificationNotSupported (the method check answers first, rpc_checks.ts; these
 * answer the same for a binding that reaches them another way). Configs are the caller's own.
 */
import type { TaskRecord } from "../session/task_record.ts";
import { configJson, PushRefused, readConfigFields } from "../push/configs.ts";
import type { ParamsOf } from "../a2a/spec.ts";
import type { PushConfig } from "../push/configs.ts";
import type { PushNotifications } from "../push/push.ts";
import { a2aError, invalidParams, param, type RpcError, taskNotFound } from "./jsonrpc.ts";
import type { CallContext } from "./call_context.ts";
import { activates } from "./sse_response.ts";

export function pushNotSupported(): RpcError {
  return a2aError(
    "pushNotificationNotSupported",
    "Push notifications are not supported: this agent's card says pushNotifications: false; follow the task with SubscribeToTask or murmur.WatchSession",
  );
}

/** The push room's refusal (src/push/configs.ts) as the door answers it: invalid params. */
function refusal(e: unknown): never {
  if (e instanceof PushRefused) throw invalidParams(`Invalid params: ${e.message}`);
  throw e;
}

function asRpc<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    refusal(e);
  }
}

async function asRpcAsync<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    refusal(e);
  }
}

/** The session's push notifications, or PushNotificationNotSupported when push is off. */
export function pushOf(ctx: CallContext): PushNotifications {
  if (!ctx.push) throw pushNotSupported();
  return ctx.push;
}

/** The task a push method names, or TaskNotFound. */
function taskOf(ctx: CallContext, id: string): TaskRecord {
  const task = ctx.session.registry.get(id);
  if (!task) throw taskNotFound(id);
  return task;
}

export async function createPushConfig(
  ctx: CallContext,
  params: ParamsOf<"CreateTaskPushNotificationConfig">,
  headers: Headers,
) {
  const push = pushOf(ctx);
  const task = taskOf(ctx, params.taskId);
  const fields = await asRpcAsync(() =>
    readConfigFields(params, {
      where: "params",
      allowPrivate: push.allowPrivate,
      resolve: push.resolve,
    })
  );
  const c: PushConfig = {
    ...fields,
    taskId: task.id,
    caller: ctx.caller,
    activated: activates(headers),
  };
  asRpc(() => push.put(c));
  return configJson(c);
}

export function getPushConfig(ctx: CallContext, params: ParamsOf<"GetTaskPushNotificationConfig">) {
  const push = pushOf(ctx);
  const task = taskOf(ctx, params.taskId);
  const { id } = params;
  const c = push.store.get(task.id, ctx.caller, id);
  if (!c) throw configNotFound(task.id, id);
  return configJson(c);
}

export function listPushConfigs(
  ctx: CallContext,
  params: ParamsOf<"ListTaskPushNotificationConfigs">,
) {
  const push = pushOf(ctx);
  const task = taskOf(ctx, params.taskId);
  // A task holds at most 16 configs: one page always holds them all, so no token is issued.
  if (params.pageToken !== undefined && params.pageToken !== "") {
    throw invalidParams(
      "Invalid params: pageToken is not a nextPageToken this door issued; start again without it",
    );
  }
  return { configs: push.store.list(task.id, ctx.caller).map(configJson) };
}

/** Idempotent: deleting a config that is not there answers `{}` too (its task must exist). */
export function deletePushConfig(
  ctx: CallContext,
  params: ParamsOf<"DeleteTaskPushNotificationConfig">,
) {
  const push = pushOf(ctx);
  const task = taskOf(ctx, params.taskId);
  push.delete(task.id, ctx.caller, params.id);
  return {};
}

function configNotFound(taskId: string, id: string): RpcError {
  return a2aError(
    "taskNotFound",
    `Push notification config not found: task ${taskId} has no config ${id} of yours`,
    { taskId, configId: id },
  );
}

/** A send's inline config, read and checked before anything is started. */
export interface InlinePush {
  fields: Awaited<ReturnType<typeof readConfigFields>>;
  taskId?: string;
  activated: boolean;
}

/**
 * `configuration.taskPushNotificationConfig` of SendMessage / SendStreamingMessage, or null when
 * absent. Refused like a Create (invalid params naming the field, PushNotificationNotSupported with push off) before the message
 * is taken, so a refusal starts nothing.
 */
export async function readInlinePush(
  ctx: CallContext,
  raw: unknown,
  headers: Headers,
): Promise<InlinePush | null> {
  if (raw === undefined || raw === null) return null;
  const push = pushOf(ctx);
  const where = "configuration.taskPushNotificationConfig";
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidParams(`Invalid params: ${where} must be a TaskPushNotificationConfig object`);
  }
  const obj = raw as Record<string, unknown>;
  const taskId = param(obj, "taskId");
  if (taskId !== undefined && taskId !== null && typeof taskId !== "string") {
    throw invalidParams(`Invalid params: ${where}.taskId must be a string`);
  }
  const fields = await asRpcAsync(() =>
    readConfigFields(obj, { where, allowPrivate: push.allowPrivate, resolve: push.resolve })
  );
  return {
    fields,
    ...(typeof taskId === "string" && taskId !== "" ? { taskId } : {}),
    activated: activates(headers),
  };
}

/**
 * The inline config starts on the task the send went to, with the events after `after` (the
 * log's last id before the send): the receiver sees the task from the send on.
 */
export function attachInlinePush(
  ctx: CallContext,
  inline: InlinePush,
  task: TaskRecord,
  after: number,
): void {
  const push = pushOf(ctx);
  asRpc(() =>
    push.put({
      ...inline.fields,
      taskId: task.id,
      caller: ctx.caller,
      activated: inline.activated,
    }, after)
  );
}

/** An inline config's taskId must be empty or the task the message goes to. */
export function checkInlineTask(inline: InlinePush | null, taskId: string | undefined): void {
  if (!inline || inline.taskId === undefined) return;
  if (inline.taskId !== taskId) {
    throw invalidParams(
      `Invalid params: configuration.taskPushNotificationConfig.taskId ${inline.taskId} is not the task this message goes to; leave it empty`,
    );
  }
}
