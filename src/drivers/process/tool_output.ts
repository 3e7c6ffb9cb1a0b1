/**
 * Turning a harness's report of a tool result into the artifact's `content` string. Image bytes
 * never reach a frame (docs/protocol.md "Attachments"): each image becomes
 * `[image: <media_type>, <n> bytes, sha256 <hex>]`.
 */
import { createHash } from "node:crypto";
import { Buffer } from "node:buffer";

export function imagePlaceholder(mediaType: string, base64: string): string {
  const bytes = Buffer.from(base64, "base64");
  const hex = createHash("sha256").update(bytes).digest("hex");
  return `[image: ${mediaType}, ${bytes.length} bytes, sha256 ${hex}]`;
}

/**
 * A tool result's content as a harness reports it: a string, or an array of blocks in either
 * Anthropic form (`{type:"text",text}`, `{type:"image",source:{media_type,data}}`) or MCP form
 * (`{type:"image",mimeType,data}`). Text blocks are joined with "\n".
 */
export function toolOutputText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content == null ? "" : JSON.stringify(content);
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === "string") {
      parts.push(block);
      continue;
    }
    if (!block || typeof block !== "object") continue;
    const b = block as Record<string, unknown>;
    if (b.type === "text" && typeof b.text === "string") {
      parts.push(b.text);
    } else if (b.type === "image") {
      const source = (b.source ?? {}) as Record<string, unknown>;
      const mediaType = String(source.media_type ?? b.mimeType ?? b.media_type ?? "image");
      const data = String(source.data ?? b.data ?? "");
      parts.push(imagePlaceholder(mediaType, data));
    } else {
      parts.push(JSON.stringify(b));
    }
  }
  return parts.join("\n");
}
