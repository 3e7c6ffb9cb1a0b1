/**
 * The crew tools a capsule is given when `MURMUR_CREW_CALLEES` names members it may call
 * (docs/crews.md): `call-member` hands a member a task and returns at once, the answer joining
 * the conversation after the turn (src/session/continuation.ts `handedOffWork`);
 * `end-without-answer` ends a task another capsule sent without an answer, so the caller is told
 * plainly that none was given; `delegate-task` (given by `capabilities.spawn.allow`) starts a
 * child capsule for one task, its outcome joining the same way. A refusal is a tool error that
 * sends nothing.
 */
import type { A2aCallRecord } from "../a2a/call_record.ts";
import { delegation } from "../crew/calls/delegation.ts";
import { memberCall } from "../crew/calls/member_call.ts";
import type { SpawnTarget } from "../manifest/types.ts";
import { newId } from "../ids.ts";
import { fence } from "../tools/fence.ts";
import { notReached, type Tool, type ToolResult } from "../tools/types.ts";
import type { Registry } from "./registry.ts";
import type { TraceWriter } from "../trace_writer.ts";

export interface CrewToolDeps {
  registry: Registry;
  trace: () => TraceWriter;
  callees: string[];
  crewFile: string | undefined;
  /** `lifecycle.delegation_deadline_secs` (600 when absent). */
  deadlineSecs: number;
  clock?: () => number;
  /** Each request to a member's door, for the calling task (docs/opentelemetry.md "A2A spans"). */
  a2aClient?: (taskId: string, r: A2aCallRecord) => void;
}

export const DEFAULT_DEADLINE_SECS = 600;

function str(v: unknown): string {
  return typeof v === "string" ? v.trim() : "";
}

/** A result fenced under `tool:<name>`, with the runtime's note after the fence. */
function fenced(
  tool: string,
  data: Record<string, unknown>,
  note: string,
  isError: boolean,
  durationMs: number,
): ToolResult {
  return {
    content: `${fence(`tool:${tool}`, JSON.stringify(data))}\n${note}`,
    fenceSource: `tool:${tool}`,
    isError,
    exitCode: null,
    truncated: false,
    durationMs,
    images: [],
  };
}

