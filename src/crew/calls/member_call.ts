/**
 * One `call-member` call (docs/crews.md): a remote task (remote_task.ts) sent to the member the
 * crew file names, with the `member_call_*` trace lines.
 */
import type { TraceWriter } from "../../trace_writer.ts";
import { memberAddress } from "./crew_file.ts";
import { BUSY_MESSAGE, RemoteTask } from "./remote_task.ts";
import type { A2aCallRecord } from "../../a2a/call_record.ts";

export interface MemberCallDeps {
  trace: TraceWriter;
  /** The parent of the call's trace lines (the calling task's `task_start`). */
  parent: string;
  taskId: string;
  trust: "trusted" | "untrusted";
  crewFile: string | undefined;
  deadlineSecs: number;
  clock: () => number;
  /** Told of each request to the member's door (docs/opentelemetry.md "A2A spans"). */
  observe?: (r: A2aCallRecord) => void;
}

export function memberCall(id: string, member: string, text: string, d: MemberCallDeps) {
  const base = { task_id: d.taskId, call_id: id, member };
  const startedAt = d.clock();
  return new RemoteTask(id, member, text, {
    kind: "call",
    trust: d.trust,
    deadlineSecs: d.deadlineSecs,
    clock: d.clock,
    observe: d.observe,
    open: (signal) => memberAddress(d.crewFile, member, signal),
    lostStatus: "unreachable",
    lines: {
      busy: (offer, waitedMs) =>
        d.trace.write("member_call_busy", d.parent, {
          ...base,
          offer,
          waited_ms: waitedMs,
          message: BUSY_MESSAGE,
        }),
      started: (taskId) =>
        d.trace.write("member_call_start", d.parent, { ...base, member_task_id: taskId }),
      ended: (answer, taskId, busyOffers) =>
        d.trace.write("member_call", d.parent, {
          ...base,
          ...(taskId !== undefined ? { member_task_id: taskId } : {}),
          status: answer.status,
          duration_ms: d.clock() - startedAt,
          output: answer.output,
          truncated: answer.truncated,
          busy_offers: busyOffers,
        }),
    },
  });
}
