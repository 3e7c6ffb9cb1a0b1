/**
 * `GET /files/<task id>/<artifact id>` (docs/protocol.md "Files and data"): the bytes of a file a
 * task published as a `url` part, from the session's copy (src/session/publish.ts), streamed with
 * its media type, length and filename. The same scope as GetTask, and the same visibility (a
 * formation member's token reaches only its own tasks): a caller that may not read the task may not
 * read its files. Anything else is 404, 405 with `allow: GET`, or the gate's 401 / 403.
 */
import type { Grant } from "./auth.ts";
import type { Gate } from "./gate.ts";
import { bare } from "./responses.ts";
import type { TaskRecord } from "../session/task_record.ts";

export async function publishedFile(
  req: Request,
  url: URL,
  grant: Grant | null,
  gate: Gate,
  taskOf: (id: string) => TaskRecord | undefined,
): Promise<Response> {
  if (req.method !== "GET") return bare(405, { allow: "GET" });
  const refused = gate.require(grant, "GetTask");
  if (refused) return refused;
  const m = /^\/files\/([^/]+)\/(file-\d+)$/.exec(url.pathname);
  if (!m || url.search) return bare(404);
  let id: string;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    return bare(404);
  }
  const copy = taskOf(id)?.published.find((f) => f.artifact.artifactId === m[2])?.copy;
  if (!copy) return bare(404);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(copy.path, { read: true });
  } catch {
    return bare(404);
  }
  return new Response(file.readable, {
    headers: {
      "content-type": copy.mediaType,
      "content-length": String(copy.size),
      "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(copy.filename)}`,
    },
  });
}
