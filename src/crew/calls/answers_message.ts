/**
 * What a task that handed off work is told (docs/crews.md "How answers rejoin the conversation"):
 * the WORKING statuses of its table while it waits and when it goes on, and the one user message
 * that carries every answer of a round, each fenced under `member:<name>` or
 * `delegation:<capsule>` whatever the task's trust.
 */
import { fence } from "../../tools/fence.ts";
import type { HandedOffWork, Outstanding } from "./handed_off.ts";
import type { CallAnswer } from "./remote_task.ts";

/** `waiting on call-member: <n> call(s) outstanding`, `; `-joined with delegations. */
export function waitingStatus(o: Outstanding): string {
  const parts: string[] = [];
  if (o.calls > 0) parts.push(`waiting on call-member: ${o.calls} call(s) outstanding`);
  if (o.delegations > 0) {
    parts.push(`waiting on delegate-task: ${o.delegations} delegation(s) outstanding`);
  }
  return parts.join("; ");
}

/** `continuing with <n> member answer(s)`, answers first, `; `-joined with outcomes. */
export function continuingStatus(round: HandedOffWork[]): string {
  const calls = round.filter((w) => w.kind === "call").length;
  const delegations = round.length - calls;
  const parts: string[] = [];
  if (calls > 0) parts.push(`continuing with ${calls} member answer(s)`);
  if (delegations > 0) parts.push(`continuing with ${delegations} delegation outcome(s)`);
  return parts.join("; ");
}

/** The round's one user message (every piece of `round` has its answer). */
export function answersMessage(round: HandedOffWork[]): string {
  const blocks: string[] = [];
  const missing: string[] = [];
  for (const w of round) {
    const answer: CallAnswer = w.answer ?? { status: "failed", output: "", truncated: false };
    const tool = w.kind === "call" ? "call-member" : "delegate-task";
    const what = w.kind === "call"
      ? `call ${w.id} to ${w.name}`
      : `delegation ${w.id} to ${w.name}`;
    const ok = answer.status === "completed";
    const header = ok
      ? `[${tool}] ${what} ended completed:`
      : `[${tool}] ${what} ended ${answer.status}, with no answer from ${w.name}:`;
    const source = w.kind === "call" ? `member:${w.name}` : `delegation:${w.name}`;
    blocks.push(`${header}\n${fence(source, answer.output)}`);
    if (!ok) {
      missing.push(
        `${w.name} (${w.kind === "call" ? "call" : "delegation"} ${w.id}, ${answer.status})`,
      );
    }
  }
  if (missing.length > 0) {
    blocks.push(
      `[handed-off work] No answer came from: ${
        missing.join(", ")
      }. What you asked of them has not been done by them: do not present an answer of your own as theirs.`,
    );
    blocks.push(
      "[handed-off work] Everything this task handed off has ended. Answer the task with the answers you have and say plainly which part has no answer, or call again if another attempt could succeed.",
    );
  } else {
    blocks.push(
      "[handed-off work] Everything this task handed off has ended, and the answers are above. Answer the task with them now; call again only to give new work.",
    );
  }
  return blocks.join("\n\n");
}
