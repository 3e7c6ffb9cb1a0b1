/**
 * The zod schemas src/watch/schema.ts used before issue 18, kept verbatim as the reference its
 * hand-written checks are compared with (tests/watch/schema_test.ts). Not used by mur.
 */
import { z } from "zod";
import { STREAM_URI } from "../../src/events/frames.ts";

const PartSchema = z.object({ text: z.string().optional(), data: z.unknown().optional() });

const MessageSchema = z.object({
  parts: z.array(PartSchema).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const StatusUpdateSchema = z.object({
  taskId: z.string(),
  contextId: z.string().optional(),
  status: z.object({ state: z.string(), message: MessageSchema.optional() }),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const ArtifactUpdateSchema = z.object({
  taskId: z.string(),
  contextId: z.string().optional(),
  artifact: z.object({
    artifactId: z.string().optional(),
    name: z.string().optional(),
    parts: z.array(PartSchema).optional(),
  }),
});

export const ArtifactFrameSchema = z.object({
  frame: z.literal("artifact"),
  toolName: z.string(),
  content: z.string(),
  fenceSource: z.string().nullable().optional(),
  toolCallId: z.string().nullable().optional(),
  isError: z.boolean(),
  durationMs: z.number().nullable().optional(),
  exitCode: z.number().nullable().optional(),
  truncated: z.boolean().optional(),
  attachments: z.array(
    z.object({ mediaType: z.string(), sizeBytes: z.number(), url: z.string() }),
  ).optional(),
});
export type ArtifactFrameIn = z.infer<typeof ArtifactFrameSchema>;

/** The frames mur watch acts on; every other frame is read as `other` and ignored. */
export const FrameSchema = z.discriminatedUnion("frame", [
  z.object({ frame: z.literal("text"), text: z.string(), final: z.boolean().optional() }),
  ArtifactFrameSchema,
  z.object({ frame: z.literal("gap"), firstAvailableId: z.number() }),
  z.object({ frame: z.literal("lagged"), missed: z.number() }),
  z.object({ frame: z.literal("connection-ack"), conversationMode: z.string().optional() }),
  z.object({ frame: z.literal("capsule-closed") }),
]);
export type Frame = z.infer<typeof FrameSchema>;

export type WatchEvent =
  | { kind: "status"; taskId: string; contextId?: string; state: string; text?: string }
  | { kind: "frame"; taskId?: string; contextId?: string; frame: Frame }
  | { kind: "response"; taskId: string; contextId?: string; text: string }
  | { kind: "ignored" };

function partsText(parts: z.infer<typeof PartSchema>[] | undefined): string | undefined {
  if (!parts || parts.length === 0) return undefined;
  return parts
    .map((
      p,
    ) => (p.text !== undefined ? p.text : p.data !== undefined ? JSON.stringify(p.data) : ""))
    .join("");
}

/** The frame under metadata[STREAM_URI], if that object names one (the reopen annotation does not). */
function frameOf(metadata: Record<string, unknown> | undefined): Frame | "unknown" | null {
  const m = metadata?.[STREAM_URI];
  if (!m || typeof m !== "object" || !("frame" in m)) return null;
  const parsed = FrameSchema.safeParse(m);
  return parsed.success ? parsed.data : "unknown";
}

/**
 * The task an event belongs to, whatever its member (`statusUpdate`, `artifactUpdate`, `task`,
 * a `message` naming one); undefined for the session's own events (connection-ack, gap, lagged,
 * capsule-closed). `mur watch --task` keeps the events of one task and these.
 */
export function eventTaskId(result: unknown): string | undefined {
  if (!result || typeof result !== "object") return undefined;
  const r = result as Record<string, { taskId?: unknown; id?: unknown } | undefined>;
  const id = r.statusUpdate?.taskId ?? r.artifactUpdate?.taskId ?? r.task?.id ??
    r.message?.taskId;
  return typeof id === "string" ? id : undefined;
}

/** One StreamResponse (the JSON-RPC `result`) → what the renderer acts on. */
export function classify(result: unknown): WatchEvent {
  if (!result || typeof result !== "object") return { kind: "ignored" };
  const r = result as Record<string, unknown>;
  if ("statusUpdate" in r) {
    const s = StatusUpdateSchema.safeParse(r.statusUpdate);
    if (!s.success) return { kind: "ignored" };
    const u = s.data;
    const frame = frameOf(u.metadata);
    if (frame === "unknown") return { kind: "ignored" };
    if (frame) return { kind: "frame", taskId: u.taskId, contextId: u.contextId, frame };
    return {
      kind: "status",
      taskId: u.taskId,
      contextId: u.contextId,
      state: u.status.state,
      text: partsText(u.status.message?.parts),
    };
  }
  if ("artifactUpdate" in r) {
    const a = ArtifactUpdateSchema.safeParse(r.artifactUpdate);
    if (!a.success) return { kind: "ignored" };
    const art = a.data.artifact;
    if (art.name !== "response" && art.artifactId !== "response") return { kind: "ignored" };
    return {
      kind: "response",
      taskId: a.data.taskId,
      contextId: a.data.contextId,
      text: partsText(art.parts) ?? "",
    };
  }
  if ("message" in r) {
    const m = MessageSchema.safeParse(r.message);
    if (!m.success) return { kind: "ignored" };
    const frame = frameOf(m.data.metadata);
    if (!frame || frame === "unknown") return { kind: "ignored" };
    return { kind: "frame", frame };
  }
  return { kind: "ignored" }; // `task`, and members this client does not know
}
