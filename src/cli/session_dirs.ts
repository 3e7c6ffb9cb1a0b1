/**
 * Finding a finished (or running) session's folder for `mur trace` (and `mur run --resume`):
 * the sessions of one folder, addressed as `@N` (newest first), a full id, a unique suffix of 4+
 * characters, or a path (a session folder or its trace.jsonl).
 *
 * A folder's sessions are its `ses_*` folders (`<manifest dir>/workdir`, the default layout), the
 * `ses_*` folders of its `.murmur/` (what `mur run --workdir DIR` leaves, docs/running.md "Files"), and the
 * sessions of a trace.jsonl in the folder itself (what an older mur left under `--workdir`, every
 * session appended to one file; the reader keeps the chosen session's lines).
 */
import { errorMessage, MurError } from "../errors.ts";
import { parseSessionAddress } from "./session_address.ts";

export interface SessionDir {
  sessionId: string;
  /** The session folder (holds trace.jsonl, or the older shared one). */
  dir: string;
  /** The trace file, when it is not `<dir>/trace.jsonl`. */
  trace?: string;
}

const SESSION_ID = /^ses_[0-9a-f]{32}$/;

async function sesFolders(root: string): Promise<SessionDir[]> {
  const out: SessionDir[] = [];
  try {
    for await (const e of Deno.readDir(root)) {
      if (e.isDirectory && SESSION_ID.test(e.name)) {
        out.push({ sessionId: e.name, dir: `${root}/${e.name}` });
      }
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    if (e instanceof Deno.errors.NotADirectory) {
      throw new MurError(
        "E-IO-005",
        `${root} is a file, not a folder of sessions`,
        "pass --workdir DIR, the folder that holds the ses_… folders (or the workdir given to mur run)",
      );
    }
    throw new MurError("E-IO-002", `could not read ${root}: ${errorMessage(e)}`);
  }
  return out;
}

/** The sessions of a trace.jsonl an older mur appended several sessions to. */
async function sharedTrace(root: string): Promise<SessionDir[]> {
  const trace = `${root}/trace.jsonl`;
  let text: string;
  try {
    text = await Deno.readTextFile(trace);
  } catch {
    return [];
  }
  const ids = new Set<string>();
  for (const line of text.split("\n")) {
    if (!line.includes('"session_start"')) continue;
    try {
      const ev = JSON.parse(line);
      if (ev.event_type === "session_start" && SESSION_ID.test(ev.session_id)) {
        ids.add(ev.session_id);
      }
    } catch { /* a damaged line: the reader reports it */ }
  }
  return [...ids].map((sessionId) => ({ sessionId, dir: root, trace }));
}

/** Every session in `root` (see above), newest first; none when root does not exist. */
export async function sessionDirs(root: string): Promise<SessionDir[]> {
  const all = [
    ...await sesFolders(root),
    ...await sesFolders(`${root}/.murmur`),
    ...await sharedTrace(root),
  ];
  const seen = new Set<string>();
  return all
    .sort((a, b) => (a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0))
    .filter((d) => !seen.has(d.sessionId) && seen.add(d.sessionId) !== undefined);
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
    const folder = address.replace(/\/+$/, "");
    const trace = address.endsWith(".jsonl") ? address : `${folder}/trace.jsonl`;
    if (await isFile(trace)) return { sessionId: null, trace };
    // A workdir given to `mur run --workdir`: its newest session.
    const inside = address.endsWith(".jsonl") ? [] : await sessionDirs(folder);
    if (inside.length > 0) return pick(inside[0]);
    throw new MurError(
      "E-TRC-002",
      `no trace.jsonl at ${trace}`,
      "give a session folder, its trace.jsonl, a workdir that holds sessions, or a session address",
    );
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
      "pass --workdir DIR, the folder that holds the ses_… folders (or the workdir given to mur run)",
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
      `${candidates.length} session(s) there; @1 is the newest`,
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
  return pick(picked[0]);
}

function pick(d: SessionDir): { sessionId: string; trace: string } {
  return { sessionId: d.sessionId, trace: d.trace ?? `${d.dir}/trace.jsonl` };
}
