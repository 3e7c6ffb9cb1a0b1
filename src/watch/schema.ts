/**
 * What mur watch reads off a murmur.WatchSession stream. Only the keys the renderer uses are
 * read; unknown keys are dropped and unknown members or frames are ignored, as docs/protocol.md
 * "Unknown frames and keys" asks of a client.
 *
 * Checked by hand rather than with zod: importing zod cost `mur watch` about 30 ms of CPU at
 * start (docs/benchmarks.md). tests/watch/schema_test.ts compares `classify` with the zod schemas this
 * replaced (tests/watch/zod_schema_reference.ts) on listed and generated events.
 */
import { STREAM_URI } from "../events/frames.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === "string";
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const opt = (v: unknown, is: (v: unknown) => boolean) => v === undefined || is(v);
const optNull = (v: unknown, is: (v: unknown) => boolean) => v === undefined || v === null || is(v);

/** Copies the listed keys that `o` has (a key present as undefined stays, as zod kept it). */
function pick<T>(o: Obj, keys: string[]): T {
  const out: Obj = {};
  for (const k of keys) if (Object.hasOwn(o, k)) out[k] = o[k];
  return out as T;
}

interface Part {
  text?: string;
  data?: unknown;
  raw?: string;
  url?: string;
  mediaType?: string;
  filename?: string;
}

function parts(v: unknown): Part[] | undefined | null {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) return null;
  const out: Part[] = [];
  for (const p of v) {
    if (!isObj(p) || !opt(p.text, isStr)) return null;
    out.push(pick<Part>(p, ["text", "data", "raw", "url", "mediaType", "filename"]));
  }
  return out;
}

interface MessageIn {
  parts?: Part[];
  metadata?: Obj;
}

function message(v: unknown): MessageIn | null {
  if (!isObj(v) || !opt(v.metadata, isObj)) return null;
  const ps = parts(v.parts);
  if (ps === null) return null;
  const out = pick<MessageIn>(v, ["metadata"]);
  if (Object.hasOwn(v, "parts")) out.parts = ps;
  return out;
}

export interface ArtifactFrameIn {
  frame: "artifact";
  toolName: string;
  content: string;
  fenceSource?: string | null;
  toolCallId?: string | null;
  isError: boolean;
  durationMs?: number | null;
  exitCode?: number | null;
  truncated?: boolean;
  attachments?: { mediaType: string; sizeBytes: number; url: string }[];
}

/** The frames mur watch acts on; every other frame is read as `other` and ignored. */
export type Frame =
  | { frame: "text"; text: string; final?: boolean }
  | ArtifactFrameIn
  | { frame: "gap"; firstAvailableId: number }
  | { frame: "lagged"; missed: number }
  | { frame: "connection-ack"; conversationMode?: string }
  | { frame: "capsule-closed" };

function artifactFrame(m: Obj): ArtifactFrameIn | null {
  if (
    !isStr(m.toolName) || !isStr(m.content) || !isBool(m.isError) ||
    !optNull(m.fenceSource, isStr) || !optNull(m.toolCallId, isStr) ||
    !optNull(m.durationMs, isNum) || !optNull(m.exitCode, isNum) || !opt(m.truncated, isBool)
  ) return null;
  let attachments: ArtifactFrameIn["attachments"];
  if (m.attachments !== undefined) {
    if (!Array.isArray(m.attachments)) return null;
    attachments = [];
    for (const a of m.attachments) {
      if (!isObj(a) || !isStr(a.mediaType) || !isNum(a.sizeBytes) || !isStr(a.url)) return null;
      attachments.push({ mediaType: a.mediaType, sizeBytes: a.sizeBytes, url: a.url });
    }
  }
  const out = pick<ArtifactFrameIn>(m, [
    "frame",
    "toolName",
    "content",
    "fenceSource",
    "toolCallId",
    "isError",
    "durationMs",
    "exitCode",
    "truncated",
    "attachments",
  ]);
  if (Object.hasOwn(m, "attachments")) out.attachments = attachments;
  return out;
}

/** A frame object → the frame, or null when it is not one mur watch knows (or is malformed). */
function frame(m: Obj): Frame | null {
  switch (m.frame) {
    case "text":
      return isStr(m.text) && opt(m.final, isBool) ? pick(m, ["frame", "text", "final"]) : null;
    case "artifact":
      return artifactFrame(m);
    case "gap":
      return isNum(m.firstAvailableId) ? pick(m, ["frame", "firstAvailableId"]) : null;
    case "lagged":
      return isNum(m.missed) ? pick(m, ["frame", "missed"]) : null;
    case "connection-ack":
      return opt(m.conversationMode, isStr) ? pick(m, ["frame", "conversationMode"]) : null;
    case "capsule-closed":
      return { frame: "capsule-closed" };
    default:
      return null;
  }
}

interface StatusUpdateIn {
  taskId: string;
  contextId?: string;
  state: string;
  message?: MessageIn;
  metadata?: Obj;
}

