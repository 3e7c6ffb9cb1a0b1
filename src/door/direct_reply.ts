/**
 * Direct replies (`lifecycle.direct_reply`; docs/protocol.md "Direct replies"): a message the
 * session answers in one model turn, with no tool call, is answered with a bare A2A `Message`
 * (A2A's message-only answer) rather than the Task it ran as. The task still exists in the
 * capsule (ListTasks, the trace, `mur watch`); the caller is just not asked to read it.
 *
 * Which tasks qualify is the registry's record (`TaskRecord.indirect`, set by the first status or
 * frame that is not the first turn's), so SendMessage and SendStreamingMessage decide alike.
 */
import type { Message } from "../a2a/types.ts";
import type { Manifest } from "../manifest/types.ts";
import type { TaskRecord } from "../session/task_record.ts";

/** The bare Message a direct reply answers, or null when the task does not qualify. */
export function directReplyOf(manifest: Manifest, task: TaskRecord): { message: Message } | null {
  if (!manifest.lifecycle.directReply) return null;
  if (task.state !== "TASK_STATE_COMPLETED" || task.indirect || !task.response) return null;
  return {
    message: {
      // The same id the task's history gives the reply: a retried send answers the same message.
      messageId: `msg_${task.id}_response`,
      contextId: task.contextId,
      role: "ROLE_AGENT",
      parts: [{ text: task.response, mediaType: "text/plain" }],
    },
  };
}

/** Whether a stream has waited long enough to know which answer it gives. */
export function directDecided(task: TaskRecord): boolean {
  return task.indirect === true || task.state === "TASK_STATE_COMPLETED" ||
    task.state === "TASK_STATE_FAILED" || task.state === "TASK_STATE_CANCELED" ||
    task.state === "TASK_STATE_REJECTED" || task.state === "TASK_STATE_INPUT_REQUIRED";
}
