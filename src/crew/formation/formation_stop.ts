/**
 * `mur stop <frm id>` (docs/crews.md: `mur ps` and `mur stop`): ends a formation as one.
 *
 * 1. SIGTERM to the launcher its record names (pid and start time checked first): the launcher
 *    stops every member as it does on SIGTERM (lifelines closed, SIGTERM, SIGKILL after its
 *    grace).
 * 2. SIGKILL to the launcher if it is still running after `--timeout` plus the members' grace;
 *    its members then end by their lifelines.
 * 3. Members still running after that (or when the launcher was already gone) get SIGTERM
 *    themselves. The record and the formation's folder are removed.
 *
 * The report names the launcher's ending and each member's (its trace's session_end).
 */
import { MurError } from "../../errors.ts";
import { pidAlive, processStart } from "../../process_liveness.ts";
import { removeRunningRecord } from "../../home/running_records.ts";
import { type FormationMemberRecord, readFormationRecord } from "./formation_record.ts";
import { launcherAlive, pruneFormation } from "./formation_ps.ts";
import { MEMBER_STOP_GRACE_MS } from "./launch.ts";
import { LIFELINE_GRACE_MS } from "../calls/lifeline.ts";
import { murLine } from "../../invocation.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function gone(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    let alive = false;
    for (const p of pids) if (await pidAlive(p)) alive = true;
    if (!alive) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}

/** How a member ended, from its trace. */
async function ending(m: FormationMemberRecord): Promise<string> {
  if (m.pid !== undefined && (await pidAlive(m.pid))) return "still running";
  if (m.session_dir === undefined) return "no session_end";
  try {
    const lines = (await Deno.readTextFile(`${m.session_dir}/trace.jsonl`)).trim().split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const ev = JSON.parse(lines[i]);
      if (ev.event_type === "session_end") return `session_end ${ev.exit_status}`;
    }
  } catch {
    // unreadable: reported as no session_end
  }
  return "no session_end";
}

/** Stops formation `id` and answers what `mur stop` prints (src/cli/stop.ts writes it). */
export async function stopFormation(id: string, timeoutMs: number): Promise<string> {
  const rec = await readFormationRecord(id);
  if (!rec) {
    throw new MurError(
      "E-RUN-022",
      `no formation ${id} is running on this machine`,
      `\`${murLine("ps")}\` lists the running formations`,
    );
  }
  const members = rec.members.filter((m) => m.pid !== undefined);
  const pids = members.map((m) => m.pid!);
  let launcher: string;
  if (await launcherAlive(rec)) {
    Deno.kill(rec.launcher_pid, "SIGTERM");
    launcher = `pid ${rec.launcher_pid}, SIGTERM`;
    const wait = timeoutMs + MEMBER_STOP_GRACE_MS;
    if (!(await gone([rec.launcher_pid], wait))) {
      // Re-checked: the pid may have been reused since the SIGTERM.
      if ((await processStart(rec.launcher_pid)) === (rec.launcher_start ?? null)) {
        Deno.kill(rec.launcher_pid, "SIGKILL");
      }
      launcher = `pid ${rec.launcher_pid}, SIGKILL after ${wait / 1000}s`;
    }
  } else {
    launcher = `none — pid ${rec.launcher_pid} had already exited, so every lifeline was closed`;
  }
  if (!(await gone(pids, LIFELINE_GRACE_MS + 5_000))) {
    for (const m of members) {
      try {
        Deno.kill(m.pid!, "SIGTERM");
      } catch {
        // gone meanwhile
      }
    }
    if (!(await gone(pids, 5_000))) {
      throw new MurError(
        "E-RUN-024",
        `formation ${id} could not be ended: members still running 5 seconds after SIGTERM: ${
          members.map((m) => `${m.name} (pid ${m.pid})`).join(", ")
        }`,
      );
    }
  }
  // A member that was killed could not remove its own record.
  for (const m of members) await removeRunningRecord(m.session_id!);
  await pruneFormation(id);
  const width = Math.max(...members.map((m) => m.name.length), 1);
  const lines = [`stopped:  ${id}`, `launcher: ${launcher}`];
  for (const m of members) {
    lines.push(`member:   ${m.name.padEnd(width)}  ${m.session_id}  ${await ending(m)}`);
  }
  return lines.join("\n") + "\n";
}
