/**
 * `mur run --roster <file>` (docs/crews.md): admits the roster, starts every member launched
 * here as its own `mur run` child on loopback (src/crew/calls/child_capsule.ts) — every other member
 * first, each waited for, then the entry member with the task — wires each caller with its
 * callees (crew file, edge tokens), prints one readiness line, and ends the members together.
 *
 * Endings: the entry member ends → every member is stopped; SIGINT/SIGTERM → every member is
 * stopped (a second one kills their process groups at once); another member dies → logged, the
 * formation goes on and calls to it fail; the launcher killed → every lifeline closes and the
 * members end by themselves (src/crew/calls/lifeline.ts).
 */
import { errorMessage, MurError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { newLineAfterInterrupt } from "../../interrupt_newline.ts";
import { mintEdgeToken } from "../../door/auth.ts";
import { murmurHome } from "../../home/running_records.ts";
import { ChildCapsule, killGroup } from "../calls/child_capsule.ts";
import {
  CREW_CALLEES_ENV,
  CREW_FILE_ENV,
  type CrewMember,
  writeCrewFile,
} from "../calls/crew_file.ts";
import {
  type FormationRecord,
  removeFormationRecord,
  writeFormationRecord,
} from "./formation_record.ts";
import { CREW_DOOR_ENV, FORMATION_ID_ENV } from "./membership.ts";
import { calleesOf, loadRoster, type Roster, type RosterMember } from "./roster.ts";

/** What `mur run --roster` was given (src/cli/run.ts refuses the flags that do not go with it). */
export interface RosterLaunch {
  roster: string;
  task?: string;
  json?: boolean;
}

/** How long a member has to end after its lifeline closes and SIGTERM, before SIGKILL. */
export const MEMBER_STOP_GRACE_MS = 10_000;

/** On SIGINT/SIGTERM, how long the other members wait for the entry member to end first. */
const ENTRY_FIRST_MS = 2_000;

interface Running {
  member: RosterMember;
  child: ChildCapsule;
  stopped?: Promise<void>;
}

export async function runRoster(v: RosterLaunch): Promise<number> {
  if (Deno.env.get(FORMATION_ID_ENV) !== undefined) {
    throw new MurError(
      "E-RUN-046",
      `mur run --roster inside a formation (${FORMATION_ID_ENV} is set): a member does not launch formations`,
    );
  }
  const roster = await loadRoster(v.roster);
  const f = new Formation(roster, v);
  return await f.run();
}

class Formation {
  readonly id = newId("frm");
  readonly key = crypto.getRandomValues(new Uint8Array(32));
  readonly dir: string;
  readonly running: Running[] = [];
  #stopping = false;
  #signal: number | null = null;
  #signals = 0;

  constructor(readonly roster: Roster, readonly v: RosterLaunch) {
    this.dir = `${murmurHome()}/formations/${this.id}`;
  }

  async run(): Promise<number> {
    await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await Deno.chmod(`${murmurHome()}/formations`, 0o700).catch(() => {});
    await Deno.chmod(this.dir, 0o700).catch(() => {});
    const onTerm = () => this.#onSignal(143);
    const onInt = () => this.#onSignal(130);
    Deno.addSignalListener("SIGTERM", onTerm);
    Deno.addSignalListener("SIGINT", onInt);
    try {
      return await this.#run();
    } finally {
      Deno.removeSignalListener("SIGTERM", onTerm);
      Deno.removeSignalListener("SIGINT", onInt);
      await removeFormationRecord(this.id);
      await Deno.remove(this.dir, { recursive: true }).catch(() => {});
    }
  }

  async #run(): Promise<number> {
    const launched = this.roster.members.filter((m) => m.manifest !== undefined);
    for (const m of launched) await this.#writeDoorFile(m);
    const peers = launched.filter((m) => !m.entry);
    // Every member but the entry, at once; one that does not come up ends the launch.
    const started = await Promise.allSettled(peers.map((m) => this.#start(m)));
    const failed = started.find((s) => s.status === "rejected") as
      | PromiseRejectedResult
      | undefined;
    if (failed || this.#signal !== null) {
      await this.#stopAll();
      if (failed) throw failed.reason;
      return this.#signal!;
    }
    for (const m of launched) await this.#writeCrew(m);
    let entry: Running;
    try {
      entry = await this.#start(this.roster.entry);
    } catch (e) {
      await this.#stopAll();
      throw e;
    }
    if (this.#signal !== null) {
      await this.#stopAll();
      return this.#signal;
    }
    await writeFormationRecord(this.#record());
    this.#announce();
    for (const r of this.running) {
      if (r !== entry) {
        r.child.exited.then((st) => {
          if (this.#stopping) return;
          console.error(
            `[mur run] member '${r.member.name}' (pid ${r.child.pid}, ${r.child.sessionId}) exited ${
              st.signal ?? st.code
            } before the formation ended; the formation goes on without it, and calls to it fail`,
          );
        });
      }
    }
    const st = await entry.child.exited;
    await this.#stopAll();
    // Stopped by a signal (`mur stop <frm>`, Ctrl-C) or not, the formation ends as its entry
    // member did: its status line and exit code, as a single capsule's stop does.
    if (!this.v.json) console.log(`status: ${entryStatus(entry.child)}`);
    return st.signal ? 128 + signalNumber(st.signal) : st.code;
  }

  /** A member's private door file: its name and the formation key (src/crew/formation/membership.ts). */
  async #writeDoorFile(m: RosterMember): Promise<void> {
    const path = `${this.dir}/${m.name}.door.json`;
    const key = btoa(String.fromCharCode(...this.key)).replace(/\+/g, "-").replace(/\//g, "_")
      .replace(/=+$/, "");
    await Deno.writeTextFile(
      path,
      JSON.stringify({ formation_id: this.id, member: m.name, key }) + "\n",
      { mode: 0o600 },
    );
    await Deno.chmod(path, 0o600).catch(() => {});
  }

  async #start(m: RosterMember): Promise<Running> {
    const callees = calleesOf(this.roster, m.name);
    const env: Record<string, string> = {
      [FORMATION_ID_ENV]: this.id,
      [CREW_DOOR_ENV]: `${this.dir}/${m.name}.door.json`,
    };
    if (callees.length > 0) {
      env[CREW_CALLEES_ENV] = callees.join(",");
      env[CREW_FILE_ENV] = `${this.dir}/${m.name}.crew.json`;
    }
    const lifecycle = m.entry ? ["single", "exit"] : ["queue", "sleep"];
    const args = [
      "--lifecycle-task-acceptance",
      lifecycle[0],
      "--lifecycle-after-task",
      lifecycle[1],
    ];
    if (m.entry && this.v.task !== undefined) args.push("--task", this.v.task);
    const say = (line: string) => console.error(`[${m.name}] ${line}`);
    const child = await ChildCapsule.start({
      manifest: m.manifest!,
      label: `member '${m.name}'`,
      args,
      env,
      onStderr: say,
      onStdout: say,
    });
    const r = { member: m, child };
    this.running.push(r);
    // It has read its door file before its readiness line: the key leaves the disk now.
    await Deno.remove(`${this.dir}/${m.name}.door.json`).catch(() => {});
    return r;
  }

  /** A caller's crew file: each callee's door and the edge token this caller presents there. */
  async #writeCrew(m: RosterMember): Promise<void> {
    const callees = calleesOf(this.roster, m.name);
    if (callees.length === 0) return;
    const members: CrewMember[] = [];
    for (const name of callees) {
      const callee = this.roster.members.find((x) => x.name === name)!;
      if (callee.url !== undefined) {
        members.push({ name, url: callee.url, token: Deno.env.get(callee.tokenEnv!) ?? "" });
        continue;
      }
      const r = this.running.find((x) => x.member.name === name)!;
      members.push({
        name,
        url: r.child.url,
        token: await mintEdgeToken(this.key, this.id, m.name, name),
      });
    }
    await writeCrewFile(`${this.dir}/${m.name}.crew.json`, { formation_id: this.id, members });
  }

  #record(): FormationRecord {
    return {
      formation_id: this.id,
      launcher_pid: Deno.pid,
      roster: this.roster.path,
      entry: this.roster.entry.name,
      started_at: new Date().toISOString(),
      members: this.roster.members.map((m) => {
        const r = this.running.find((x) => x.member === m);
        return r
          ? {
            name: m.name,
            entry: m.entry,
            url: r.child.url,
            pid: r.child.pid,
            session_id: r.child.sessionId,
            session_dir: r.child.ready.session_dir,
          }
          : { name: m.name, entry: m.entry, url: m.url! };
      }),
    };
  }

  /** The one readiness line (`--json`), or the human block on stdout. */
  #announce(): void {
    const rec = this.#record();
    const entry = rec.members.find((m) => m.entry)!;
    if (this.v.json) {
      console.log(JSON.stringify({
        formation_id: this.id,
        entry: entry.name,
        url: entry.url,
        members: rec.members.map((m) => ({
          name: m.name,
          url: m.url,
          pid: m.pid ?? null,
          session_id: m.session_id ?? null,
        })),
      }));
      return;
    }
    const width = Math.max(...rec.members.map((m) => m.name.length));
    console.log(`formation: ${this.id}`);
    for (const m of rec.members) {
      const role = m.entry ? "entry " : m.pid === undefined ? "remote" : "member";
      const where = m.pid === undefined ? m.url : `pid ${m.pid}  ${m.session_id}  ${m.url}`;
      console.log(`  ${role}  ${m.name.padEnd(width)}  ${where}`);
    }
  }

  #onSignal(code: number): void {
    this.#signals++;
    if (this.#signals > 1) {
      // A second signal does not wait: every member's process group is killed now.
      for (const r of this.running) killGroup(r.child.pid, "SIGKILL");
      Deno.exit(code);
    }
    this.#signal = code;
    const name = code === 130 ? "SIGINT" : "SIGTERM";
    newLineAfterInterrupt(name);
    console.error(`[mur run] ${name}: stopping the formation ${this.id}`);
    // The entry first: its calls still out end `abandoned` and their cancels reach members that
    // still run; stopped together, a member's own wind-down could end the call `canceled` first.
    // An entry slow to end holds the others back at most ENTRY_FIRST_MS, so `mur stop`'s budget
    // (its --timeout plus MEMBER_STOP_GRACE_MS) still covers both.
    const entry = this.running.find((r) => r.member.entry);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const first = entry
      ? Promise.race([
        this.#stop(entry),
        new Promise((r) => (timer = setTimeout(r, ENTRY_FIRST_MS))),
      ])
      : Promise.resolve();
    void first.then(() => {
      clearTimeout(timer);
      return this.#stopAll();
    });
  }

  /** Stops every member started so far, all at once (each member once). */
  async #stopAll(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.running.map((r) => this.#stop(r)));
  }

  /** Stops one member (once, however often asked). */
  #stop(r: Running): Promise<void> {
    this.#stopping = true;
    r.stopped ??= r.child.stop(MEMBER_STOP_GRACE_MS).then(() => {}, () => {});
    return r.stopped;
  }
}

/** The entry member's `session_end` exit status, from its trace (its stdout is `--json`). */
function entryStatus(child: ChildCapsule): string {
  try {
    const lines = Deno.readTextFileSync(`${child.ready.session_dir}/trace.jsonl`).trim().split(
      "\n",
    );
    for (let i = lines.length - 1; i >= 0; i--) {
      const ev = JSON.parse(lines[i]);
      if (ev.event_type === "session_end") return String(ev.exit_status);
    }
  } catch (e) {
    return `unknown (${errorMessage(e)})`;
  }
  return "unknown (no session_end)";
}

function signalNumber(s: Deno.Signal): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[s] ?? 0;
}
