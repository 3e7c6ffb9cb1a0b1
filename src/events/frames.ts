/**
 * Murmur frames (docs/protocol.md "Frames"): carried under `metadata[STREAM_URI]` of a
 * StreamResponse on activated connections. Key order matters on the wire for `artifact` (every key,
 * in order).
 */

export const STREAM_URI =
  "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
export const DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1";
export const CAPSULE_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1";
/** The steer extension (docs/approvals.md "Steering"): its key in a message's metadata marks a steer. */
export const STEER_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1";

export interface AttachmentRef {
  mediaType: string;
  sizeBytes: number;
  sha256: string;
  url: string;
}

export interface ArtifactFrame {
  frame: "artifact";
  toolName: string;
  content: string;
  fenceSource: string | null;
  toolCallId: string | null;
  isError: boolean;
  durationMs: number | null;
  exitCode: number | null;
  truncated: boolean;
  attachments: AttachmentRef[];
}

/** A running tool's own progress (an MCP server's `notifications/progress`, docs/mcp.md). */
export interface ToolProgressFrame {
  frame: "tool-progress";
  toolCallId: string;
  toolName: string;
  progress: number;
  total?: number;
  message?: string;
}

export interface QuotaWindow {
  name: string;
  used?: number;
  resetsAtMs?: number;
  windowMinutes?: number;
  state?: "ok" | "warning" | "exhausted";
}

/** Frames that belong to a task: numbered, replayable, written while the task works. */
export type TaskFrame =
  | { frame: "text"; text: string; final: boolean }
  | { frame: "thinking"; text: string; final: false }
  | { frame: "tool-call-started"; toolCallId: string; toolName: string }
  | { frame: "tool-call-progress"; toolCallId: string; inputBytes: number }
  | ToolProgressFrame
  | ArtifactFrame
  | { frame: "quota"; windows: QuotaWindow[] }
  | { frame: "suggested-prompt"; text: string }
  /** A steer message was read by the running task before turn `turn` (src/session/steer.ts). */
  | { frame: "steer-taken"; messageId: string; turn: number };

/** Frames of one connection: never numbered, never in the replay buffer. */
export type ConnectionFrame =
  | { frame: "gap"; firstAvailableId: number }
  | { frame: "lagged"; missed: number }
  | { frame: "connection-ack"; role: "observer"; conversationMode: "stateless" | "threaded" }
  | { frame: "capsule-closed" };

/** Builds an artifact frame with every key present, in docs/protocol.md "Frames" order. */
export function artifactFrame(f: Omit<ArtifactFrame, "frame">): ArtifactFrame {
  return {
    frame: "artifact",
    toolName: f.toolName,
    content: f.content,
    fenceSource: f.fenceSource,
    toolCallId: f.toolCallId,
    isError: f.isError,
    durationMs: f.durationMs,
    exitCode: f.exitCode,
    truncated: f.truncated,
    attachments: f.attachments,
  };
}
