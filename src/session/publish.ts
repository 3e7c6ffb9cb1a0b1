/**
 * The `publish` builtin (docs/protocol.md "Files and data"; why a tool, not a watched folder, is in
 * docs/design.md): the model names a file of the workdir and it becomes one artifact of the task,
 * with its `filename` and `mediaType`. Up to `outputs.inline_max_bytes` the bytes travel inline (a
 * `raw` part); a larger file is copied into the session folder and travels as a `url` part the
 * door serves (`GET /files/<task id>/<artifact id>`, scope GetTask), up to `outputs.max_bytes`.
 *
 * The path is the model's, so it is checked before anything is read: relative, no `..`, no
 * symbolic link on the way (a link could point anywhere, and where it points can change between
 * the check and the read), a regular file, under the size limit. A refusal is a coded tool error
 * (E-PUB-00N) the model reads, and nothing is published.
 */
import type { Artifact } from "../a2a/types.ts";
import type { OutputsConfig } from "../manifest/types.ts";
import type { Tool, ToolContext, ToolResult } from "../tools/types.ts";
import type { Registry } from "./registry.ts";

export interface PublishDeps {
  registry: Registry;
  outputs: OutputsConfig;
  /** The session folder: large files are copied under `published/` there. */
  sessionDir: string;
  /** The door's base URL as clients reach it (`http://localhost:<port>`, or cluster.advertise). */
  doorBase(): string;
}

/** Media types by file extension; anything else is application/octet-stream. */
const MEDIA_TYPES: Record<string, string> = {
  md: "text/markdown",
  txt: "text/plain",
  csv: "text/csv",
  html: "text/html",
  json: "application/json",
  patch: "text/x-diff",
  diff: "text/x-diff",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  zip: "application/zip",
};

export function mediaTypeOf(filename: string): string {
  const dot = filename.lastIndexOf(".");
  return (dot > 0 && MEDIA_TYPES[filename.slice(dot + 1).toLowerCase()]) ||
    "application/octet-stream";
}

/** Base64 of bytes, in chunks (String.fromCharCode takes a bounded number of arguments). */
function encodeBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** A refusal the model reads: `error[E-PUB-00N]: …`. */
class Refused extends Error {}

function refuse(code: string, message: string): never {
  throw new Refused(`error[${code}]: ${message}`);
}

/**
 * The workdir-relative path's components, or a refusal: absolute paths and `..` are outside the
 * workdir by construction.
 */
function components(path: string): string[] {
  if (path.startsWith("/") || path.includes("\0")) {
    refuse(
      "E-PUB-001",
      `${
        JSON.stringify(path)
      } is not a path inside the workdir; give a relative path such as out/report.md`,
    );
  }
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) {
    refuse("E-PUB-001", `${JSON.stringify(path)} leaves the workdir ('..'); give a path inside it`);
  }
  if (parts.length === 0) refuse("E-PUB-003", "publish needs the path of a file in the workdir");
  return parts;
}

/** lstat of every component from the workdir down: no link anywhere, a regular file at the end. */
async function checkedFile(
  workdir: string,
  parts: string[],
): Promise<{ path: string; size: number }> {
  let at = workdir;
  for (let i = 0; i < parts.length; i++) {
    at = `${at}/${parts[i]}`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(at);
    } catch {
      refuse("E-PUB-003", `${parts.join("/")} is not in the workdir`);
    }
    if (info.isSymlink) {
      refuse(
        "E-PUB-002",
        `${
          parts.slice(0, i + 1).join("/")
        } is a symbolic link; publish takes only files that are in the workdir itself`,
      );
    }
    const last = i === parts.length - 1;
    if (!last && !info.isDirectory) {
      refuse("E-PUB-003", `${parts.slice(0, i + 1).join("/")} is not a folder`);
    }
    if (last && !info.isFile) refuse("E-PUB-003", `${parts.join("/")} is not a regular file`);
    if (last) return { path: at, size: info.size };
  }
  throw new Error("unreachable");
}

// Why long: the tool's declaration (description, input schema) and its call, one sequence: check
// the path, read the file, record the artifact, answer.
export function publishTool(d: PublishDeps): Tool {
  return {
    name: "publish",
    description:
      "Hand a file from the working directory back to the person who gave you this task, as a downloadable result (a report, a patch, a chart). Give its path relative to the working directory.",
    inputSchema: {
      type: "object",
      properties: {
        path: {
          type: "string",
          description: "The file's path, relative to the working directory.",
        },
        description: { type: "string", description: "One line saying what the file is." },
      },
      required: ["path"],
    },
    async call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
      const started = Date.now();
      const base = { fenceSource: null, exitCode: null, truncated: false, images: [] };
      const task = d.registry.get(ctx.taskId);
      try {
        if (!task) refuse("E-PUB-003", "publish needs a running task");
        const path = typeof input.path === "string" ? input.path : "";
        const parts = components(path);
        const file = await checkedFile(ctx.workdir, parts);
        if (file.size > d.outputs.maxBytes) {
          refuse(
            "E-PUB-004",
            `${
              parts.join("/")
            } is ${file.size} bytes; outputs.max_bytes allows ${d.outputs.maxBytes}`,
          );
        }
        const filename = parts[parts.length - 1];
        const mediaType = mediaTypeOf(filename);
        const artifactId = `file-${task.published.length + 1}`;
        const description = typeof input.description === "string" && input.description !== ""
          ? { description: input.description }
          : {};
        let artifact: Artifact;
        let copy;
        if (file.size <= d.outputs.inlineMaxBytes) {
          const bytes = await Deno.readFile(file.path);
          artifact = {
            artifactId,
            name: filename,
            ...description,
            parts: [{ raw: encodeBase64(bytes), mediaType, filename }],
          };
        } else {
          // The session's own copy: what the task answered stays what it was.
          const dir = `${d.sessionDir}/published/${task.id}`;
          await Deno.mkdir(dir, { recursive: true });
          const to = `${dir}/${artifactId}`;
          await Deno.copyFile(file.path, to);
          const size = (await Deno.stat(to)).size;
          copy = { path: to, mediaType, size, filename };
          artifact = {
            artifactId,
            name: filename,
            ...description,
            parts: [{
              url: `${d.doorBase()}/files/${encodeURIComponent(task.id)}/${artifactId}`,
              mediaType,
              filename,
            }],
          };
        }
        d.registry.publish(task, { artifact, ...(copy ? { copy } : {}) });
        return {
          ...base,
          content: `published ${
            parts.join("/")
          } (${file.size} bytes, ${mediaType}) as artifact ${artifactId}`,
          isError: false,
          durationMs: Date.now() - started,
        };
      } catch (e) {
        const content = e instanceof Refused
          ? e.message
          : `publish failed: ${e instanceof Error ? e.message : String(e)}`;
        return { ...base, content, isError: true, durationMs: Date.now() - started };
      }
    },
  };
}
