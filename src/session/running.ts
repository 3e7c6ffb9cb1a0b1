/**
 * Running-session records: how `mur watch`, `mur stop`, `mur cancel` and `mur ps` find a session
 * on this machine. `$MURMUR_HOME/running/<session id>.json` (folder 0700, file 0600), written by
 * the session just before it prints its URL and removed when it ends.
 *
 * A record is only a hint: the process may have died without removing it, or its pid may now
 * belong to another program. Every read verifies it (pid alive, same process start, the agent
 * card naming the session) before anything is sent to or signalled at it.
 */
import { z } from "zod";
import { errorMessage, MurError } from "../errors.ts";
import { CAPSULE_URI } from "../events/frames.ts";

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
   * Opaque start-time token of `pid` (Linux: field 22 of /proc/<pid>/stat). Filled in by
   * writeRunningRecord when it can be read; lets a reader tell a reused pid from the session's.
   */
  process_start?: string;
}

const RecordSchema = z.object({
  session_id: z.string().regex(/^ses_[0-9a-f]{32}$/),
  url: z.string().min(1),
  pid: z.number().int().positive(),
  capsule_name: z.string(),
  capsule_version: z.string(),
  workdir: z.string(),
  session_dir: z.string().optional(),
  started_at: z.string(),
  tokens: z.object({ operator: z.string() }).catchall(z.string()).optional(),
  process_start: z.string().optional(),
});

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

/** Writes (or rewrites) the record through a `.tmp` file and a rename, so readers never see half. */
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
    const path = `${dir}/${entry.name}`;
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch {
      continue; // removed between readDir and read: the session just ended
    }
    let parsed: z.ZodSafeParseResult<z.infer<typeof RecordSchema>>;
    try {
      parsed = RecordSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = { success: false } as typeof parsed;
    }
    if (!parsed.success) {
      await Deno.remove(path).catch(() => {});
      continue;
    }
    out.push(parsed.data as RunningRecord);
  }
  return out.sort((
    a,
    b,
  ) => (a.session_id < b.session_id ? 1 : a.session_id > b.session_id ? -1 : 0));
}

// ---- liveness ------------------------------------------------------------------------------

async function readProcStat(pid: number): Promise<string[] | null> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // The command name (field 2) is in parentheses and may hold spaces: split after its `)`.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest; // rest[0] is field 3 (state)
  } catch {
    return null;
  }
}

const hasProc = (() => {
  try {
    return Deno.statSync("/proc/self/stat").isFile;
  } catch {
    return false;
  }
})();

