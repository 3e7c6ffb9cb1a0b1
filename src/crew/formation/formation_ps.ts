/**
 * Formations in `mur ps` (docs/crews.md: `mur ps` and `mur stop`): after the sessions' table,
 * one block per running formation, its members under it in roster order. A formation whose
 * launcher is gone (killed: it could not remove its record) is pruned with its folder, and named
 * on stderr like a pruned session.
 */
import { pidAlive, processStart } from "../../process_liveness.ts";
import { murmurHome, type RunningRecord } from "../../home/running_records.ts";
import {
  type FormationRecord,
  listFormationRecords,
  removeFormationRecord,
} from "./formation_record.ts";

/** Whether the launcher the record names still runs (same pid, same start). */
export async function launcherAlive(rec: FormationRecord): Promise<boolean> {
  if (!(await pidAlive(rec.launcher_pid))) return false;
  if (rec.launcher_start === undefined) return true;
  const now = await processStart(rec.launcher_pid);
  return now === null || now === rec.launcher_start;
}

/** Removes a formation's record and its folder (crew files) once its launcher is gone. */
export async function pruneFormation(id: string, home = murmurHome()): Promise<void> {
  await removeFormationRecord(id, home);
  await Deno.remove(`${home}/formations/${id}`, { recursive: true }).catch(() => {});
}

/** Running formations; dead ones pruned and returned apart. */
export async function liveFormations(
  home = murmurHome(),
): Promise<{ live: FormationRecord[]; pruned: FormationRecord[] }> {
  const live: FormationRecord[] = [];
  const pruned: FormationRecord[] = [];
  for (const rec of await listFormationRecords(home)) {
    if (await launcherAlive(rec)) live.push(rec);
    else {
      await pruneFormation(rec.formation_id, home);
      pruned.push(rec);
    }
  }
  return { live, pruned };
}

/**
 * The block `mur ps` prints for one formation:
 *
 *   formation frm_…  launcher pid 4242  entry lead
 *     lead      ses_…  running
 *     far       http://10.0.0.5:4000  remote
 *
 * A member is `running` while its session record is live, `ended` once it is gone.
 */
export function formationBlock(rec: FormationRecord, sessions: RunningRecord[]): string[] {
  const width = Math.max(...rec.members.map((m) => m.name.length));
  const lines = [
    `formation ${rec.formation_id}  launcher pid ${rec.launcher_pid}  entry ${rec.entry}`,
  ];
  for (const m of rec.members) {
    if (m.session_id === undefined) {
      lines.push(`  ${m.name.padEnd(width)}  ${m.url}  remote`);
      continue;
    }
    const live = sessions.some((s) => s.session_id === m.session_id);
    lines.push(`  ${m.name.padEnd(width)}  ${m.session_id}  ${live ? "running" : "ended"}`);
  }
  return lines;
}
