/**
 * Running-session records: how `mur watch`, `mur stop`, `mur cancel` and `mur ps` find a session
 * on this machine. `$MURMUR_HOME/running/<session id>.json` (folder 0700, file 0600), written by
 * `mur run` just before it prints its URL and removed when it ends (docs/running.md "Files").
 *
 * A record is only a hint: the process may have died without removing it, or its pid may now
 * belong to another program. Every read verifies it (pid alive, same process start, the agent
 * card naming the session: card_probe.ts) before anything is sent to or signalled at it.
 */
import { errorMessage, MurError } from "../errors.ts";
import { pidAlive, processStart } from "../process_liveness.ts";

export interface RunningRecord {
  session_id: string;
  /** `localhost:<port>` (host:port, no scheme). */
  url: string;
  pid: number;
  capsule_name: string;
  capsule_version: string;
  /** The session's workdir: the tools' working directory. */
  workdir: string;
  /**
   * The session folder, where trace.jsonl lives: `workdir` itself, or `<workdir>/.murmur/<id>`
   * under `--workdir`. Absent in records of older versions, whose trace was in `workdir`.
   */
  session_dir?: string;
  /** RFC 3339 UTC. */
  started_at: string;
  /** Only on a door declaring `network.authentication`: `operator` and one per credential. */
  tokens?: { operator: string; [credential: string]: string };
  /**
   * Only on a public door of a capsule with `approvals:`: the operator's token for answering an
   * approval there, the one thing that door does not take from any caller (src/door/approval_token.ts).
   */
  approval_token?: string;
  /**
   * Opaque start-time token of `pid` (Linux: field 22 of /proc/<pid>/stat). Filled in by
   * writeRunningRecord when it can be read; lets a reader tell a reused pid from the session's.
   */
  process_start?: string;
  /** A formation member: its formation (`frm_…`) and roster name (docs/crews.md). */
  formation_id?: string;
  formation_member?: string;
}

/**
 * A running record as read back, or null when it is not one (written by an older or a broken
 * mur, or half-written). Checked by hand, not with zod: `mur ps`, `watch`, `stop` and `cancel`
 * read these records and nothing else that needs a schema, and importing zod costs them about
 * 30 ms of CPU at start (docs/design.md "One process", CLI). Keys not listed here are dropped.
 */
