/**
 * The kit of the formation fault matrix (tests/crew/formation_faults_test.ts and its siblings):
 * a roster whose entry member `lead` calls its members with `call-member` (or delegates), launched
 * by the real `mur run --roster --json --task` (formation_helpers.ts `launch`); each member's
 * trace read from its workdir; and `endedCleanly`, the end every case checks: the launcher exits
 * within a bound, no member process is left, no running record, no formation record.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { stringify } from "yaml";
import { pidAlive } from "../../src/process_liveness.ts";
import { until } from "../helpers/until.ts";
import { call, launch, type Launched } from "./formation_helpers.ts";

// deno-lint-ignore no-explicit-any
export type Line = Record<string, any>;

/** A member's script: a task `work …` stays WORKING (an abortable 10-minute model wait). */
export const STAYS_WORKING = {
  tasks: [
    { match: "^work", turns: [{ steps: [{ text: "late", delay_ms: 600_000 }] }] },
    { match: "^answer", turns: [{ steps: [{ text: "ANSWER" }] }] },
  ],
};

/** The lead's script: one turn of `call-member` calls, a turn that ends it, then its answer. */
export function leadCalls(calls: [string, string][]) {
  return {
    tasks: [{
      match: ".",
      turns: [
        {
          steps: calls.map(([member, task], i) => ({
            tool_call: { id: `call_${i}`, name: "call-member", input: { member, task } },
          })),
        },
        { steps: [{ text: "waiting" }] },
        { steps: [{ text: "Lead: done." }] },
      ],
    }],
  };
}

export interface CrewSpec {
  /** Each launched member: its script and manifest keys beyond name/version/inference. */
  members: Record<string, { script: unknown; manifest?: Record<string, unknown> }>;
  /** The roster's text (`lead` is the entry). */
  roster: string;
  /** More files under the formation folder (a delegated child's manifest, …). */
  files?: Record<string, string>;
}

/** The roster of the matrix: lead may call alpha and beta. */
export const LEAD_ALPHA_BETA = `roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: alpha, manifest: alpha}
  - {name: beta, manifest: beta}
reachability: [{from: lead, to: [alpha, beta]}]
`;

export const LEAD_ALPHA = `roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: alpha, manifest: alpha}
reachability: [{from: lead, to: [alpha]}]
`;

/** Writes the members' manifests and scripts, and the roster; returns the folder. */
export async function writeCrew(spec: CrewSpec): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-faults-" });
  for (const [name, m] of Object.entries(spec.members)) {
    await Deno.mkdir(`${dir}/${name}`);
    await Deno.writeTextFile(`${dir}/${name}/script.yaml`, stringify(m.script));
    await Deno.writeTextFile(
      `${dir}/${name}/murmur.yaml`,
      stringify({
        name,
        version: "0.1.0",
        inference: { transport: "http", driver: "scripted", script: "script.yaml" },
        // A member takes its lead's calls only with consent (docs/door.md "Peer tasks and trust").
        exports: { peer_tasks: { accept: true } },
        ...m.manifest,
      }),
    );
  }
  for (const [path, text] of Object.entries(spec.files ?? {})) {
    await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  await Deno.writeTextFile(`${dir}/roster.yaml`, spec.roster);
  return dir;
}

/** `mur run --roster <dir>/roster.yaml --json --task <task>`, its formation line read. */
export function launchTask(dir: string, task = "go", env: Record<string, string> = {}) {
  return launch(dir, ["--task", task], env);
}

/** A launched member's line (pid, session) by name. */
export function memberOf(f: Launched, name: string) {
  const m = f.line.members.find((x) => x.name === name);
  assert(m, `no member ${name} in ${JSON.stringify(f.line)}`);
  return m;
}

/** A member's trace lines (its session in `<dir>/<name>/workdir/`). */
export function traceOf(f: Launched, name: string): Line[] {
  const m = memberOf(f, name);
  let text = "";
  try {
    text = Deno.readTextFileSync(`${f.dir}/${name}/workdir/${m.session_id}/trace.jsonl`);
  } catch {
    return [];
  }
  return text.split("\n").filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return []; // a line being written
    }
  });
}

