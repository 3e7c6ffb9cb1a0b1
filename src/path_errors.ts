/**
 * File-system errors a user causes with a flag or a manifest value (`--workdir`, `--task`,
 * `inference.script`, a tool's program, …), turned into one coded diagnostic that names the value
 * and says what to do (docs/diagnostics.md "Files and connections"), instead of a stack trace.
 */
import { MurError } from "./errors.ts";

/** Linux error numbers Deno names only in its message, `(os error 27)`. */
const OS_ERRORS: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  13: "EACCES",
  17: "EEXIST",
  20: "ENOTDIR",
  21: "EISDIR",
  27: "EFBIG",
  28: "ENOSPC",
  30: "EROFS",
  122: "EDQUOT",
};

/** The OS error code of a file-system error (`ENOTDIR`, `ENOSPC`, …): Deno's `code`, else its message's number. */
function errno(e: Error): string | undefined {
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && code !== "") return code;
  const n = /\(os error (\d+)\)/.exec(e.message);
  return n ? OS_ERRORS[Number(n[1])] : undefined;
}

export interface PathProblem {
  /** What names the path, as the user wrote it: `--workdir`, `inference.script`. */
  source: string;
  path: string;
  /** What mur was doing: `create the session folder`, `read the script`. */
  doing: string;
  /** The kind of thing the path must name, for the wrong-kind case. */
  expect?: "folder" | "file";
}

/**
 * The diagnostic for `e`: E-IO-001 not there, E-IO-002 permission denied, E-IO-005 the wrong kind
 * of thing (a file where a folder is needed, or the reverse), E-IO-006 the disk or quota is full
 * or the file system is read-only, else E-IO-003. Not a file-system error: returned unchanged.
 */
export function pathError(e: unknown, p: PathProblem): unknown {
  if (e instanceof MurError || !(e instanceof Error)) return e;
  const code = errno(e);
  const head = `${p.source} ${p.path}: could not ${p.doing}`;
  switch (code) {
    case "ENOENT":
      return new MurError(
        "E-IO-001",
        `${head}: no such file or folder (${e.message})`,
        `check ${p.source}: relative paths start from the current folder or the manifest's`,
      );
    case "EACCES":
    case "EPERM":
      return new MurError(
        "E-IO-002",
        `${head}: permission denied (${e.message})`,
        `give ${p.source} a path this user may ${p.doing.startsWith("read") ? "read" : "write"}`,
      );
    case "ENOTDIR":
    case "EISDIR":
    case "EEXIST":
      return new MurError(
        "E-IO-005",
        `${head}: ${
          p.expect === "folder"
            ? "a file is in the way where a folder is needed"
            : p.expect === "file"
            ? "it is a folder, not a file"
            : "a path names the wrong kind of thing"
        } (${e.message})`,
        p.expect === "folder"
          ? `give ${p.source} a folder, or a path where one can be created`
          : `give ${p.source} a file`,
      );
    case "ENOSPC":
    case "EDQUOT":
    case "EROFS":
    case "EFBIG":
      return new MurError(
        "E-IO-006",
        `${head}: the file system refused the write (${e.message})`,
        "free some space, or give a path on a writable file system with room",
      );
  }
  return new MurError("E-IO-003", `${head}: ${e.message}`);
}