// Why long: the tool's declaration (description, input schema) and its call, which is one sequence:
// check the member, hand the task off, trace.
export function callMemberTool(d: CrewToolDeps): Tool {
  const clock = d.clock ?? Date.now;
  return {
    name: "call-member",
    description: `Hand a task to another member of your crew (${
      d.callees.join(", ")
    }). 'task' is all the member is told, so put everything it needs in it. The call returns at once with a call id and 'started' (the member took the task) or 'busy' (the runtime keeps offering it). The member's answer is not in this result: the runtime adds it to this conversation after you end your turn, so do not wait or poll; end your turn once you have handed out the work. Calling the same member again before its answer arrived is refused.`,
    inputSchema: {
      type: "object",
      properties: {
        member: { type: "string", enum: d.callees, description: "Who to call." },
        task: { type: "string", description: "The whole task, as the member should read it." },
      },
      required: ["member", "task"],
    },
    // Why long: the input checks in the order their refusals are documented (docs/crews.md
    // "`call-member`"), then the hand-off.
    async call(input, ctx): Promise<ToolResult> {
      const started = clock();
      const member = str(input.member);
      const text = typeof input.task === "string" ? input.task : "";
      const task = d.registry.get(ctx.taskId);
      if (!d.callees.includes(member)) {
        return notReached(
          `'${member}' is not a member this capsule may call; it may call: ${d.callees.join(", ")}`,
        );
      }
      if (text.trim() === "") {
        return notReached(`'call-member' needs a task: the whole of what ${member} should do`);
      }
      if (!task || !task.handedOff) {
        return notReached("'call-member' is answered only while a task runs");
      }
      if (task.noAnswer !== undefined) {
        return notReached(
          "'call-member' makes no call from a task that is ending without an answer.",
        );
      }
      const work = task.handedOff;
      const last = work.latest("call", member);
      if (last?.outstanding) {
        return notReached(
          `${member} has not yet answered call ${last.id} from this task, so nothing was sent. Its answer reaches you only after you end your turn: end your turn now by replying without calling a tool. Once that answer has arrived you may call ${member} again with new work.`,
        );
      }
      if (last && !last.delivered) {
        return notReached(
          `${member} has already answered call ${last.id}, so nothing was sent. The answer reaches you as soon as you end your turn: end your turn now by replying without calling a tool.`,
        );
      }
      const call = memberCall(newId("mcl"), member, text, {
        trace: d.trace(),
        parent: work.parent,
        taskId: task.id,
        trust: task.trusted ? "trusted" : "untrusted",
        crewFile: d.crewFile,
        deadlineSecs: d.deadlineSecs,
        clock,
        ...(d.a2aClient && { observe: (r: A2aCallRecord) => d.a2aClient!(task.id, r) }),
      });
      work.add(call);
      const first = await call.begin();
      const base = { call_id: call.id, member };
      const took = clock() - started;
      switch (first.kind) {
        case "started":
          return fenced(
            "call-member",
            { ...base, status: "started", task_id: first.remoteTaskId },
            `[call-member] ${member} is now working on call ${call.id}. Its answer is not in this result and no tool fetches it: the runtime adds it to this conversation after you end your turn. Unless you still have work to hand to a different member, end your turn now by replying without calling a tool. Calling ${member} again before its answer arrives is refused.`,
            false,
            took,
          );
        case "busy":
          return fenced(
            "call-member",
            {
              ...base,
              status: "busy",
              output: `${member} is busy with other work and did not take the task`,
            },
            `[call-member] ${member} is busy with other work and has not taken call ${call.id} yet. The runtime keeps offering it the task for up to ${d.deadlineSecs}s and adds ${member}'s answer, or word that it stayed busy, to this conversation after you end your turn. Unless you still have work to hand to a different member, end your turn now by replying without calling a tool. Calling ${member} again before then is refused.`,
            false,
            took,
          );
        case "ended": {
          // The model reads this answer here: the continuation does not bring it again.
          call.delivered = true;
          const { status, output } = first.answer;
          const peer = task.origin === "peer"
            ? ` If you have no answer to give without ${member}, call end-without-answer with the reason: the runtime then tells your caller plainly that you gave none.`
            : "";
          return fenced(
            "call-member",
            { ...base, status, output },
            `[call-member] Call ${call.id} to ${member} ended ${status}, with no answer from ${member}. Do not present an answer of your own as ${member}'s.${peer}`,
            true,
            took,
          );
        }
      }
    },
  };
}

export function endWithoutAnswerTool(d: CrewToolDeps): Tool {
  return {
    name: "end-without-answer",
    description:
      "End a task another capsule sent you without an answer, saying why. Use it only when you cannot answer (for example a member you needed gave you nothing): your caller is then told plainly that you gave no answer, instead of reading a guess. The task ends once this turn's tool calls finish.",
    inputSchema: {
      type: "object",
      properties: {
        reason: { type: "string", description: "Why there is no answer, in a sentence." },
      },
      required: ["reason"],
    },
    call(input, ctx): Promise<ToolResult> {
      const reason = str(input.reason);
      const task = d.registry.get(ctx.taskId);
      const refuse = (why: string) => Promise.resolve(notReached(why));
      if (!task || !task.handedOff) {
        return refuse(
          "'end-without-answer' is answered only while a task runs; this session is running none",
        );
      }
      if (task.origin !== "peer") {
        return refuse(
          `'end-without-answer' ends only a task another capsule sent (origin peer); this task's origin is ${task.origin}. Reply in text, saying plainly which part has no answer.`,
        );
      }
      const out = task.handedOff.latestPending();
      if (out) {
        return refuse(
          `Call ${out.id} to ${out.name} is still out; its answer arrives after you end your turn. Call end-without-answer only when no call is left to wait for.`,
        );
      }
      if (reason === "") {
        return refuse(
          "'end-without-answer' needs a reason: say in a sentence why you have no answer.",
        );
      }
      if (task.noAnswer !== undefined) {
        return refuse("This task is already ending without an answer.");
      }
      task.noAnswer = reason;
      d.trace().write("no_answer", task.handedOff.parent, { task_id: task.id, reason });
      return Promise.resolve(
        fenced(
          "end-without-answer",
          { status: "ending" },
          "[end-without-answer] This task ends without an answer once this turn's tool calls finish, and your caller is told you gave none.",
          false,
          0,
        ),
      );
    },
  };
}

