/**
 * `mur stop SESSION [--timeout SECONDS]`: end a running session.
 *
 * 1. murmur.StopSession through the door: every live task is canceled, and the door says what
 *    keeps running. Then up to 5 s for the trace to record each canceled task's ending.
 * 2. SIGTERM to the recorded pid (the session tears down cleanly and removes its record).
 * 3. SIGKILL when it is still alive after --timeout (default 10; 0 = at once), then up to 5 s
 *    for it to go. The record is removed once the process is gone.
 *
 * No --url: signals need the local pid, which only the record holds.
 */
import { murLine, usageText } from "../invocation.ts";
import { errorMessage, MurError } from "../errors.ts";
import { pidAlive } from "../process_liveness.ts";
import { removeRunningRecord, type RunningRecord, sessionDirOf } from "../home/running_records.ts";
import { resolveSession } from "./session_address.ts";
import { badValue, parse, usageError } from "./args.ts";
import { callDoor } from "./door_call.ts";
import { writeOut } from "./output.ts";
import { residueLine } from "./residue.ts";
import { lazyImport } from "../lazy.ts";

export const USAGE = `usage: mur stop SESSION|FORMATION [--timeout SECONDS]

Ends a running session: murmur.StopSession (every task canceled), then SIGTERM, then SIGKILL.
Prints what was canceled and what still runs. A formation (a full frm_ id, from mur run --roster)
is stopped as one: SIGTERM to its launcher, which stops every member.

  SESSION            @N (N-th newest), a full ses_ id, or a unique suffix of 4+ characters
  FORMATION          a full frm_ id
  --timeout SECONDS  how long the session has after SIGTERM before SIGKILL (default 10; 0 = at once)
  -h, --help         this text`;

