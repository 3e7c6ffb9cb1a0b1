/**
 * One `delegate-task` delegation (docs/crews.md): a child capsule started from a manifest
 * `capabilities.spawn.allow` names (child_capsule.ts), for this one task, in a workdir of its own
 * under the delegating session's (`delegations/<dlg id>`). The task goes to its door and is
 * followed like a member call (remote_task.ts); once the outcome is read, or the delegation is
 * stopped, the child is ended. A child that dies mid-task is `crashed`.
 */
import { errorMessage } from "../../errors.ts";
import type { SpawnTarget } from "../../manifest/types.ts";
import type { TraceWriter } from "../../trace_writer.ts";
import { ChildCapsule } from "./child_capsule.ts";
import { RemoteTask } from "./remote_task.ts";
import type { A2aCallRecord } from "../../a2a/call_record.ts";

export interface DelegationDeps {
  trace: TraceWriter;
  /** The parent of the delegation's trace lines (the delegating task's `task_start`). */
  parent: string;
  taskId: string;
  trust: "trusted" | "untrusted";
  deadlineSecs: number;
  clock: () => number;
  /** The delegating session's workdir: children get `delegations/<id>` under it. */
  workdirRoot: string;
  /** How long a child may take to print its readiness line. */
  readyTimeoutMs?: number;
  /** Told of each request to the child's door (docs/opentelemetry.md "A2A spans"). */
  observe?: (r: A2aCallRecord) => void;
}

/** How long a child gets to end after its outcome before its group is killed. */
const CHILD_GRACE_MS = 5_000;

export function delegation(id: string, target: SpawnTarget, text: string, d: DelegationDeps) {
  const startedAt = d.clock();
  const childWorkdir = `delegations/${id}`;
  let child: ChildCapsule | null = null;
  const base = { task_id: d.taskId, delegation_id: id, capsule: target.name };
  return new RemoteTask(id, target.name, text, {
    kind: "delegation",
    trust: d.trust,
    deadlineSecs: d.deadlineSecs,
    clock: d.clock,
    observe: d.observe,
    async open(signal) {
      try {
        child = await ChildCapsule.start({
          manifest: target.path,
          label: target.name,
          // It waits to be ended after the task (`single` would exit as the task ends, before its
          // answer is read); only this runtime knows its loopback door, so it gets one task.
          args: [
            "--workdir",
            `${d.workdirRoot}/${childWorkdir}`,
            "--lifecycle-task-acceptance",
            "queue",
            "--lifecycle-after-task",
            "sleep",
          ],
          // A child is nobody's crew member: it gets no callees of its parent's.
          env: { MURMUR_CREW_CALLEES: "", MURMUR_CREW_FILE: "" },
          readyTimeoutMs: d.readyTimeoutMs,
        });
      } catch (e) {
        return `${target.name} could not be started: ${errorMessage(e)}`;
      }
      if (signal.aborted) {
        await child.stop(CHILD_GRACE_MS);
        return `the delegating task ended before ${target.name} was handed the task`;
      }
      return { name: target.name, url: child.url, token: child.tokens?.operator ?? "" };
    },
    lostStatus: "crashed",
    lines: {
      busy: () => {},
      started: (taskId) =>
        d.trace.write("delegation_start", d.parent, {
          ...base,
          child_session_id: child!.sessionId,
          child_pid: child!.pid,
          child_workdir: childWorkdir,
          child_task_id: taskId,
        }),
      ended: (answer, taskId) =>
        d.trace.write("delegation", d.parent, {
          ...base,
          child_session_id: child?.sessionId ?? null,
          ...(taskId !== undefined ? { child_task_id: taskId } : {}),
          duration_ms: d.clock() - startedAt,
          outcome: answer.status,
          output: answer.output,
          truncated: answer.truncated,
        }),
    },
    async close() {
      await child?.stop(CHILD_GRACE_MS);
    },
  });
}
