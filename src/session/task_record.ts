/**
 * One task as the registry holds it. `toA2A` is what GetTask answers; everything a client can
 * read about a task comes from here.
 */
import type { Artifact, Message, Part, Task, TaskState, TaskStatus } from "../a2a/types.ts";
import type { PendingApproval } from "./approval.ts";
import type { PendingSteer } from "./steer.ts";
import { isTerminal, timestamp } from "../a2a/types.ts";
import type { HandedOff } from "../crew/calls/handed_off.ts";
import type { TaskHistory } from "./task_history.ts";
import type { PublishedFile } from "./published_files.ts";
import type { SourceError } from "../tools/source_errors.ts";

/** Queue lanes (docs/door.md: user > peer > bg, by `x-murmur-task-origin`). */
export type Origin = "user" | "peer" | "schedule" | "event" | "completion" | "system";
export type Lane = "user" | "peer" | "bg";
export type TaskSource = "a2a" | "task_md" | "detached_shell" | "detached_lost";

export function laneOf(origin: Origin): Lane {
  if (origin === "user") return "user";
  if (origin === "peer") return "peer";
  return "bg";
}

export interface StoredImage {
  mediaType: string;
  data: Uint8Array;
}

export interface ResidueItem {
  kind: "detached_shell";
  work_id: string;
  binary: string;
  command: string;
  started_at_ms: number;
}

export interface TaskRecord {
  readonly id: string;
  readonly contextId: string;
  readonly origin: Origin;
  readonly lane: Lane;
  readonly source: TaskSource;
  readonly trusted: boolean;
  /** The task text as the model receives it. */
  readonly text: string;
  /** The A2A message that started it. */
  readonly messageId?: string;
  /**
   * The message asked to forget the context's harness session (`message.metadata[<door
   * URI>].forgetSession`, process transport only): dropped just before the task's harness starts.
   */
  readonly forgetSession?: boolean;
  readonly createdAt: number;
  state: TaskState;
  status: TaskStatus;
  /** ms of the last change: state, or status message while working (ListTasks orders by it). */
  changedAt: number;
  /** The answer, once completed (GetTask's `response` artifact when non-empty). */
  response?: string;
  /** The question while input is required (GetTask's `prompt` artifact). */
  prompt?: string;
  /** The messages of the task, bounded (task_history.ts): GetTask's `history`. */
  readonly history: TaskHistory;
  /** Files and data the task published (published_files.ts), in order: GetTask's artifacts. */
  readonly published: PublishedFile[];
  /** What still runs after a cancel (CancelTask's `residue` artifact). */
  residue: ResidueItem[];
  /** Images tool calls of this task returned, by sha256 hex (GET /attachments/…). */
  readonly attachments: Map<string, StoredImage>;
  /** Raised to cancel the running attempt. */
  readonly abort: AbortController;
  /** Calls and delegations this task handed off (docs/crews.md); the loop sets it at start. */
  handedOff?: HandedOff;
  /**
   * `end-without-answer` was accepted: the reason. The attempt ends after the turn's tool calls;
   * the task fails with it and GetTask says `metadata.murmur.noAnswer: true`.
   */
  noAnswer?: string;
  /** Tool sources (MCP servers) the task went without (docs/mcp.md): GetTask's metadata. */
  sourceErrors?: SourceError[];
  /**
   * The task did more than answer in its first model turn (a tool call, a second turn, an input
   * wait, a reopen): it cannot be answered as a direct reply (src/door/direct_reply.ts).
   */
  indirect?: boolean;
  /** Set while a request-input wait is open: delivers the reply. */
  inputWaiter?: (reply: string) => void;
  /** Set while a call waits for approval (docs/approvals.md): the door answers it. */
  approval?: PendingApproval;
  /** Steer messages not yet read by the running task (src/session/steer.ts), oldest first. */
  steers?: PendingSteer[];
  /** Each tool call's input as compact JSON, newest kept (call_inputs.ts; the live page's). */
  callInputs?: Map<string, string>;
  /** Resolves when the task reaches a terminal state. */
  readonly done: Promise<void>;
  markDone(): void;
}

function textPart(text: string) {
  return { text, mediaType: "text/plain" };
}

export function artifactOf(name: string, text: string): Artifact {
  return { artifactId: name, name, parts: [textPart(text)] };
}

export function agentMessage(
  messageId: string,
  task: TaskRecord,
  text: string,
  extraParts: Part[] = [],
): Message {
  return {
    messageId,
    contextId: task.contextId,
    taskId: task.id,
    role: "ROLE_AGENT",
    parts: [textPart(text), ...extraParts],
  };
}

/** The agent's reply that ended a task, as its history holds it. */
export function replyMessage(task: TaskRecord, text: string): Message {
  return agentMessage(`msg_${task.id}_response`, task, text);
}

/**
 * GetTask's answer. `includeArtifacts: false` omits the key (ListTasks default). `historyLength`
 * as A2A's GetTask reads it: undefined, every message kept; 0, no `history` key; n, the n newest.
 */
export function toA2A(task: TaskRecord, includeArtifacts = true, historyLength?: number): Task {
  const status: TaskStatus = {
    state: task.state,
    ...(task.status.message && (isTerminal(task.state)) ? { message: task.status.message } : {}),
    timestamp: timestamp(task.changedAt),
  };
  const out: Task = { id: task.id, contextId: task.contextId, status };
  if (includeArtifacts) {
    const artifacts: Artifact[] = [];
    if (task.state === "TASK_STATE_COMPLETED" && task.response) {
      artifacts.push(artifactOf("response", task.response));
    }
    if (task.state === "TASK_STATE_INPUT_REQUIRED" && task.prompt !== undefined) {
      artifacts.push(artifactOf("prompt", task.prompt));
    }
    if (task.state === "TASK_STATE_INPUT_REQUIRED" && task.approval) {
      // The pending approval as a data part: what `mur approve` reads to answer it.
      artifacts.push({
        artifactId: "approval",
        name: "approval",
        parts: [{ data: task.approval.detail, mediaType: "application/json" }],
      });
    }
    for (const f of task.published) artifacts.push(f.artifact);
    if (task.residue.length > 0) {
      artifacts.push({
        artifactId: "residue",
        name: "residue",
        parts: task.residue.map((r) => ({ data: r, mediaType: "application/json" })),
      });
    }
    if (artifacts.length > 0) out.artifacts = artifacts;
  }
  if (historyLength !== 0 && task.history.size > 0) {
    out.history = task.history.newest(historyLength);
  }
  const murmur: Record<string, unknown> = {};
  if (task.noAnswer !== undefined && task.state === "TASK_STATE_FAILED") murmur.noAnswer = true;
  // The history's limit (lifecycle.history_limit) dropped the oldest messages: how many.
  if (task.history.dropped > 0) murmur.historyDropped = task.history.dropped;
  if (task.sourceErrors?.length) murmur.sourceErrors = task.sourceErrors;
  if (Object.keys(murmur).length > 0) out.metadata = { murmur };
  return out;
}