/** The lines of one event type in a member's trace. */
export function linesOf(f: Launched, name: string, event: string): Line[] {
  return traceOf(f, name).filter((l) => l.event_type === event);
}

/** Waits (bounded) until a member's trace holds `n` lines of `event`; returns them. */
export function waitLines(f: Launched, name: string, event: string, n = 1, ms = 30_000) {
  return until(
    `${n} ${event} line(s) in ${name}'s trace`,
    () => {
      const found = linesOf(f, name, event);
      return found.length >= n ? found : undefined;
    },
    ms,
    50,
  );
}

/** The operator token of a member's door (its running record). */
export function operatorToken(f: Launched, name: string): string {
  const rec = JSON.parse(
    Deno.readTextFileSync(`${f.home}/running/${memberOf(f, name).session_id}.json`),
  );
  return rec.tokens.operator;
}

/**
 * Waits until the lead's stream says `waiting on call-member: <n> call(s) outstanding` (its task's
 * own SubscribeToTask stream, read with the operator token); returns the lead's task id.
 */
export async function leadWaiting(f: Launched, status: string, ms = 30_000): Promise<string> {
  const [start] = await waitLines(f, "lead", "task_start");
  const res = await fetch(`${f.line.url}/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "a2a-version": "1.0",
      authorization: `Bearer ${operatorToken(f, "lead")}`,
      // From the task's first event: the status may have been written before this request.
      "last-event-id": "0",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SubscribeToTask",
      params: { id: start.task_id },
    }),
    signal: AbortSignal.timeout(ms),
  });
  const text = new TextDecoder();
  let seen = "";
  try {
    for await (const chunk of res.body!) {
      seen += text.decode(chunk, { stream: true });
      if (seen.includes(JSON.stringify(status))) return start.task_id;
    }
  } catch {
    /* the bound passed: said below */
  } finally {
    await res.body?.cancel().catch(() => {});
  }
  const traces = f.line.members.filter((m) => m.pid !== null).map((m) =>
    `${m.name}: ${traceOf(f, m.name).map((l) => l.event_type).join(", ")}`
  );
  throw new Error(
    `the lead's stream had no "${status}" within ${ms / 1000}s:\n${seen.slice(-3000)}\n${
      traces.join("\n")
    }\nstderr: ${f.stderrSoFar().slice(-3000)}`,
  );
}

/** CancelTask on the lead's task with its operator token; the state the door answered. */
export async function cancelLead(f: Launched, taskId: string): Promise<string> {
  const a = await call(f.line.url, "CancelTask", { id: taskId }, operatorToken(f, "lead"));
  return (a.body.result as { status: { state: string } }).status.state;
}

/**
 * The launcher's end, bounded by `ms` (what each member's trace ended with, when it does not
 * come), then the clean end every case asks for: every member process gone, every running record
 * and the formation record removed. Returns the exit code and the launcher's stderr.
 */
export async function endedCleanly(f: Launched, ms = 60_000) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const st = await Promise.race([
    f.proc.status,
    new Promise<null>((r) => (timer = setTimeout(() => r(null), ms))),
  ]);
  clearTimeout(timer);
  if (st === null) {
    const tails = f.line.members.filter((m) => m.pid !== null).map((m) =>
      `${m.name}: ${traceOf(f, m.name).map((l) => l.event_type).slice(-6).join(", ")}`
    );
    throw new Error(
      `the launcher had not exited ${ms / 1000}s on; the members' traces end:\n${
        tails.join("\n")
      }\nstderr: ${f.stderrSoFar().slice(-3000)}`,
    );
  }
  for (const pid of f.pids()) assert(!(await pidAlive(pid)), `member pid ${pid} still runs`);
  let running: string[] = [];
  try {
    running = [...Deno.readDirSync(`${f.home}/running`)].map((e) => e.name);
  } catch { /* never made: nothing was left in it */ }
  assertEquals(running, [], "running records left");
  return { code: st.code, stderr: await f.stderr };
}

/** The last event of a member's trace (`session_end` for one that ended cleanly). */
export function lastEvent(f: Launched, name: string): Line {
  return traceOf(f, name).at(-1) ?? {};
}
