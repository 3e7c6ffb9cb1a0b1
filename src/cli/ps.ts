/**
 * `mur ps`: one row per running session on this machine, newest first, each with the `@N` it
 * answers to: `@N SESSION CAPSULE STATUS UPTIME URL PAGE` (PAGE: the live page the door serves).
 * STATUS is what the session is doing when its door answered naming it (`working`, `idle`,
 * `needs input`: ps_activity.ts; `running` if it would not say), `unreachable` otherwise.
 * Records of processes that are gone are pruned and reported on stderr.
 */
import { liveRunningRecords } from "../home/running_records.ts";
import { usageText } from "../invocation.ts";
import { probeCard } from "../watch/card_probe.ts";
import { pageUrl } from "../ui/routes.ts";
import { parse, usageError } from "./args.ts";
import { sessionActivity } from "./ps_activity.ts";
import { writeErr, writeOut } from "./output.ts";
import { formationBlock, liveFormations } from "../crew/formation/formation_ps.ts";

export const USAGE = `usage: mur ps

Lists the sessions running on this machine, newest (@1) first: @N SESSION CAPSULE STATUS UPTIME
URL PAGE. @N is the address mur watch, stop and cancel take for the row. STATUS is working (a task
runs or is queued), needs input (a task waits for an answer) or idle when the door answered for the
session, unreachable otherwise. PAGE is the session's live page, to open in a browser. Each running formation (mur run --roster) follows as a
block naming its members. Records of processes that are gone are removed and named on stderr.

  -h, --help   this text`;

export const FLAGS = { help: { type: "boolean", short: "h" } } as const;

const COLUMNS: [string, number][] = [
  ["@N", 4],
  ["SESSION", 36],
  ["CAPSULE", 24],
  ["STATUS", 12],
  ["UPTIME", 9],
  ["URL", 21],
  ["PAGE", 0],
];

/** `HH:MM:SS`, with an `Nd ` prefix past a day. */
export function formatUptime(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(s / 86400);
  const hh = String(Math.floor((s % 86400) / 3600)).padStart(2, "0");
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, "0");
  const ss = String(s % 60).padStart(2, "0");
  return `${days > 0 ? `${days}d ` : ""}${hh}:${mm}:${ss}`;
}

function row(cells: string[]): string {
  return cells.map((c, i) => (COLUMNS[i][1] ? c.padEnd(COLUMNS[i][1]) : c)).join("  ").trimEnd();
}

export async function psCommand(args: string[], now: () => number = Date.now): Promise<number> {
  const parsed = parse("ps", args, FLAGS, USAGE);
  if (parsed.values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  if (parsed.positionals.length > 0) throw usageError("ps", "takes no arguments", USAGE);
  const { live, pruned } = await liveRunningRecords();
  for (const p of pruned) await writeErr(`pruned: ${p.record.session_id} — ${p.reason}\n`);
  const formations = await liveFormations();
  for (const f of formations.pruned) {
    await writeErr(`pruned: ${f.formation_id} — its launcher (pid ${f.launcher_pid}) is gone\n`);
  }
  const blocks = formations.live.flatMap((f) => ["", ...formationBlock(f, live)]);
  if (live.length === 0) {
    await writeOut(["no running capsules", ...blocks].join("\n") + "\n");
    return 0;
  }
  const probes = await Promise.all(live.map((r) => probeCard(r.url, r.tokens?.operator, 2000)));
  // What each answering session is doing (ps_activity.ts); `running` when its door does not say.
  const doing = await Promise.all(
    live.map((r, i) =>
      probes[i].ok && probes[i].sessionId === r.session_id
        ? sessionActivity(r.url, r.tokens?.operator).then((a) => a ?? "running")
        : "unreachable"
    ),
  );
  const lines = [row(COLUMNS.map(([name]) => name))];
  live.forEach((r, i) => {
    const started = Date.parse(r.started_at);
    lines.push(row([
      `@${i + 1}`,
      r.session_id,
      `${r.capsule_name}@${r.capsule_version}`,
      doing[i],
      Number.isNaN(started) ? "?" : formatUptime(now() - started),
      r.url,
      pageUrl(r.url),
    ]));
  });
  await writeOut([...lines, ...blocks].join("\n") + "\n");
  return 0;
}