export interface DelegateToolDeps {
  registry: Registry;
  trace: () => TraceWriter;
  /** `capabilities.spawn.allow`. */
  targets: SpawnTarget[];
  /** The session's workdir: children run in `delegations/<id>` under it. */
  workdirRoot: string;
  deadlineSecs: number;
  clock?: () => number;
  a2aClient?: CrewToolDeps["a2aClient"];
}

export function delegateTaskTool(d: DelegateToolDeps): Tool {
  const clock = d.clock ?? Date.now;
  const names = d.targets.map((t) => t.name);
  return {
    name: "delegate-task",
    description: `Start a capsule of its own (${
      names.join(", ")
    }) for one task and hand it the task. 'task' is the child's whole first message, so put everything it needs in it. The call returns once the child holds the task; its outcome is not in the result: the runtime adds it to this conversation after you end your turn, so do not wait or poll. The child is ended once its outcome is read.`,
    inputSchema: {
      type: "object",
      properties: {
        capsule: { type: "string", enum: names, description: "Which capsule to start." },
        task: { type: "string", description: "The whole task, as the child should read it." },
      },
      required: ["capsule", "task"],
    },
    async call(input, ctx): Promise<ToolResult> {
      const started = clock();
      const name = str(input.capsule);
      const text = typeof input.task === "string" ? input.task : "";
      const target = d.targets.find((t) => t.name === name);
      const task = d.registry.get(ctx.taskId);
      if (!target) {
        return notReached(
          `'${name}' is not a capsule this capsule may start; capabilities.spawn.allow names: ${
            names.join(", ")
          }`,
        );
      }
      if (text.trim() === "") {
        return notReached(`'delegate-task' needs a task: the whole of what ${name} should do`);
      }
      if (!task || !task.handedOff) {
        return notReached("'delegate-task' is answered only while a task runs");
      }
      if (task.noAnswer !== undefined) {
        return notReached(
          "'delegate-task' starts nothing from a task that is ending without an answer.",
        );
      }
      const work = task.handedOff;
      const dlg = delegation(newId("dlg"), target, text, {
        trace: d.trace(),
        parent: work.parent,
        taskId: task.id,
        trust: task.trusted ? "trusted" : "untrusted",
        deadlineSecs: d.deadlineSecs,
        clock,
        workdirRoot: d.workdirRoot,
        ...(d.a2aClient && { observe: (r: A2aCallRecord) => d.a2aClient!(task.id, r) }),
      });
      work.add(dlg);
      const first = await dlg.begin();
      const base = { delegation_id: dlg.id, capsule: name };
      const took = clock() - started;
      if (first.kind === "ended") {
        dlg.delivered = true;
        const { status, output } = first.answer;
        return fenced(
          "delegate-task",
          { ...base, status, output },
          `[delegate-task] Delegation ${dlg.id} to ${name} ended ${status}, with no outcome from ${name}. Do not present an answer of your own as ${name}'s.`,
          true,
          took,
        );
      }
      return fenced(
        "delegate-task",
        { ...base, status: "started", child_task_id: dlg.remoteTaskId },
        `[delegate-task] ${name} is now working on delegation ${dlg.id} in a capsule of its own. Its outcome is not in this result and no tool fetches it: the runtime adds it to this conversation after you end your turn. Unless you still have work to hand out, end your turn now by replying without calling a tool.`,
        false,
        took,
      );
    },
  };
}
