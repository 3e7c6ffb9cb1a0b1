/**
 * What a session is built from and what its door-facing operations take and answer: the
 * boundary of src/session/session.ts, which `mur run` (src/cli/run_assembly.ts) and the door
 * (src/door/methods.ts) are written against.
 */
import type { ContainmentClass } from "../containment/classes.ts";
import type { ContainmentPolicy } from "../containment/policy.ts";
import type { AnyDriver, ConversationMessage } from "../drivers/types.ts";
import type { Manifest } from "../manifest/types.ts";
import type { RuntimeArtifactField, TraceFieldsOf } from "../trace_events.ts";
import type { TraceLine } from "../trace_writer.ts";
import type { Tool } from "../tools/types.ts";
import type { Hooks } from "./hooks_api.ts";
import type { ToolDispatcher } from "./task_run.ts";
import type { UserMessage } from "./registry.ts";
import type { Origin, ResidueItem, TaskRecord, TaskSource } from "./task_record.ts";
import type { Workdir } from "./workdir.ts";

/** `session_start`'s containment fields and the policy every spawn of the session gets. */
export interface SessionContainment {
  declared: ContainmentClass | null;
  achieved: ContainmentClass;
  policy?: ContainmentPolicy;
}

export interface SessionOptions {
  id: string;
  manifest: Manifest;
  workdir: Workdir;
  /** A per-turn driver, or a harness (`transport: process`). */
  driver: AnyDriver;
  tools: ToolDispatcher;
  /** Tools the session implements itself (request-input). */
  sessionTools?: Map<string, Tool>;
  hooks: Hooks;
  /** `--context`: the launch task's context id. */
  contextId?: string;
  /** ms to wait for a first task when none was given (30 s; `MURMUR_A2A_TIMEOUT_SECS`). */
  idleTimeoutMs: number;
  /** Running detached shells, for residue (CancelTask, StopSession). */
  residue?: () => ResidueItem[];
  /** `mur run --resume`: the context the launch task continues, and its recorded history. */
  resume?: {
    fromSession: string;
    contextId: string;
    history: ConversationMessage[];
    /** The old session's tasks at rest, answered by this one (src/session/task_journal.ts). */
    tasks?: TaskRecord[];
  };
  /** The loop writes a canceled running task's final status (process transport). */
  holdCancelStatus?: boolean;
  /** What the staging phase staged (`session_start.runtime_artifacts`; absent: none). */
  runtimeArtifacts?: RuntimeArtifactField[];
  /** The containment the launch settled on (src/containment/launch.ts); absent: advisory. */
  containment?: SessionContainment;
  /** stderr */
  warn(line: string): void;
  clock?: () => number;
  /** OpenTelemetry export (src/otel/export.ts): sees every trace line, flushed at the end. */
  otel?: {
    line(line: TraceLine): void;
    /** Flushes (bounded) and answers the `otel_export` line's fields. */
    finish(at: number, exitStatus: string): Promise<TraceFieldsOf["otel_export"]>;
  };
  /**
   * Push notifications (src/push/push.ts): drained at the end, after the last task event and
   * before `otel_export` and `session_end`, so what was not delivered is in the trace.
   */
  push?: { finish(): Promise<unknown> };
}

export interface SubmitRequest {
  text: string;
  messageId?: string;
  contextId?: string;
  origin: Origin;
  trusted: boolean;
  source?: TaskSource;
  /** Forget the context's harness session before the task runs (process transport only). */
  forgetSession?: boolean;
  /** The A2A message as the task's history keeps it (registry.ts `UserMessage`). */
  message?: UserMessage;
}

export type SubmitResult =
  | { kind: "accepted"; task: TaskRecord }
  | { kind: "rejected"; task: TaskRecord };

export const BUSY = "task rejected: capsule is busy";
export const CLOSING = "task rejected: the session is closing";
