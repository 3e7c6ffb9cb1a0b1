/**
 * A message of SendMessage / SendStreamingMessage, its params read by its spec (src/a2a/spec.ts),
 * made into what the session takes (docs/protocol.md "Refusals"), and its parts rendered as the
 * text the model receives.
 */
import { a2aError, type RpcError } from "./jsonrpc.ts";
import type { MessageParams, MessagePart } from "../a2a/spec.ts";
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
  /** What it says, hashed (message_fingerprint.ts): a retry's equals the first send's. */
  fingerprint?: number;
}

/** A text or data part as sent, with only the keys a Part has (camelCase; docs/protocol.md). */
function keptPart(p: MessagePart): Part {
  const out: Record<string, unknown> = "text" in p ? { text: p.text } : { data: p.data };
  if (p.mediaType !== undefined) out.mediaType = p.mediaType;
  if (p.filename !== undefined) out.filename = p.filename;
  if (typeof p.metadata === "object" && p.metadata !== null && !Array.isArray(p.metadata)) {
    out.metadata = p.metadata;
  }
  return out as unknown as Part;
}

/**
 * The message as its spec read it (src/a2a/spec.ts: fields, parts, references), made into what
 * the send flow takes: a raw or url part is refused here (the agent reads text and data parts
 * only), the door extension's metadata read, and the parts rendered as the model's text.
 */
export function incomingMessage(msg: MessageParams): IncomingMessage | RpcError {
  for (let i = 0; i < msg.parts.length; i++) {
    const p = msg.parts[i];
    const kind = p.raw !== undefined ? "raw" : p.url !== undefined ? "url" : null;
    if (kind) {
      const md: Record<string, string> = { partIndex: String(i) };
      if (p.mediaType !== undefined) md.mediaType = p.mediaType;
      return a2aError(
        "contentTypeNotSupported",
        `message.parts[${i}] is a ${kind} part; this agent reads text and data parts only`,
        md,
      );
    }
  }
  const meta = msg.metadata;
  const doorMeta = doorMetadata(meta);
  return {
    messageId: msg.messageId,
    taskId: msg.taskId === "" ? undefined : msg.taskId,
    contextId: msg.contextId,
    text: renderParts(msg.parts),
    referenceTaskIds: msg.referenceTaskIds ?? [],
    forgetSession: doorMeta?.forgetSession === true,
    usedDoorExtension: doorMeta !== undefined,
    history: {
      messageId: msg.messageId,
      parts: msg.parts.map(keptPart),
      ...(typeof meta === "object" && meta !== null && !Array.isArray(meta)
        ? { metadata: meta as Record<string, unknown> }
        : {}),
    },
  };
}

/** The door extension's entry of a message's metadata, when it names one. */
function doorMetadata(meta: unknown): Record<string, unknown> | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const door = (meta as Record<string, unknown>)[DOOR_URI];
  if (door === undefined) return undefined;
  return typeof door === "object" && door !== null ? door as Record<string, unknown> : {};
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
export function renderParts(parts: MessagePart[]): string {
  return parts.map((p) => {
    if ("text" in p) return String(p.text);
    const pretty = !nestingExceeds(p.data, PRETTY_DEPTH);
    const json = (pretty ? JSON.stringify(p.data, null, 2) : JSON.stringify(p.data)) ?? "null";
    let label = "data";
    const clean = (v: string) => v.replace(/[\s`=]/g, "_");
    if (p.mediaType !== undefined) label += ` media-type=${clean(p.mediaType)}`;
    if (typeof p.filename === "string") label += ` filename=${clean(p.filename)}`;
    return fenced(label, json);
  }).join("\n");
}