export function parseRunningRecord(v: unknown): RunningRecord | null {
  if (!isObject(v)) return null;
  const str = (k: string) => typeof v[k] === "string";
  const optStr = (k: string) => v[k] === undefined || typeof v[k] === "string";
  if (
    !(typeof v.session_id === "string" && /^ses_[0-9a-f]{32}$/.test(v.session_id)) ||
    !(typeof v.url === "string" && v.url.length >= 1) ||
    !(typeof v.pid === "number" && Number.isSafeInteger(v.pid) && v.pid > 0) ||
    !str("capsule_name") || !str("capsule_version") || !str("workdir") || !str("started_at") ||
    !optStr("session_dir") || !optStr("process_start") || !optStr("formation_member") ||
    !optStr("approval_token") ||
    !(v.formation_id === undefined ||
      (typeof v.formation_id === "string" && /^frm_[0-9a-f]{32}$/.test(v.formation_id)))
  ) return null;
  const tokens = v.tokens;
  if (
    tokens !== undefined &&
    !(isObject(tokens) && typeof tokens.operator === "string" &&
      Object.values(tokens).every((t) => typeof t === "string"))
  ) return null;
  const out: RunningRecord = {
    session_id: v.session_id,
    url: v.url,
    pid: v.pid,
    capsule_name: v.capsule_name as string,
    capsule_version: v.capsule_version as string,
    workdir: v.workdir as string,
    started_at: v.started_at as string,
  };
  // An optional key present as undefined stays, as zod kept it.
  if (Object.hasOwn(v, "session_dir")) out.session_dir = v.session_dir as string | undefined;
  if (Object.hasOwn(v, "tokens")) {
    out.tokens = tokens === undefined ? undefined : { ...tokens } as RunningRecord["tokens"];
  }
  if (Object.hasOwn(v, "process_start")) out.process_start = v.process_start as string | undefined;
  if (typeof v.approval_token === "string") out.approval_token = v.approval_token;
  if (typeof v.formation_id === "string") out.formation_id = v.formation_id;
  if (typeof v.formation_member === "string") out.formation_member = v.formation_member;
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `$MURMUR_HOME`, else `~/.murmur`. */
export function murmurHome(): string {
  const home = Deno.env.get("MURMUR_HOME");
  if (home) return home;
  const user = Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? ".";
  return `${user}/.murmur`;
}

export function runningDir(home: string = murmurHome()): string {
  return `${home}/running`;
}

function recordPath(dir: string, sessionId: string): string {
  return `${dir}/${sessionId}.json`;
}

/**
 * Writes (or rewrites) the record through a `.tmp` file and a rename, so readers never see half.
 */
export async function writeRunningRecord(
  rec: RunningRecord,
  home: string = murmurHome(),
): Promise<void> {
  const dir = runningDir(home);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await Deno.chmod(dir, 0o700).catch(() => {}); // mkdir's mode is masked by umask; best effort off POSIX
  const full: RunningRecord = { ...rec };
  if (full.process_start === undefined) {
    const start = await processStart(rec.pid);
    if (start !== null) full.process_start = start;
  }
  const path = recordPath(dir, rec.session_id);
  const tmp = `${path}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(full, null, 2) + "\n", { mode: 0o600 });
  await Deno.chmod(tmp, 0o600).catch(() => {});
  await Deno.rename(tmp, path);
}

/** Removes the record; a record already gone is fine (mur stop may have pruned it). */
export async function removeRunningRecord(
  sessionId: string,
  home: string = murmurHome(),
): Promise<void> {
  try {
    await Deno.remove(recordPath(runningDir(home), sessionId));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** removeRunningRecord for a process about to exit (a second SIGTERM): no await left to run. */
export function removeRunningRecordSync(sessionId: string, home: string = murmurHome()): void {
  try {
    Deno.removeSync(recordPath(runningDir(home), sessionId));
  } catch {
    // gone already, or never written (W-SEC-023 said so)
  }
}

/**
 * Every readable record, newest first (session ids are UUIDv7, so id order is creation order).
 * An unparseable record is deleted: nothing can ever use it. No liveness check here.
 */
export async function listRunningRecords(home: string = murmurHome()): Promise<RunningRecord[]> {
  const dir = runningDir(home);
  const out: RunningRecord[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw new MurError(
      "E-RUN-028",
      `the running-capsule records could not be read: ${dir}: ${errorMessage(e)}`,
      `check the permissions of ${dir} (or set MURMUR_HOME)`,
    );
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    // A formation's record (src/crew/formation/formation_record.ts) lives here too; it is not a session's.
    if (/^frm_[0-9a-f]{32}\.json$/.test(entry.name)) continue;
    const path = `${dir}/${entry.name}`;
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch {
      continue; // removed between readDir and read: the session just ended
    }
    let record: RunningRecord | null = null;
    try {
      record = parseRunningRecord(JSON.parse(text));
    } catch {
      // not JSON: the same as not a record
    }
    if (!record) {
      await Deno.remove(path).catch(() => {});
      continue;
    }
    out.push(record);
  }
  return out.sort((
    a,
    b,
  ) => (a.session_id < b.session_id ? 1 : a.session_id > b.session_id ? -1 : 0));
}

export type Liveness = { alive: true } | { alive: false; reason: string };

export async function liveness(rec: RunningRecord): Promise<Liveness> {
  if (!(await pidAlive(rec.pid))) {
    return { alive: false, reason: `no process holds pid ${rec.pid}` };
  }
  if (rec.process_start !== undefined) {
    const now = await processStart(rec.pid);
    if (now !== null && now !== rec.process_start) {
      return {
        alive: false,
        reason: `pid ${rec.pid} is held by a process that started at another time`,
      };
    }
  }
  return { alive: true };
}

export interface PrunedRecord {
  record: RunningRecord;
  reason: string;
}

/**
 * Records whose process is alive, newest first; the others are deleted and returned as pruned.
 * Ordinals (`@N`) count these live records.
 */
export async function liveRunningRecords(
  home: string = murmurHome(),
): Promise<{ live: RunningRecord[]; pruned: PrunedRecord[] }> {
  const live: RunningRecord[] = [];
  const pruned: PrunedRecord[] = [];
  for (const rec of await listRunningRecords(home)) {
    const l = await liveness(rec);
    if (l.alive) live.push(rec);
    else {
      await removeRunningRecord(rec.session_id, home);
      pruned.push({ record: rec, reason: l.reason });
    }
  }
  return { live, pruned };
}

/** Where a running session's trace.jsonl lives. */
export function sessionDirOf(rec: RunningRecord): string {
  return rec.session_dir ?? rec.workdir;
}
