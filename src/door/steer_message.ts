/**
 * The steer extension at the door (docs/approvals.md "Steering"): a message naming a WORKING
 * task whose metadata carries the extension's URI as a key is handed to the running task
 * (src/session/steer.ts) instead of being refused as UnsupportedOperation. SendMessage answers with a Message
 * saying how it was taken (`taken` before turn n, or `not_taken` and why; `queued` with
 * `returnImmediately`); SendStreamingMessage follows the task, whose stream shows the
 * `steer-taken` frame.
 */
import type { Message } from "../a2a/types.ts";
import { STEER_URI } from "../events/frames.ts";
import type { Manifest } from "../manifest/types.ts";
import { queueSteer, type SteerOutcome } from "../session/steer.ts";
import type { TaskRecord } from "../session/task_record.ts";
import { takesTasks } from "../session/lifecycle.ts";
import type { CallContext } from "./call_context.ts";
import { invalidParams, unsupported } from "./jsonrpc.ts";
import type { IncomingMessage } from "./message.ts";

/** The card lists the extension where a running task has turn boundaries the loop owns. */
export function steersOffered(m: Manifest): boolean {
  return m.inference.transport === "http" && takesTasks(m.lifecycle);
}

/** The card's entry for the extension. */
export function steerExtension(m: Manifest): unknown[] {
  if (!steersOffered(m)) return [];
  return [{
    uri: STEER_URI,
    description:
      "Steer a running task: a message naming a TASK_STATE_WORKING task whose metadata has this URI as a key is read by the task at its next turn boundary, before its next model call. SendMessage answers with a Message saying how it was taken; the stream shows a steer-taken frame.",
    required: false,
    params: { marker: `message.metadata["${STEER_URI}"]`, takenAt: "turn boundary" },
  }];
}

/** The message carries the steer marker. */
export function isSteer(msg: IncomingMessage): boolean {
  const meta = msg.history.metadata;
  return meta !== undefined && Object.hasOwn(meta, STEER_URI);
}

/** Throws the refusal when a steer may not go to `task`; else returns. */
export function checkSteer(ctx: CallContext, task: TaskRecord, msg: IncomingMessage): void {
  if (!steersOffered(ctx.session.manifest)) {
    throw unsupported(
      `task ${task.id} is ${task.state}; this capsule takes no steer messages (inference.transport: ${ctx.session.manifest.inference.transport} has no turn boundary mur owns)`,
      { taskId: task.id, state: task.state },
    );
  }
  if (msg.contextId !== undefined && msg.contextId !== task.contextId) {
    throw invalidParams(
      `Invalid params: message.contextId ${msg.contextId} does not match task ${task.id}, whose contextId is ${task.contextId}`,
    );
  }
  if (msg.text.trim() === "") {
    throw invalidParams("Invalid params: a steer message needs text for the model to read");
  }
}

/** Hands the steer to the task; settles `not_taken` if the task ends first. */
export function steerTask(
  ctx: CallContext,
  task: TaskRecord,
  msg: IncomingMessage,
): Promise<SteerOutcome> {
  ctx.session.registry.userMessage(task, msg.history);
  ctx.seen.took(ctx.caller, msg.messageId, task.id, msg.fingerprint ?? 0);
  const outcome = queueSteer(task, msg.messageId, msg.text);
  const ended = task.done.then((): SteerOutcome => ({
    taken: false,
    why: "the task ended before its next turn",
  }));
  return Promise.race([outcome, ended]);
}

/** SendMessage's answer: how the steer was taken (or that it waits, with returnImmediately). */
export function steerAnswer(task: TaskRecord, messageId: string, o: SteerOutcome | null): Message {
  const text = o === null
    ? `steer queued: task ${task.id} reads it at its next turn boundary`
    : o.taken
    ? `steer taken: task ${task.id} read it before turn ${o.turn}`
    : `steer not taken: ${o.why}`;
  const data = o === null
    ? { steer: "queued" }
    : o.taken
    ? { steer: "taken", turn: o.turn }
    : { steer: "not_taken", reason: o.why };
  return {
    messageId: `msg_${messageId}_steer`.slice(0, 200),
    contextId: task.contextId,
    taskId: task.id,
    role: "ROLE_AGENT",
    parts: [{ text, mediaType: "text/plain" }, {
      data: { ...data, messageId },
      mediaType: "application/json",
    }],
  };
}
