/**
 * Who this capsule may call, and where (docs/crews.md). The formation launcher (`mur run
 * --roster`) sets two variables on a caller:
 *
 *   MURMUR_CREW_CALLEES  comma-separated member names this capsule may call (absent: none, and
 *                        the crew tools are not offered)
 *   MURMUR_CREW_FILE     a JSON file {"formation_id", "members": [{"name", "url", "token"}]}
 *
 * The file may be written after the caller starts (the launcher learns its members' ports as they
 * come up), so it is read at call time and waited for, a bounded time: a member it never names is
 * a failed call, never a hang.
 */
import type { A2aCallRecord } from "../../a2a/call_record.ts";

export interface CrewMember {
  name: string;
  /** The member's door, e.g. `http://127.0.0.1:41873`. */
  url: string;
  /** The bearer token this caller presents at that door. */
  token: string;
  /** Told of every request made to this door (an `a2a.client` span each, src/otel/). */
  observe?: (r: A2aCallRecord) => void;
}

/** The callees named in `MURMUR_CREW_CALLEES`, in its order; [] when unset or empty. */
export function crewCallees(env: (name: string) => string | undefined): string[] {
  const raw = env("MURMUR_CREW_CALLEES") ?? "";
  return [...new Set(raw.split(",").map((s) => s.trim()).filter((s) => s !== ""))];
}

/** How long a call waits for the crew file to name its member. */
export const ADDRESS_WAIT_MS = 10_000;
const POLL_MS = 100;

/**
 * The member's entry in the crew file, waiting up to `waitMs` for the file to hold it. A string
 * is why it could not be had (the call's `failed` answer).
 */
export async function memberAddress(
  file: string | undefined,
  name: string,
  signal: AbortSignal,
  waitMs = ADDRESS_WAIT_MS,
): Promise<CrewMember | string> {
  if (!file) return `'${name}' could not be called: MURMUR_CREW_FILE is not set`;
  const until = Date.now() + waitMs;
  let why = "";
  for (;;) {
    const found = readMember(file, name);
    if (typeof found !== "string") return found;
    why = found;
    if (signal.aborted || Date.now() >= until) break;
    // The launcher writes the file once its members answer; a short poll of a local file is
    // the bounded wait the interface asks for (no event tells us the file changed).
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return `'${name}' could not be called: its door's address did not arrive within ${
    waitMs / 1000
  }s (${why})`;
}

function readMember(file: string, name: string): CrewMember | string {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? "no crew file yet" : `crew file unreadable`;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // A file being written can be read half-way: the next read sees it whole.
    return "crew file not valid JSON";
  }
  const members = (doc as { members?: unknown })?.members;
  if (!Array.isArray(members)) return "crew file has no members list";
  for (const m of members) {
    if (m && typeof m === "object" && (m as CrewMember).name === name) {
      const { url, token } = m as CrewMember;
      if (typeof url !== "string" || url === "") return `crew file names '${name}' without a url`;
      return { name, url: url.replace(/\/+$/, ""), token: typeof token === "string" ? token : "" };
    }
  }
  return `crew file does not name '${name}'`;
}

/** The variables the launcher sets on a caller (src/crew/formation/launch.ts). */
export const CREW_CALLEES_ENV = "MURMUR_CREW_CALLEES";
export const CREW_FILE_ENV = "MURMUR_CREW_FILE";

/** The crew file as the launcher writes it: exactly the caller's callees. */
export interface CrewFile {
  formation_id: string;
  members: CrewMember[];
}

/** Writes the file through a temp file and a rename, so a reader never sees half of it. */
export async function writeCrewFile(path: string, crew: CrewFile): Promise<void> {
  const tmp = `${path}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(crew) + "\n", { mode: 0o600 });
  await Deno.chmod(tmp, 0o600).catch(() => {});
  await Deno.rename(tmp, path);
}
