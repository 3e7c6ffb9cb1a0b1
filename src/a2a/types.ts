/**
 * A2A v1.0 shapes as they go on the wire (ProtoJSON, lowerCamel, enums as strings).
 * Output only: input is checked field by field in door/message.ts and door/methods.ts.
 */

export type TaskState =
  | "TASK_STATE_SUBMITTED"
  | "TASK_STATE_WORKING"
  | "TASK_STATE_INPUT_REQUIRED"
  | "TASK_STATE_COMPLETED"
  | "TASK_STATE_FAILED"
  | "TASK_STATE_CANCELED"
  | "TASK_STATE_REJECTED";

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set<TaskState>([
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
]);

export function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.has(state);
}

/** Murmur's word for a state: `TASK_STATE_INPUT_REQUIRED` → `input-required`. */
export function stateWord(state: TaskState): string {
  return state.slice("TASK_STATE_".length).toLowerCase().replace("_", "-");
}

/** What every part may carry besides its content. */
interface PartCommon {
  mediaType?: string;
  filename?: string;
  metadata?: Record<string, unknown>;
}

export type Part =
  | ({ text: string } & PartCommon)
  | ({ data: unknown } & PartCommon)
  /** A file's bytes, base64. */
  | ({ raw: string } & PartCommon)
  /** Where a file's bytes can be fetched (for mur: the door's `/files/…` route). */
  | ({ url: string } & PartCommon);

export interface Message {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: "ROLE_USER" | "ROLE_AGENT";
  parts: Part[];
  metadata?: Record<string, unknown>;
}

export interface TaskStatus {
  state: TaskState;
  message?: Message;
  timestamp: string;
}

export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts?: Artifact[];
  history?: Message[];
  metadata?: Record<string, unknown>;
}

export interface TaskStatusUpdateEvent {
  taskId: string;
  contextId: string;
  status: TaskStatus;
  metadata?: Record<string, unknown>;
}

export interface TaskArtifactUpdateEvent {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  lastChunk?: boolean;
}

/** A StreamResponse sets exactly one member. */
export type StreamResponse =
  | { task: Task }
  | { statusUpdate: TaskStatusUpdateEvent }
  | { artifactUpdate: TaskArtifactUpdateEvent }
  | { message: Message };

/** RFC 3339 UTC with milliseconds and `Z` (Date#toISOString already is exactly that). */
export function timestamp(ms: number = Date.now()): string {
  return new Date(ms).toISOString();
}
