/**
 * The one send flow of SendMessage (src/door/methods.ts) and SendStreamingMessage
 * (src/door/streams.ts): the message is read and routed by its taskId (a retry, a reply to a
 * waiting task, or a new task), then taken: a send's inline push config is read and checked
 * before anything starts, the reply delivered or the new task submitted, and the inline config
 * attached to the task the send went to. Refusals change nothing (docs/protocol.md "Refusals").
 */
import { isTerminal, stateWord } from "../a2a/types.ts";
import type { SubmitResult } from "../session/session_api.ts";
import type { TaskRecord } from "../session/task_record.ts";
import { type CallContext, taskFor } from "./call_context.ts";
import { invalidParams, RpcError, taskNotFound, unsupported } from "./jsonrpc.ts";
import { fenced, type IncomingMessage, incomingMessage } from "./message.ts";
import { messageFingerprint } from "./message_fingerprint.ts";
import type { MessageParams } from "../a2a/spec.ts";

/** A send's configuration as its spec read it: what the send flow looks at. */
export interface SendConfiguration {
  taskPushNotificationConfig?: unknown;
}
import { attachInlinePush, checkInlineTask, readInlinePush } from "./push_methods.ts";
import { answerApproval, checkApprovalReply } from "./approval_answer.ts";
import { checkSteer, isSteer, steerTask } from "./steer_message.ts";
import type { SteerOutcome } from "../session/steer.ts";

/** What a message routes to: a new task, a reply to a waiting one, a retry, or a refusal. */
export type Routed =
  | { kind: "retry"; msg: IncomingMessage; task: TaskRecord }
  | { kind: "new"; msg: IncomingMessage }
  | { kind: "reply"; msg: IncomingMessage; task: TaskRecord }
  | { kind: "steer"; msg: IncomingMessage; task: TaskRecord };

/**
 * Reads the message and routes it by taskId (docs/protocol.md "Refusals"). Refusals change nothing.
 */
