/**
 * The pipeline's approval stage (docs/approvals.md): a call the manifest's `approvals:` policy
 * covers waits, the task in TASK_STATE_INPUT_REQUIRED with a status a person can read and the
 * approval's data part, until the operator approves or denies it (src/door/approval_answer.ts),
 * the wait times out (a denial), or the task is canceled. A denial is the call's result: the
 * model reads it as it reads any tool result; the tool never ran.
 */
import { approvalFor } from "../manifest/approvals.ts";
import { INTERPRETERS } from "../tools/shell.ts";
import { notReached, type ToolCall, type ToolResult } from "../tools/types.ts";
import {
  type ApprovalAnswer,
  approvalDetail,
  type ApprovalSource,
  approvalText,
} from "./approval.ts";
import type { LoopDeps, TaskRun } from "./task_run.ts";

export interface ApprovalAsk {
  call: ToolCall;
  /** 0-based, as trace lines number turns. */
  turn: number;
  /** The turn's `inference` line (or `task_start`): the parent of the trace lines. */
  parent: string;
  isShell: boolean;
}

type Outcome =
  | { kind: "answered"; answer: ApprovalAnswer }
  | { kind: "expired" }
  | { kind: "canceled" };

/** The command line as a shell reads it: the script of an interpreter, else binary and args. */
export function shellLine(binary: string, command: unknown): string {
  const c = typeof command === "string" ? command : "";
  return INTERPRETERS.has(binary) ? c : [binary, c.trim()].filter(Boolean).join(" ");
}

function sourceOf(d: LoopDeps, name: string, isShell: boolean): ApprovalSource {
  if (isShell) return "shell";
  if (d.sessionTools?.has(name)) return "session";
  if (name.startsWith("mcp__")) return "mcp";
  if (name.startsWith("openapi__")) return "openapi";
  const t = d.manifest.tools.find((t) => t.name === name);
  if (t?.kind === "builtin") return "builtin";
  return t?.kind === "command" && t.artifact ? "artifact" : "tool";
}

/**
 * Null when the call may run (no rule asks, or the operator approved); else the result the
 * model gets in its place (denied, expired, canceled).
 */
export async function approvalStage(
  d: LoopDeps,
  run: TaskRun,
  ask: ApprovalAsk,
): Promise<ToolResult | null> {
  const { call } = ask;
  const line = ask.isShell ? shellLine(call.name, call.input.command) : undefined;
  const decision = approvalFor(d.manifest.approvals, call.name, line);
  if (!decision) return null;
  const timeoutSecs = d.manifest.approvals!.timeoutSecs;
  const detail = await approvalDetail(
    call.name,
    sourceOf(d, call.name, ask.isShell),
    call.input,
    decision.reason,
  );
  const ids = { turn: ask.turn, task_id: run.task.id, tool_name: call.name, tool_call_id: call.id };
  const requested = d.trace.write("approval_requested", ask.parent, {
    ...ids,
    arguments_hash: detail.argumentsHash,
    reason: decision.reason,
    timeout_secs: timeoutSecs,
  });
  const text = approvalText(call.name, line, call.input);
  const hash = { arguments_hash: detail.argumentsHash };
  // on-approval observers hear of the wait before it begins (a notification can go out).
  await d.hooks.approval({
    ...ids,
    phase: "requested",
    ...hash,
    reason: decision.reason,
    prompt: text,
  });
  const started = d.clock();
  const outcome = await wait(d, run, detail, text, timeoutSecs);
  const waited = d.clock() - started;
  const answer = outcome.kind === "answered" ? outcome.answer : undefined;
  const resolved = {
    outcome: answer
      ? (answer.approve ? "approved" as const : "denied" as const)
      : outcome.kind as "expired" | "canceled",
    ...(answer ? { by: answer.by } : {}),
    ...(answer?.reason ? { reason: answer.reason } : {}),
    waited_ms: waited,
  };
  d.trace.write("approval_resolved", requested, { ...ids, ...resolved });
  await d.hooks.approval({ ...ids, phase: "resolved", ...hash, ...resolved });
  if (answer?.approve) return null;
  return notReached(denialText(outcome, timeoutSecs), waited);
}

/** What the model reads in place of the call's result. */
function denialText(outcome: Outcome, timeoutSecs: number): string {
  if (outcome.kind === "canceled") {
    return "the task was canceled while this call waited for approval; it did not run";
  }
  if (outcome.kind === "expired") {
    return `denied: no one approved this call within approvals.timeout_secs (${timeoutSecs} s), so it did not run`;
  }
  const why = outcome.answer.reason ? `: ${outcome.answer.reason}` : "";
  return `denied by the operator${why}. The call did not run; do not repeat it unchanged`;
}

function wait(
  d: LoopDeps,
  run: TaskRun,
  detail: Awaited<ReturnType<typeof approvalDetail>>,
  text: string,
  timeoutSecs: number,
): Promise<Outcome> {
  const { task } = run;
  const signal = task.abort.signal;
  return new Promise<Outcome>((resolve) => {
    if (signal.aborted) return resolve({ kind: "canceled" });
    // setTimeout fires at once past 2^31-1 ms: a longer wait is capped there (about 24 days).
    const timer = setTimeout(
      () => finish({ kind: "expired" }),
      Math.min(timeoutSecs * 1000, 2 ** 31 - 1),
    );
    const onAbort = () => finish({ kind: "canceled" });
    const finish = (o: Outcome) => {
      if (task.approval === undefined) return;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      task.approval = undefined;
      // An answered or expired wait goes on: the model reads the outcome at once.
      if (o.kind !== "canceled") d.registry.status(task, "TASK_STATE_WORKING", "resumed");
      resolve(o);
    };
    task.approval = { detail, text, answer: (answer) => finish({ kind: "answered", answer }) };
    signal.addEventListener("abort", onAbort, { once: true });
    d.registry.status(task, "TASK_STATE_INPUT_REQUIRED", text, undefined, [
      { data: detail, mediaType: "application/json" },
    ]);
    task.prompt = text;
  });
}