export const FLAGS = {
  timeout: { type: "string" },
  url: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `pid` is gone or `ms` have passed; true when it is gone. */
async function waitExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (true) {
    if (!(await pidAlive(pid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(50, Math.max(1, deadline - Date.now())));
  }
}

/** Task ids among `ids` whose task_end the trace does not (yet) hold, after waiting up to `ms`. */
async function unendedTasks(sessionDir: string, ids: string[], ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  let pending = [...ids];
  while (pending.length > 0) {
    let text = "";
    try {
      text = await Deno.readTextFile(`${sessionDir}/trace.jsonl`);
    } catch { /* not written yet, or not there: keep waiting until the deadline */ }
    // A task's ending is its task_end; a task canceled while queued never started, and its
    // task_canceled line is all the trace records of it (src/trace_events.ts).
    const ended = new Set<string>();
    const started = new Set<string>();
    const canceledLines = new Set<string>();
    for (const line of text.split("\n")) {
      if (!/"task_(end|start|canceled|rejected)"/.test(line)) continue;
      try {
        const ev = JSON.parse(line);
        if (typeof ev.task_id !== "string") continue;
        if (ev.event_type === "task_end" || ev.event_type === "task_rejected") {
          ended.add(ev.task_id);
        } else if (ev.event_type === "task_start") started.add(ev.task_id);
        else if (ev.event_type === "task_canceled") canceledLines.add(ev.task_id);
      } catch { /* a line being written */ }
    }
    for (const id of canceledLines) if (!started.has(id)) ended.add(id);
    pending = pending.filter((id) => !ended.has(id));
    if (pending.length === 0 || Date.now() >= deadline) break;
    await sleep(100);
  }
  return pending;
}

function signalError(rec: RunningRecord, e: unknown): MurError {
  return new MurError(
    "E-RUN-024",
    `${rec.session_id} could not be ended: SIGTERM to pid ${rec.pid} was refused: ${
      errorMessage(e)
    }`,
    "is the session another user's? its tasks were already canceled through the door",
  );
}

// Why long: mur stop's steps in the order they are printed (resolve, ask the door, signal, wait,
// report); each is short and reads the previous one's answer.
export async function stopCommand(args: string[]): Promise<number> {
  const parsed = parse("stop", args, FLAGS, USAGE);
  if (parsed.values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  if (parsed.values.url !== undefined) {
    throw usageError(
      "stop",
      "takes no --url: it signals the session's process, which only a session address on this machine names",
      USAGE,
    );
  }
  if (parsed.positionals.length !== 1) throw usageError("stop", "give one SESSION", USAGE);
  const t = parsed.values.timeout;
  if (t !== undefined && !/^\d+(\.\d+)?$/.test(t)) {
    throw badValue("stop", "--timeout", t, "a number of seconds", USAGE);
  }
  const timeoutMs = Number(parsed.values.timeout ?? "10") * 1000;
  const target = parsed.positionals[0];
  if (target.startsWith("frm_")) {
    // A formation (docs/crews.md): stopped as one, through its launcher.
    if (!/^frm_[0-9a-f]{32}$/.test(target)) {
      throw new MurError(
        "E-RUN-022",
        `'${target}' is not a formation id: frm_ and 32 lowercase hex digits`,
        `\`${murLine("ps")}\` lists the running formations with their full ids`,
      );
    }
    const { stopFormation } = await lazyImport<
      typeof import("../crew/formation/formation_stop.ts")
    >(
      "crew/formation/formation_stop.ts",
    );
    await writeOut(await stopFormation(target, timeoutMs));
    return 0;
  }

  const { record: rec, answered, reason } = await resolveSession(parsed.positionals[0], {
    allowUnanswered: true,
  });

  // 1. Ask the door to cancel everything and say what keeps running.
  const lines: string[] = [];
  let canceled: string[] = [];
  if (answered) {
    try {
      const answer = await callDoor(rec.url, "murmur.StopSession", {}, rec.tokens?.operator);
      if (answer.ok) {
        const r = answer.result as { canceled?: unknown; residue?: unknown };
        canceled = Array.isArray(r?.canceled)
          ? r.canceled.filter((x) => typeof x === "string")
          : [];
        const residue = Array.isArray(r?.residue) ? r.residue : [];
        lines.push(...canceled.map((id) => `canceled: ${id}`));
        lines.push(...residue.map(residueLine));
        if (residue.length === 0) lines.push("residue: nothing else was left running");
      } else {
        lines.push(
          `residue: unknown — the capsule could not be asked: murmur.StopSession answered ${answer.code} ${answer.message}`,
        );
      }
    } catch (e) {
      lines.push(`residue: unknown — the capsule could not be asked: ${errorMessage(e)}`);
    }
  } else {
    lines.push(`residue: unknown — the capsule could not be asked: ${reason}`);
  }
  const unended = canceled.length > 0 ? await unendedTasks(sessionDirOf(rec), canceled, 5000) : [];

  // 2. SIGTERM, 3. SIGKILL after the timeout.
  let signal: string;
  if (!(await pidAlive(rec.pid))) {
    signal = "none (the process had already exited)";
  } else {
    try {
      Deno.kill(rec.pid, "SIGTERM");
    } catch (e) {
      if (await pidAlive(rec.pid)) throw signalError(rec, e);
    }
    signal = "SIGTERM";
    if (!(await waitExit(rec.pid, timeoutMs))) {
      try {
        Deno.kill(rec.pid, "SIGKILL");
      } catch (e) {
        if (await pidAlive(rec.pid)) throw signalError(rec, e);
      }
      signal = `SIGTERM, then SIGKILL after ${timeoutMs / 1000}s`;
      if (!(await waitExit(rec.pid, 5000))) {
        throw new MurError(
          "E-RUN-024",
          `${rec.session_id} could not be ended: pid ${rec.pid} was still running 5 seconds after SIGKILL`,
          "its record is kept; its tasks were already canceled. Check the process with ps",
        );
      }
    }
  }
  // A session that ends cleanly removes its own record; a killed one cannot.
  await removeRunningRecord(rec.session_id);

  await writeOut(
    [
      `stopped: ${rec.session_id}`,
      `capsule: ${rec.capsule_name}@${rec.capsule_version}`,
      `signal:  ${signal}`,
      ...lines,
      ...unended.map((id) => `unended: ${id}  the trace does not record how this task ended`),
    ].join("\n") + "\n",
  );
  return 0;
}
