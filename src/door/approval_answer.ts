/**
 * Answering a pending approval at the door (docs/approvals.md "The wire"): a SendMessage naming
 * the task, with a data part `{approve: true|false, argumentsHash, reason?}`. Only the operator
 * answers: the `operator` token on an authenticated door; on a public door, the operator's
 * approval token minted at launch (approval_token.ts), since a caller's position proves nothing
 * there (docs/approvals.md "Who may approve"). Any other caller, a peer credential, an edge token,
 * a watcher token, a stale or wrong hash: refused, and the wait stays as it was.
 */
import type { Part } from "../a2a/types.ts";
import type { TaskRecord } from "../session/task_record.ts";
import type { CallContext } from "./call_context.ts";
import { invalidParams, unsupported } from "./jsonrpc.ts";
import type { IncomingMessage } from "./message.ts";
import { runningDir } from "../home/running_records.ts";

export interface ApprovalReply {
  approve: boolean;
  argumentsHash: string;
  reason?: string;
}

/** The first data part that answers an approval (`approve` a boolean), or null. */
export function approvalReplyOf(parts: Part[]): ApprovalReply | null | string {
  for (const p of parts) {
    if (!("data" in p)) continue;
    const d = p.data;
    if (typeof d !== "object" || d === null || Array.isArray(d) || !("approve" in d)) continue;
    const o = d as Record<string, unknown>;
    if (typeof o.approve !== "boolean") return "`approve` must be true or false";
    if (typeof o.argumentsHash !== "string") {
      return "`argumentsHash` must be the pending approval's hash (a string)";
    }
    if (o.reason !== undefined && typeof o.reason !== "string") {
      return "`reason` must be a string";
    }
    return {
      approve: o.approve,
      argumentsHash: o.argumentsHash,
      ...(typeof o.reason === "string" && o.reason !== "" ? { reason: o.reason } : {}),
    };
  }
  return null;
}

/** Who answers, when the caller may: the operator, by its token on either kind of door. */
function operatorOf(ctx: CallContext): string | null {
  if (ctx.ownTasksOnly) return null;
  if (ctx.caller === "operator") return "operator";
  if (ctx.caller === "" && ctx.origin !== "peer" && ctx.approvalToken) return "operator";
  return null;
}

/**
 * Throws the refusal when `msg` may not go to `task`'s input wait: an approval answer to a
 * question, anything but a valid operator's answer to an approval.
 */
export function checkApprovalReply(ctx: CallContext, task: TaskRecord, msg: IncomingMessage): void {
  const reply = approvalReplyOf(msg.history.parts);
  const pending = task.approval;
  const meta = { taskId: task.id, state: task.state };
  if (!pending) {
    if (reply === null) return;
    throw invalidParams(
      `Invalid params: task ${task.id} waits for the answer to a question, not for an approval; send the answer as a text part`,
    );
  }
  const hash = pending.detail.argumentsHash;
  if (reply === null) {
    throw invalidParams(
      `Invalid params: task ${task.id} waits for an approval of its ${pending.detail.tool} call; answer with a data part {"approve": true or false, "argumentsHash": "${hash}"} (mur approve / mur deny)`,
    );
  }
  if (typeof reply === "string") {
    throw invalidParams(`Invalid params: the approval answer's data part: ${reply}`);
  }
  if (operatorOf(ctx) === null) {
    if (ctx.caller === "" && ctx.origin !== "peer") {
      throw unsupported(
        `only the operator answers an approval, and on this public door that takes the operator's token: approval_token in the session's running record, ${runningDir()}/${ctx.session.id}.json, as Authorization: Bearer <token> (mur approve and mur deny present it)`,
        meta,
      );
    }
    const who = ctx.caller === ""
      ? "a caller that names itself a peer"
      : `credential '${ctx.caller.replace(/^member:/, "member ")}'`;
    throw unsupported(
      `only the operator answers an approval; ${who} cannot (use the operator token from the session's running record)`,
      meta,
    );
  }
  if (reply.argumentsHash !== hash) {
    throw invalidParams(
      `Invalid params: argumentsHash ${
        JSON.stringify(reply.argumentsHash)
      } is not the pending approval's (${hash}): the call it names is not the one waiting; read the task again (GetTask: its approval artifact) and answer that`,
    );
  }
}

/** Settles the pending approval with a checked reply; false when no approval waits any more. */
export function answerApproval(ctx: CallContext, task: TaskRecord, msg: IncomingMessage): boolean {
  const pending = task.approval;
  const reply = approvalReplyOf(msg.history.parts);
  const by = operatorOf(ctx);
  if (!pending || reply === null || typeof reply === "string" || by === null) return false;
  // Checked when the message was routed; another call may have started waiting since.
  if (reply.argumentsHash !== pending.detail.argumentsHash) return false;
  ctx.session.registry.userMessage(task, msg.history);
  pending.answer({ approve: reply.approve, by, ...(reply.reason ? { reason: reply.reason } : {}) });
  return true;
}
