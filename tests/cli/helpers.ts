/**
 * Running the real CLI (`deno run -A main.ts …`) as a subprocess, through the one launcher
 * (tests/helpers/mur.ts), with bounded waits.
 */
import { type RunningRecord, writeRunningRecord } from "../../src/home/running_records.ts";
import { Lines, MAIN, runMur as runMurProcess, startMur } from "../helpers/mur.ts";

export { MAIN };

export interface MurResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `mur <args>` to completion (killed, and a rejection, after timeoutMs); its output. */
export async function runMur(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<MurResult> {
  const { code, stdout, stderr } = await runMurProcess(
    { args, env: { NO_COLOR: "", ...env } },
    timeoutMs,
  );
  return { code, stdout, stderr };
}

/** stdout or stderr of a started mur, line by line as it arrives (tests/helpers/mur.ts). */
export { Lines as LineReader };

/** A child whose stdout and stderr are read line by line as they arrive. */
export interface LiveMur {
  child: Deno.ChildProcess;
  out: Lines;
  err: Lines;
  /** Resolves with the next stdout line, or null at end of output; rejects after timeoutMs. */
  nextLine(timeoutMs?: number): Promise<string | null>;
  kill(): void;
}

export async function spawnMur(args: string[], env: Record<string, string> = {}): Promise<LiveMur> {
  const mur = await startMur({ args, env });
  return {
    child: mur.proc,
    out: mur.out,
    err: mur.err,
    nextLine: (timeoutMs) => mur.out.next(timeoutMs),
    kill: () => mur.kill("SIGKILL"),
  };
}

/** A temp MURMUR_HOME for one test. */
export async function tempHome(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "mur-home-" });
}

let fakeSeq = 0;
/** A fresh ses_ id that sorts after earlier ones (UUIDv7-like: time first). */
export function fakeSessionId(ms: number = Date.now()): string {
  const hex = ms.toString(16).padStart(12, "0") + "7" +
    (fakeSeq++).toString(16).padStart(3, "0") + "8" +
    crypto.getRandomValues(new Uint8Array(8)).reduce(
      (s, b) => s + b.toString(16).padStart(2, "0"),
      "",
    )
      .slice(0, 15);
  return `ses_${hex}`;
}

export async function writeRecord(
  home: string,
  fields: Partial<RunningRecord> & { session_id: string; url: string },
): Promise<RunningRecord> {
  const rec: RunningRecord = {
    pid: Deno.pid,
    capsule_name: "fake",
    capsule_version: "0.0.1",
    workdir: `${home}/workdir/${fields.session_id}`,
    started_at: new Date().toISOString(),
    ...fields,
  };
  await writeRunningRecord(rec, home);
  return rec;
}
