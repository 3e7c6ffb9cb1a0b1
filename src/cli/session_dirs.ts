/**
 * Finding a finished (or running) session's folder for `mur trace` (and `mur run --resume`):
 * the `ses_*` folders of one workdir, addressed as `@N` (newest first), a full id, a unique
 * suffix of 4+ characters, or a path (a session folder or its trace.jsonl).
 */
import { MurError } from "../errors.ts";
import { parseSessionAddress } from "../session/running.ts";

export interface SessionDir {
  sessionId: string;
  /** The session folder (holds trace.jsonl). */
  dir: string;
}

/** The `ses_*` folders of `root`, newest first; none when root does not exist. */
export async function sessionDirs(root: string): Promise<SessionDir[]> {
  const out: SessionDir[] = [];
  try {
    for await (const e of Deno.readDir(root)) {
      if (e.isDirectory && /^ses_[0-9a-f]{32}$/.test(e.name)) {
        out.push({ sessionId: e.name, dir: `${root}/${e.name}` });
      }
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw new MurError("E-IO-002", `could not read ${root}: ${(e as Error).message}`);
  }
  return out.sort((a, b) => (a.sessionId < b.sessionId ? 1 : -1));
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * Resolves `address` among `candidates` (newest first). A path (one holding `/` or ending in
 * .jsonl) is taken literally. Errors are E-TRC-002.
 */
export async function resolveSessionDir(
  address: string,
  candidates: SessionDir[],
  where: string,
): Promise<{ sessionId: string | null; trace: string }> {
  if (address.includes("/") || address.endsWith(".jsonl") || address === "." || address === "..") {
    const trace = address.endsWith(".jsonl")
      ? address
      : `${address.replace(/\/+$/, "")}/trace.jsonl`;
    if (!(await isFile(trace))) {
      throw new MurError(
        "E-TRC-002",
        `no trace.jsonl at ${trace}`,
        "give a session folder, its trace.jsonl, or a session address",
      );
    }
    return { sessionId: null, trace };
  }
  let addr;
  try {
    addr = parseSessionAddress(address);
  } catch {
    throw new MurError(
      "E-TRC-002",
      `'${address}' is not a session address`,
      "name a session as @1 (the newest), a full ses_ id, a unique suffix of at least 4 characters, or a path to its folder",
    );
  }
  if (candidates.length === 0) {
    throw new MurError(
      "E-TRC-002",
      `no session folders in ${where}`,
      "pass --workdir DIR, the folder that holds the ses_… folders",
    );
  }
  let picked: SessionDir[];
  if (addr.kind === "ordinal") picked = candidates[addr.n - 1] ? [candidates[addr.n - 1]] : [];
  else if (addr.kind === "id") picked = candidates.filter((c) => c.sessionId === addr.id);
  else picked = candidates.filter((c) => c.sessionId.endsWith(addr.suffix));
  if (picked.length === 0) {
    throw new MurError(
      "E-TRC-002",
      `no session in ${where} matches '${address}'`,
      `${candidates.length} session folder(s) there; @1 is the newest`,
    );
  }
  if (picked.length > 1) {
    throw new MurError(
      "E-TRC-002",
      `'${address}' is ambiguous in ${where}: it matches ${
        picked.map((p) => p.sessionId).join(", ")
      }`,
      "give more characters, or the full ses_ id",
    );
  }
  return { sessionId: picked[0].sessionId, trace: `${picked[0].dir}/trace.jsonl` };
}
