/**
 * What a task published (docs/protocol.md "Files and data"): each is one artifact of the task, as
 * GetTask lists it and the stream's `artifactUpdate` carried it. A file small enough travels inline
 * (a `raw` part); a larger one is a `url` part whose bytes the door serves from the session's copy
 * (`GET /files/<task id>/<artifact id>`, with the GetTask scope), so the file in the workdir can
 * change or go without changing what the task answered.
 */
import type { Artifact } from "../a2a/types.ts";

/**
 * A JSON value published as a `data` part (a tool or hook declared `output: data`), numbered after
 * what the task published before it.
 */
export function dataArtifact(published: number, name: string, value: unknown): PublishedFile {
  return {
    artifact: {
      artifactId: `data-${published + 1}`,
      name,
      parts: [{ data: value, mediaType: "application/json" }],
    },
  };
}

export interface PublishedFile {
  readonly artifact: Artifact;
  /** The session's copy of a `url` file's bytes (absent for inline files and data). */
  readonly copy?: { path: string; mediaType: string; size: number; filename: string };
}