/** Whether a process holds `pid` (a zombie does not count: it has exited). */
export async function pidAlive(pid: number): Promise<boolean> {
  if (hasProc) {
    const fields = await readProcStat(pid);
    if (!fields) return false;
    return fields[0] !== "Z" && fields[0] !== "X";
  }
  try {
    // node:process.kill with signal 0 probes without signalling.
    const { kill } = await import("node:process");
    kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

/** The start-time token of `pid`, or null where it cannot be read (non-Linux, gone). */
export async function processStart(pid: number): Promise<string | null> {
  if (!hasProc) return null;
  const fields = await readProcStat(pid);
  return fields ? (fields[19] ?? null) : null; // field 22 = starttime
}

type Liveness = { alive: true } | { alive: false; reason: string };

async function liveness(rec: RunningRecord): Promise<Liveness> {
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

// ---- the card probe ------------------------------------------------------------------------

export type CardProbe =
  | { ok: true; sessionId: string }
  | { ok: false; reason: string };

/** `localhost:41873` → `http://localhost:41873` (a url with a scheme is kept, minus a trailing /). */
export function httpBase(url: string): string {
  const base = /^[a-z]+:\/\//i.test(url) ? url : `http://${url}`;
  return base.replace(/\/+$/, "");
}

function sessionIdOfCard(card: unknown): string | null {
  const exts = (card as { capabilities?: { extensions?: unknown } })?.capabilities?.extensions;
  if (!Array.isArray(exts)) return null;
  for (const ext of exts) {
    if (ext && typeof ext === "object" && (ext as { uri?: unknown }).uri === CAPSULE_URI) {
      const id = (ext as { params?: { sessionId?: unknown } }).params?.sessionId;
      return typeof id === "string" ? id : null;
    }
  }
  return null;
}

/**
 * Asks the door which session it answers for: the public card, or on an authenticated door
 * (a token given) `GetExtendedAgentCard`, since the public card there omits the capsule extension.
 */
export async function probeCard(
  url: string,
  operatorToken?: string,
  timeoutMs = 5000,
): Promise<CardProbe> {
  const base = httpBase(url);
  const signal = AbortSignal.timeout(timeoutMs);
  let card: unknown;
  try {
    if (operatorToken) {
      const res = await fetch(`${base}/`, {
        method: "POST",
        signal,
        headers: {
          "content-type": "application/json",
          "a2a-version": "1.0",
          authorization: `Bearer ${operatorToken}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }),
      });
      const body = await res.text();
      if (!res.ok) return { ok: false, reason: `GetExtendedAgentCard answered HTTP ${res.status}` };
      const parsed = JSON.parse(body);
      if (parsed?.error) {
        return {
          ok: false,
          reason: `GetExtendedAgentCard answered ${parsed.error.code} ${parsed.error.message}`,
        };
      }
      card = parsed?.result;
    } else {
      const res = await fetch(`${base}/.well-known/agent-card.json`, { signal });
      const body = await res.text();
      if (!res.ok) {
        return { ok: false, reason: `the agent card request answered HTTP ${res.status}` };
      }
      card = JSON.parse(body);
    }
  } catch (e) {
    if (e instanceof SyntaxError) {
      return { ok: false, reason: `the agent card from ${url} is not JSON` };
    }
    const why = signal.aborted ? `no answer within ${timeoutMs} ms` : errorMessage(e);
    return { ok: false, reason: `failed to connect: ${why}` };
  }
  const id = sessionIdOfCard(card);
  if (!id) return { ok: false, reason: `the agent card from ${url} names no session` };
  return { ok: true, sessionId: id };
}

// ---- resolution ----------------------------------------------------------------------------

const ADDRESS_HINT =
  "name a session as @1 (the newest), a full ses_ id, a unique suffix of at least 4 characters, or use --url HOST:PORT; mur ps lists them";

export type SessionAddress =
  | { kind: "ordinal"; n: number }
  | { kind: "id"; id: string }
  | { kind: "suffix"; suffix: string };

/** Reads a session address, or throws E-RUN-022 naming what is accepted. */
export function parseSessionAddress(address: string): SessionAddress {
  const ord = /^@(\d+)$/.exec(address);
  if (ord && Number(ord[1]) >= 1) return { kind: "ordinal", n: Number(ord[1]) };
  if (/^ses_[0-9a-f]{32}$/i.test(address)) return { kind: "id", id: address.toLowerCase() };
  if (/^[A-Za-z0-9_]{4,}$/.test(address)) return { kind: "suffix", suffix: address.toLowerCase() };
  throw new MurError("E-RUN-022", `'${address}' is not a session address`, ADDRESS_HINT);
}

export interface ResolveOptions {
  home?: string;
  /** Card probe timeout (ms). */
  timeoutMs?: number;
  /**
   * Accept a session whose door does not answer when its process is confirmed by its start
   * time (mur stop can still signal it). Otherwise an unanswered card is E-RUN-023.
   */
  allowUnanswered?: boolean;
}

export interface ResolvedSession {
  record: RunningRecord;
  /** Whether the card answered naming this session; when false, `reason` says why not. */
  answered: boolean;
  reason?: string;
}

/**
 * `@N`, a full `ses_` id or a unique suffix → the verified running record.
 * Errors: E-RUN-022 (nothing running there, ambiguous, malformed), E-RUN-023 (its door did not
 * answer as that session), E-RUN-028 (records unreadable).
 */
export async function resolveSession(
  address: string,
  opts: ResolveOptions = {},
): Promise<ResolvedSession> {
  const addr = parseSessionAddress(address);
  const home = opts.home ?? murmurHome();
  const all = await listRunningRecords(home);
  if (all.length === 0) {
    throw new MurError(
      "E-RUN-022",
      "no capsule is running on this machine",
      `start one with mur run, or use --url HOST:PORT for a door elsewhere (records: ${
        runningDir(home)
      })`,
    );
  }
  let rec: RunningRecord;
  if (addr.kind === "ordinal") {
    const { live } = await liveRunningRecords(home);
    if (live.length === 0) {
      throw new MurError(
        "E-RUN-022",
        "no capsule is running on this machine",
        "start one with mur run, or use --url HOST:PORT for a door elsewhere",
      );
    }
    if (addr.n > live.length) {
      throw new MurError(
        "E-RUN-022",
        `'${address}' names no running capsule: ${live.length} ${
          live.length === 1 ? "is" : "are"
        } running`,
        "mur ps lists them, newest (@1) first",
      );
    }
    rec = live[addr.n - 1];
  } else {
    const matches = addr.kind === "id"
      ? all.filter((r) => r.session_id === addr.id)
      : all.filter((r) => r.session_id.toLowerCase().endsWith(addr.suffix));
    if (matches.length === 0) {
      throw new MurError(
        "E-RUN-022",
        `no running capsule matches '${address}'`,
        "mur ps lists the running sessions",
      );
    }
    if (matches.length > 1) {
      throw new MurError(
        "E-RUN-022",
        `'${address}' is ambiguous: it matches ${matches.map((m) => m.session_id).join(", ")}`,
        "give more characters, or the full ses_ id",
      );
    }
    rec = matches[0];
    const l = await liveness(rec);
    if (!l.alive) {
      await removeRunningRecord(rec.session_id, home);
      throw new MurError(
        "E-RUN-022",
        `${rec.session_id} is not running: ${l.reason}`,
        "its record was removed; mur ps lists the sessions still running",
      );
    }
  }
  const probe = await probeCard(rec.url, rec.tokens?.operator, opts.timeoutMs);
  let reason: string | undefined;
  if (probe.ok && probe.sessionId !== rec.session_id) {
    reason = `the capsule at ${rec.url} answers for session ${probe.sessionId}`;
  } else if (!probe.ok) reason = probe.reason;
  if (reason === undefined) return { record: rec, answered: true };
  const confirmed = rec.process_start !== undefined &&
    (await processStart(rec.pid)) === rec.process_start;
  if (opts.allowUnanswered && confirmed) return { record: rec, answered: false, reason };
  throw new MurError(
    "E-RUN-023",
    `${rec.session_id} is running but its capsule did not answer at ${rec.url}: ${reason}`,
    "the capsule may be busy or starting; try again, or mur stop it",
  );
}

/** Where a running session's trace.jsonl lives. */
export function sessionDirOf(rec: RunningRecord): string {
  return rec.session_dir ?? rec.workdir;
}
