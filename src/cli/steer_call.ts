/**
 * One SendMessage from a steering command (send.ts, answer.ts, attach.ts): returned at once
 * (`returnImmediately`), the task it went to read back, and every refusal told as the error a
 * person can act on: E-RUN-048 for a task the session does not hold, E-IO-004 for any other
 * refusal (the door's code and message kept), E-IO-003 when the door cannot be reached.
 */
import { MurError } from "../errors.ts";
import { RPC_ERRORS } from "../diagnostics.ts";
import { callDoor } from "./door_call.ts";
import { taskHint } from "./task_address.ts";
import type { OutMessage } from "./steer_messages.ts";
import type { SteerTarget } from "./steer_target.ts";

/** The task a message went to, as the door answered it. */
export interface SentTask {
  id: string;
  contextId?: string;
  status: { state: string; message?: { parts?: { text?: string }[] } };
}

/** The text of a task's status message, or "". */
export function statusText(task: SentTask): string {
  return (task.status.message?.parts ?? []).map((p) => p.text ?? "").join(" ").trim();
}

export async function sendMessage(target: SteerTarget, message: OutMessage): Promise<SentTask> {
  const answer = await callDoor(target.url, "SendMessage", {
    message,
    configuration: { returnImmediately: true },
  }, target.token);
  if (!answer.ok) {
    if (answer.code === RPC_ERRORS.taskNotFound.code && message.taskId) {
      throw new MurError(
        "E-RUN-048",
        `${target.name} holds no task ${message.taskId} (${answer.code} ${answer.message})`,
        taskHint(),
      );
    }
    throw new MurError(
      "E-IO-004",
      `${target.name} refused the message: ${answer.code} ${answer.message}`,
      message.taskId
        ? "a task takes a message only while it waits for input ([input-required] in mur watch)"
        : undefined,
    );
  }
  const task = (answer.result as { task?: SentTask })?.task;
  if (!task || typeof task.id !== "string" || typeof task.status?.state !== "string") {
    throw new MurError(
      "E-IO-004",
      `${target.name} answered SendMessage without a task`,
      "is this address a murmur capsule's door?",
    );
  }
  return task;
}