export function routeMessage(ctx: CallContext, message: MessageParams): Routed {
  const msg = incomingMessage(message);
  if (msg instanceof RpcError) throw msg;
  msg.fingerprint = messageFingerprint(message);
  // A message this caller already sent (same messageId): its task, not a second one.
  const earlier = ctx.seen.taskOf(ctx.caller, msg.messageId);
  const retried = earlier === undefined ? undefined : taskFor(ctx, earlier.taskId);
  if (retried && earlier!.fingerprint !== msg.fingerprint) {
    throw invalidParams(
      `Invalid params: message.messageId ${msg.messageId} was already sent with other content, and went to task ${retried.id}; a retry repeats the message exactly, new work needs a new messageId`,
    );
  }
  if (retried) return { kind: "retry", msg, task: retried };
  if (msg.forgetSession && ctx.session.manifest.inference.transport !== "process") {
    throw invalidParams(
      "Invalid params: forgetSession asks this capsule to forget the harness session this context names, and only a capsule on inference.transport: process has one",
    );
  }
  if (msg.referenceTaskIds.length > 0) {
    msg.text += `\n\n${referencedTasks(ctx, msg.referenceTaskIds)}`;
  }
  if (msg.taskId === undefined) return { kind: "new", msg };
  const task = taskFor(ctx, msg.taskId);
  if (!task) throw taskNotFound(msg.taskId);
  const meta = { taskId: task.id, state: task.state };
  if (isTerminal(task.state)) {
    throw unsupported(
      `task ${task.id} has ended in ${task.state}; send a new message without taskId, in the same contextId, to start a new task`,
      meta,
    );
  }
  if (task.state === "TASK_STATE_WORKING" && isSteer(msg)) {
    checkSteer(ctx, task, msg);
    return { kind: "steer", msg, task };
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
  checkApprovalReply(ctx, task, msg);
  return { kind: "reply", msg, task };
}

/**
 * The `Referenced tasks:` block appended to a message naming `referenceTaskIds` (README "The
 * door"): one line per id with its state word; a completed task's answer in a `response` fence,
 * another ended task's final message on the same line.
 */
export function referencedTasks(ctx: CallContext, ids: string[]): string {
  const lines = ["Referenced tasks:"];
  for (const id of ids) {
    const t = taskFor(ctx, id);
    if (!t) {
      lines.push(`- ${id}: not a task this capsule holds`);
      continue;
    }
    const word = stateWord(t.state);
    if (t.state === "TASK_STATE_COMPLETED" && t.response) {
      lines.push(`- ${id}: ${word}`, fenced("response", t.response));
    } else if (isTerminal(t.state)) {
      const part = t.status.message?.parts[0];
      const text = part && "text" in part ? part.text.replace(/\s*\n\s*/g, " ") : "";
      lines.push(text ? `- ${id}: ${word}: ${text}` : `- ${id}: ${word}`);
    } else {
      lines.push(`- ${id}: ${word}`);
    }
  }
  return lines.join("\n");
}

/** Delivers a reply to a waiting task; the task answers in TASK_STATE_WORKING. */
export function deliverReply(ctx: CallContext, task: TaskRecord, msg: IncomingMessage): void {
  const delivered = task.approval
    ? answerApproval(ctx, task, msg)
    : ctx.session.reply(task, msg.text, msg.history);
  if (!delivered) {
    throw unsupported(`task ${task.id} is no longer waiting for input`, {
      taskId: task.id,
      state: task.state,
    });
  }
  ctx.seen.took(ctx.caller, msg.messageId, task.id, msg.fingerprint ?? 0);
}

/** A message that starts a new task, submitted with the caller's origin and trust. */
export function submitNew(ctx: CallContext, msg: IncomingMessage): SubmitResult {
  const res = ctx.session.submit({
    text: msg.text,
    messageId: msg.messageId,
    contextId: msg.contextId,
    origin: ctx.origin,
    trusted: ctx.trusted,
    forgetSession: msg.forgetSession,
    message: msg.history,
  });
  // A rejected task was not taken: sending the message again may find room.
  if (res.kind !== "rejected") {
    ctx.seen.took(ctx.caller, msg.messageId, res.task.id, msg.fingerprint ?? 0);
  }
  return res;
}

/** What taking a routed message did: the reply delivered, or the new task submitted. */
export type Taken =
  | { kind: "reply"; task: TaskRecord }
  | { kind: "steer"; task: TaskRecord; outcome: Promise<SteerOutcome> }
  | { kind: "new"; result: SubmitResult };

/**
 * Takes a message routed to a reply or a new task. `beforeNew` may refuse a new task (it runs
 * after the inline push config is checked, before anything is submitted).
 */
export async function take(
  ctx: CallContext,
  routed: Exclude<Routed, { kind: "retry" }>,
  configuration: SendConfiguration | undefined,
  headers: Headers,
  beforeNew?: () => void,
): Promise<Taken> {
  const inline = await readInlinePush(ctx, configuration?.taskPushNotificationConfig, headers);
  checkInlineTask(inline, routed.msg.taskId);
  // The inline config sees the task from the send on: the events after this one.
  const after = ctx.session.log.lastId;
  if (routed.kind === "steer") {
    return { kind: "steer", task: routed.task, outcome: steerTask(ctx, routed.task, routed.msg) };
  }
  if (routed.kind === "reply") {
    deliverReply(ctx, routed.task, routed.msg);
    if (inline) attachInlinePush(ctx, inline, routed.task, after);
    return { kind: "reply", task: routed.task };
  }
  beforeNew?.();
  const result = submitNew(ctx, routed.msg);
  // A rejected task was not taken (and is not listed): it gets no push config.
  if (inline && result.kind !== "rejected") attachInlinePush(ctx, inline, result.task, after);
  return { kind: "new", result };
}
