/**
 * An MCP `CallToolResult` as the model and the stream receive it (docs/mcp.md "Calls"): text
 * blocks in order; images as attachments (as command tools' CallToolResult,
 * src/tools/command.ts); an embedded resource's text with its uri, a blob image as an
 * attachment, other blobs and audio named with their size; resource links as one line each;
 * `structuredContent` as JSON unless a text block already carries the same value. `isError` is
 * data. Text over TRUNCATE_BYTES is cut as every tool output is, the whole kept in
 * `logs/mcp-<server>-<time>.log`.
 */
import { errorMessage } from "../../errors.ts";
import { fromBase64 } from "../command.ts";
import { headUtf8, TRUNCATE_BYTES, withNewline, writeOutputLog } from "../output.ts";
import type { ImageResult } from "../types.ts";

export interface McpContentResult {
  text: string;
  images: ImageResult[];
  isError: boolean;
  truncated: boolean;
}

type Block = Record<string, unknown>;

/** Reads one result's content; never throws on an odd block (it is named and left out). */
export function readContent(result: Record<string, unknown>): Omit<McpContentResult, "truncated"> {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const parts: string[] = [];
  const images: ImageResult[] = [];
  for (const [i, raw] of content.entries()) {
    const b = (raw && typeof raw === "object" ? raw : {}) as Block;
    switch (b.type) {
      case "text":
        parts.push(String(b.text ?? ""));
        break;
      case "image": {
        const data = typeof b.data === "string" ? fromBase64(b.data) : null;
        if (data) images.push({ mediaType: String(b.mimeType ?? "image/png"), data });
        else parts.push(`[content[${i}]: image data is not valid base64; left out]`);
        break;
      }
      case "audio":
        parts.push(`[content[${i}]: audio (${b.mimeType}, ${b64Bytes(b.data)} bytes) left out]`);
        break;
      case "resource":
        parts.push(resourceText(i, (b.resource ?? {}) as Block, images));
        break;
      case "resource_link":
        parts.push(
          `[resource link: ${b.name ?? ""} <${b.uri}>${b.mimeType ? ` (${b.mimeType})` : ""}${
            b.description ? `: ${b.description}` : ""
          }]`,
        );
        break;
      default:
        parts.push(`[content[${i}]: "${String(b.type)}" blocks are not supported; left out]`);
    }
  }
  const structured = result.structuredContent;
  if (structured !== undefined && !parts.some((p) => sameJson(p, structured))) {
    parts.push(`Structured content:\n${JSON.stringify(structured, null, 2)}`);
  }
  return { text: parts.join("\n"), images, isError: result.isError === true };
}

function resourceText(i: number, r: Block, images: ImageResult[]): string {
  const head = `[resource ${r.uri ?? `content[${i}]`}${r.mimeType ? ` (${r.mimeType})` : ""}]`;
  if (typeof r.text === "string") return `${head}\n${r.text}`;
  if (typeof r.blob === "string") {
    const mime = String(r.mimeType ?? "");
    const data = mime.startsWith("image/") ? fromBase64(r.blob) : null;
    if (data) {
      images.push({ mediaType: mime, data });
      return `${head} image attached`;
    }
    return `${head} binary, ${b64Bytes(r.blob)} bytes, left out`;
  }
  return head;
}

function b64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const clean = data.replace(/\s+/g, "");
  return Math.floor((clean.length * 3) / 4) -
    (clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0);
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** `text` cut to TRUNCATE_BYTES on a character boundary, the whole written to the workdir's logs. */
export async function boundText(
  text: string,
  workdir: string,
  logPrefix: string,
  nowMs: number,
): Promise<{ text: string; truncated: boolean }> {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= TRUNCATE_BYTES) return { text, truncated: false };
  let logPath: string;
  try {
    logPath = await writeOutputLog(workdir, logPrefix, nowMs, text);
  } catch (e) {
    logPath = `(not written: ${errorMessage(e)})`;
  }
  return {
    text: withNewline(headUtf8(bytes, TRUNCATE_BYTES)) +
      `[output truncated: the first ${TRUNCATE_BYTES} of ${bytes.length} bytes are shown; ` +
      `full output in ${logPath}]\n`,
    truncated: true,
  };
}
