/**
 * The formation record (docs/crews.md: `mur ps` and `mur stop`): `$MURMUR_HOME/running/<frm
 * id>.json` (0600, beside the members' own session records), written by `mur run --roster` once
 * every member is ready and removed when the formation has ended. `mur ps` groups members under
 * it; `mur stop <frm id>` signals the launcher it names. Like a session record it is only a
 * hint: the launcher's pid and start time are checked before anything is signalled.
 */
import { processStart } from "../../process_liveness.ts";
import { murmurHome, runningDir } from "../../home/running_records.ts";
import { FORMATION_ID } from "./membership.ts";

export interface FormationMemberRecord {
  name: string;
  entry: boolean;
  /** `http://127.0.0.1:<port>`, or the URL a member on another machine was named by. */
  url: string;
  /** Absent for a member on another machine. */
  pid?: number;
  session_id?: string;
  /** Where its trace.jsonl is, so `mur stop` can say how it ended once its record is gone. */
  session_dir?: string;
}

export interface FormationRecord {
  formation_id: string;
  launcher_pid: number;
  launcher_start?: string;
  roster: string;
  entry: string;
  started_at: string;
  members: FormationMemberRecord[];
}

export function formationRecordPath(id: string, home = murmurHome()): string {
  return `${runningDir(home)}/${id}.json`;
}

/** Whether a file in the running folder is a formation record (not a session's). */
export function isFormationRecordName(name: string): boolean {
  return FORMATION_ID.test(name.replace(/\.json$/, ""));
}

export async function writeFormationRecord(
  rec: FormationRecord,
  home = murmurHome(),
): Promise<void> {
  const dir = runningDir(home);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const full = { ...rec };
  full.launcher_start ??= (await processStart(rec.launcher_pid)) ?? undefined;
  const path = formationRecordPath(rec.formation_id, home);
  await Deno.writeTextFile(`${path}.tmp`, JSON.stringify(full, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(`${path}.tmp`, path);
}

export async function removeFormationRecord(id: string, home = murmurHome()): Promise<void> {
  await Deno.remove(formationRecordPath(id, home)).catch(() => {});
}

/** The record of formation `id`, or null when there is none (or it is not one). */
export async function readFormationRecord(
  id: string,
  home = murmurHome(),
): Promise<FormationRecord | null> {
  try {
    const v = JSON.parse(await Deno.readTextFile(formationRecordPath(id, home)));
    return parseFormationRecord(v);
  } catch {
    return null;
  }
}

/** Every formation record in the running folder, newest first. */
export async function listFormationRecords(home = murmurHome()): Promise<FormationRecord[]> {
  const out: FormationRecord[] = [];
  try {
    for await (const e of Deno.readDir(runningDir(home))) {
      if (!e.isFile || !e.name.endsWith(".json") || !isFormationRecordName(e.name)) continue;
      const rec = await readFormationRecord(e.name.slice(0, -5), home);
      if (rec) out.push(rec);
    }
  } catch {
    return [];
  }
  return out.sort((a, b) => (a.formation_id < b.formation_id ? 1 : -1));
}

function parseFormationRecord(v: unknown): FormationRecord | null {
  const r = v as FormationRecord;
  if (
    typeof r?.formation_id !== "string" || !FORMATION_ID.test(r.formation_id) ||
    typeof r.launcher_pid !== "number" || typeof r.entry !== "string" ||
    !Array.isArray(r.members) ||
    !r.members.every((m) => typeof m?.name === "string" && typeof m.url === "string")
  ) return null;
  return r;
}
