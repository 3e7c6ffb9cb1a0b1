/**
 * Reading `params.message` of SendMessage / SendStreamingMessage completely, or refusing it
 * (docs/protocol.md "Refusals"; README "The door"), and rendering its parts as the text the model
 * receives.
 */
import { a2aError, invalidParams, type RpcError } from "./jsonrpc.ts";
import { DOOR_URI } from "../events/frames.ts";
import type { Part } from "../a2a/types.ts";
import type { UserMessage } from "../session/registry.ts";

export interface IncomingMessage {
  messageId: string;
  taskId?: string;
  contextId?: string;
  text: string;
  referenceTaskIds: string[];
  forgetSession: boolean;
  /** The message's metadata named the door extension (the response then names its URI). */
  usedDoorExtension: boolean;
  /** The message as the task's history keeps it (docs/protocol.md "Task history"). */
  history: UserMessage;
}

/** A text or data part as sent, with only the keys a Part has (camelCase; docs/protocol.md). */
function keptPart(p: Record<string, unknown>): Part {
  const out: Record<string, unknown> = "text" in p ? { text: p.text } : { data: p.data };
  const mediaType = mediaTypeOf(p);
  if (typeof mediaType === "string") out.mediaType = mediaType;
  if (typeof p.filename === "string") out.filename = p.filename;
  if (typeof p.metadata === "object" && p.metadata !== null && !Array.isArray(p.metadata)) {
    out.metadata = p.metadata;
  }
  return out as unknown as Part;
}

const bad = (m: string) => invalidParams(`Invalid params: ${m}`);

/** A part's `mediaType`, or its proto field name `media_type` (ProtoJSON accepts both). */
function mediaTypeOf(p: Record<string, unknown>): unknown {
  return p.mediaType !== undefined ? p.mediaType : p.media_type;
}

// Why long: the message's checks in the order docs/protocol.md "Refusals" answers them, each a few
// lines with its own message.
export function readMessage(params: Record<string, unknown>): IncomingMessage | RpcError {
  const m = params.message;
  if (typeof m !== "object" || m === null || Array.isArray(m)) {
    return bad("params.message must be an A2A Message object");
  }
  const msg = m as Record<string, unknown>;
  const messageId = msg.messageId ?? msg.message_id;
  if (typeof messageId !== "string" || messageId === "") {
    return bad("message.messageId must be a non-empty string");
  }
  if (msg.role !== "ROLE_USER") {
    return bad("message.role must be ROLE_USER: a message to this agent is from the user");
  }
  const parts = msg.parts;
  if (!Array.isArray(parts) || parts.length === 0) {
    return bad("message.parts must be a non-empty array");
  }
  const kinds = ["text", "raw", "url", "data"] as const;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (typeof p !== "object" || p === null || Array.isArray(p)) {
      return bad(`message.parts[${i}] is not an object`);
    }
    const set = kinds.filter((k) => k in (p as object));
    if (set.length === 0) return bad(`message.parts[${i}] sets none of text, raw, url and data`);
    if (set.length > 1) {
      return bad(
        `message.parts[${i}] sets ${
          set.join(" and ")
        }; a part sets exactly one of text, raw, url and data`,
      );
    }
    for (const f of ["text", "raw", "url", "mediaType", "filename"]) {
      const v = f === "mediaType"
        ? mediaTypeOf(p as Record<string, unknown>)
        : (p as Record<string, unknown>)[f];
      if (v !== undefined && typeof v !== "string") {
        return bad(`message.parts[${i}].${f} is not a string`);
      }
    }
  }
  // ProtoJSON: `null` for a field is its default, i.e. absent; either spelling of a name counts.
  const taskId = msg.taskId ?? msg.task_id ?? undefined;
  if (taskId !== undefined && typeof taskId !== "string") {
    return bad("message.taskId must be a string");
  }
  const contextId = msg.contextId ?? msg.context_id ?? undefined;
  if (contextId !== undefined && typeof contextId !== "string") {
    return bad("message.contextId must be a string");
  }
  const refs = msg.referenceTaskIds ?? msg.reference_task_ids ?? undefined;
  let referenceTaskIds: string[] = [];
  if (refs !== undefined) {
    if (!Array.isArray(refs)) return bad("message.referenceTaskIds must be an array");
    if (refs.some((r) => typeof r !== "string" || r === "")) {
      return bad("message.referenceTaskIds must hold non-empty strings");
    }
    referenceTaskIds = [...new Set(refs as string[])];
    if (referenceTaskIds.length > 16) {
      return bad(
        `message.referenceTaskIds names ${referenceTaskIds.length} tasks; at most 16 may be referenced`,
      );
    }
  }
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as Record<string, unknown>;
    const kind = "raw" in p ? "raw" : "url" in p ? "url" : null;
    if (kind) {
      const md: Record<string, string> = { partIndex: String(i) };
      const mediaType = mediaTypeOf(p);
      if (typeof mediaType === "string") md.mediaType = mediaType;
      return a2aError(
        "contentTypeNotSupported",
        `message.parts[${i}] is a ${kind} part; this agent reads text and data parts only`,
        md,
      );
    }
  }
  const meta = msg.metadata;
  const doorMeta = typeof meta === "object" && meta !== null
    ? (meta as Record<string, unknown>)[DOOR_URI]
    : undefined;
  const forgetSession = typeof doorMeta === "object" && doorMeta !== null &&
    (doorMeta as Record<string, unknown>).forgetSession === true;
  return {
    messageId,
    taskId: taskId === "" ? undefined : taskId as string | undefined,
    contextId: contextId as string | undefined,
    text: renderParts(parts as Record<string, unknown>[]),
    referenceTaskIds,
    forgetSession,
    usedDoorExtension: doorMeta !== undefined,
    history: {
      messageId,
      parts: (parts as Record<string, unknown>[]).map(keptPart),
      ...(typeof meta === "object" && meta !== null && !Array.isArray(meta)
        ? { metadata: meta as Record<string, unknown> }
        : {}),
    },
  };
}

/**
 * Nesting beyond which a data part is written compact rather than pretty-printed: indentation
 * grows with depth, so a deeply nested value (a body can nest millions of levels) would
 * pretty-print to a quadratic size.
 */
export const PRETTY_DEPTH = 64;

/** How deep a JSON value nests, counted without recursion and stopping past `limit`. */
function nestingExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}

/** The longest run of backticks in `s`. */
function longestBacktickRun(s: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    run = s.charCodeAt(i) === 96 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/** A Markdown fence one backtick longer than any run in `body`, at least three. */
export function fenced(label: string, body: string): string {
  const fence = "`".repeat(Math.max(3, longestBacktickRun(body) + 1));
  return `${fence}${label}\n${body}\n${fence}`;
}

/** Parts in order joined by `\n`: text as-is, data pretty-printed in a fence labelled `data`. */
export function renderParts(parts: Record<string, unknown>[]): string {
  return parts.map((p) => {
    if ("text" in p) return String(p.text);
    const pretty = !nestingExceeds(p.data, PRETTY_DEPTH);
    const json = (pretty ? JSON.stringify(p.data, null, 2) : JSON.stringify(p.data)) ?? "null";
    let label = "data";
    const clean = (v: string) => v.replace(/[\s`=]/g, "_");
    const mediaType = mediaTypeOf(p);
    if (typeof mediaType === "string") label += ` media-type=${clean(mediaType)}`;
    if (typeof p.filename === "string") label += ` filename=${clean(p.filename)}`;
    return fenced(label, json);
  }).join("\n");
}