function statusUpdate(v: unknown): StatusUpdateIn | null {
  if (!isObj(v) || !isStr(v.taskId) || !opt(v.contextId, isStr) || !opt(v.metadata, isObj)) {
    return null;
  }
  const st = v.status;
  if (!isObj(st) || !isStr(st.state)) return null;
  let msg: MessageIn | undefined;
  if (st.message !== undefined) {
    const m = message(st.message);
    if (!m) return null;
    msg = m;
  }
  return {
    taskId: v.taskId,
    contextId: v.contextId as string | undefined,
    state: st.state,
    message: msg,
    metadata: v.metadata as Obj | undefined,
  };
}

interface ArtifactUpdateIn {
  taskId: string;
  contextId?: string;
  artifactId?: string;
  name?: string;
  parts?: Part[];
}

function artifactUpdate(v: unknown): ArtifactUpdateIn | null {
  if (!isObj(v) || !isStr(v.taskId) || !opt(v.contextId, isStr)) return null;
  const a = v.artifact;
  if (!isObj(a) || !opt(a.artifactId, isStr) || !opt(a.name, isStr)) return null;
  const ps = parts(a.parts);
  if (ps === null) return null;
  return {
    taskId: v.taskId,
    contextId: v.contextId as string | undefined,
    artifactId: a.artifactId as string | undefined,
    name: a.name as string | undefined,
    parts: ps,
  };
}

export type WatchEvent =
  | {
    kind: "status";
    taskId: string;
    contextId?: string;
    state: string;
    text?: string;
    /** The status carries an approval's data part (docs/door.md "Approvals and steering"). */
    approval?: true;
  }
  | { kind: "frame"; taskId?: string; contextId?: string; frame: Frame }
  | { kind: "response"; taskId: string; contextId?: string; text: string }
  | { kind: "published"; taskId: string; contextId?: string; artifact: PublishedIn }
  | { kind: "ignored" };

/**
 * A file or data artifact a task published (docs/protocol.md "Files and data"): its name, media
 * type, and how it travels (`inline` with its size, `url`, or `data`).
 */
export interface PublishedIn {
  name: string;
  mediaType?: string;
  how: "inline" | "url" | "data";
  /** Decoded size of an inline file. */
  bytes?: number;
  url?: string;
}

function publishedOf(a: ArtifactUpdateIn): PublishedIn | null {
  const p = a.parts?.[0];
  if (!p) return null;
  const name = p.filename ?? a.name ?? a.artifactId ?? "artifact";
  const base = { name, ...(p.mediaType !== undefined && { mediaType: p.mediaType }) };
  if (typeof p.raw === "string") {
    const pad = p.raw.endsWith("==") ? 2 : p.raw.endsWith("=") ? 1 : 0;
    return { ...base, how: "inline", bytes: Math.floor(p.raw.length / 4) * 3 - pad };
  }
  if (typeof p.url === "string") return { ...base, how: "url", url: p.url };
  if (p.data !== undefined) return { ...base, how: "data" };
  return null;
}

function partsText(parts: Part[] | undefined): string | undefined {
  if (!parts || parts.length === 0) return undefined;
  return parts
    .map((
      p,
    ) => (p.text !== undefined ? p.text : p.data !== undefined ? dataText(p.data) : ""))
    .join("");
}

/**
 * A data part as a line shows it: JSON, except an approval's, which its text part already says
 * for a person (docs/door.md "Approvals and steering").
 */
function dataText(data: unknown): string {
  return isApproval(data) ? "" : JSON.stringify(data);
}

function isApproval(data: unknown): boolean {
  return typeof data === "object" && data !== null &&
    (data as Record<string, unknown>).kind === "approval";
}

/** The frame under metadata[STREAM_URI], if that object names one (the reopen annotation does not). */
function frameOf(metadata: Record<string, unknown> | undefined): Frame | "unknown" | null {
  const m = metadata?.[STREAM_URI];
  if (!m || typeof m !== "object" || !("frame" in m)) return null;
  return frame(m as Obj) ?? "unknown";
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
    const u = statusUpdate(r.statusUpdate);
    if (!u) return { kind: "ignored" };
    const frame = frameOf(u.metadata);
    if (frame === "unknown") return { kind: "ignored" };
    if (frame) return { kind: "frame", taskId: u.taskId, contextId: u.contextId, frame };
    return {
      kind: "status",
      taskId: u.taskId,
      contextId: u.contextId,
      state: u.state,
      text: partsText(u.message?.parts),
      ...(u.message?.parts?.some((p) => isApproval(p.data)) ? { approval: true as const } : {}),
    };
  }
  if ("artifactUpdate" in r) {
    const a = artifactUpdate(r.artifactUpdate);
    if (!a) return { kind: "ignored" };
    if (a.name !== "response" && a.artifactId !== "response") {
      const published = publishedOf(a);
      return published
        ? { kind: "published", taskId: a.taskId, contextId: a.contextId, artifact: published }
        : { kind: "ignored" };
    }
    return {
      kind: "response",
      taskId: a.taskId,
      contextId: a.contextId,
      text: partsText(a.parts) ?? "",
    };
  }
  if ("message" in r) {
    const m = message(r.message);
    if (!m) return { kind: "ignored" };
    const frame = frameOf(m.metadata);
    if (!frame || frame === "unknown") return { kind: "ignored" };
    return { kind: "frame", frame };
  }
  return { kind: "ignored" }; // `task`, and members this client does not know
}
