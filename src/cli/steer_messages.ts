/**
 * The A2A messages the steering commands send (docs/steering.md), built here as plain data so
 * the exact wire shape is tested apart from any door:
 *
 * - a new task, or a follow-up in a context: `{messageId, role, parts:[{text}], contextId?}`;
 * - an answer to a task waiting for input: the same with `taskId`;
 * - a steer of a running task: the same with `taskId` and the steer extension's URI as a key of
 *   `metadata`;
 * - an approval decision: `taskId` and one data part `{approve, argumentsHash, reason?}`, the
 *   answer to a pending approval, which is a task in `TASK_STATE_INPUT_REQUIRED` whose status
 *   message carries a data part `{kind: "approval", tool, source, arguments, argumentsHash,
 *   reason}` (docs/steering.md "Approvals on the wire").
 */
import { STEER_URI } from "../events/frames.ts";
import { newMessageId } from "./steer_target.ts";

export interface OutMessage {
  messageId: string;
  role: "ROLE_USER";
  parts: ({ text: string } | { data: Record<string, unknown> })[];
  taskId?: string;
  contextId?: string;
  metadata?: Record<string, unknown>;
}

/** A new task (a follow-up when `contextId` names a conversation). */
export function taskMessage(text: string, contextId?: string): OutMessage {
  return {
    messageId: newMessageId(),
    role: "ROLE_USER",
    parts: [{ text }],
    ...(contextId ? { contextId } : {}),
  };
}

/** The reply to a task waiting in `TASK_STATE_INPUT_REQUIRED`. */
export function answerMessage(taskId: string, text: string): OutMessage {
  return { messageId: newMessageId(), role: "ROLE_USER", taskId, parts: [{ text }] };
}

/**
 * A steer for a WORKING task: its text, and the steer extension's URI as a metadata key, which the
 * door reads as "take this at the next turn boundary" (docs/approvals.md "Steering").
 */
export function steerMessage(taskId: string, text: string): OutMessage {
  return {
    messageId: newMessageId(),
    role: "ROLE_USER",
    taskId,
    parts: [{ text }],
    metadata: { [STEER_URI]: {} },
  };
}

/** A pending approval as its status message carries it. */
export interface PendingApproval {
  tool: string;
  source?: string;
  arguments?: unknown;
  argumentsHash: string;
  reason?: string;
}

/** The decision on a pending approval: approve or deny the call whose arguments hash it names. */
export function approvalMessage(
  taskId: string,
  approve: boolean,
  argumentsHash: string,
  reason?: string,
): OutMessage {
  const data: Record<string, unknown> = { approve, argumentsHash };
  if (reason !== undefined && reason !== "") data.reason = reason;
  return { messageId: newMessageId(), role: "ROLE_USER", taskId, parts: [{ data }] };
}

/**
 * The approval a status message asks for: its data part of kind `approval`, or null when the
 * status asks a question (or is not a status message at all).
 */
export function pendingApproval(message: unknown): PendingApproval | null {
  const parts = (message as { parts?: unknown })?.parts;
  if (!Array.isArray(parts)) return null;
  for (const p of parts) {
    const d = (p as { data?: unknown })?.data as Record<string, unknown> | undefined;
    if (typeof d !== "object" || d === null || d.kind !== "approval") continue;
    if (typeof d.argumentsHash !== "string" || typeof d.tool !== "string") continue;
    return {
      tool: d.tool,
      argumentsHash: d.argumentsHash,
      ...(typeof d.source === "string" ? { source: d.source } : {}),
      ...(d.arguments !== undefined ? { arguments: d.arguments } : {}),
      ...(typeof d.reason === "string" ? { reason: d.reason } : {}),
    };
  }
  return null;
}
