/** Running the real CLI (`deno run -A main.ts …`) as a subprocess, with bounded waits. */
import { type RunningRecord, writeRunningRecord } from "../../src/session/running.ts";

export const MAIN = new URL("../../main.ts", import.meta.url).pathname;

export interface MurResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `mur <args>` to completion (killed after timeoutMs) and returns its output. */
export async function runMur(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<MurResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    env: { NO_COLOR: "", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, timeoutMs);
  try {
    const out = await child.output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A child whose stdout is read line by line as it arrives. */
export interface LiveMur {
  child: Deno.ChildProcess;
  /** Resolves with the next stdout line, or null at end of output; rejects after timeoutMs. */
  nextLine(timeoutMs?: number): Promise<string | null>;
  /** Everything the child wrote to stderr (resolves when it closes stderr). */
  stderr: Promise<string>;
  kill(): void;
}

export function spawnMur(args: string[], env: Record<string, string> = {}): LiveMur {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let ended = false;
  const stderr = new Response(child.stderr).text();
  return {
    child,
    stderr,
    async nextLine(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (true) {
        const nl = buffer.indexOf("\n");
        if (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          return line;
        }
        if (ended) {
          return buffer === "" ? null : (() => {
            const rest = buffer;
            buffer = "";
            return rest;
          })();
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(`no stdout line within ${timeoutMs} ms (have ${JSON.stringify(buffer)})`);
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no stdout line within ${timeoutMs} ms`)),
            left,
          );
        });
        try {
          const { value, done } = await Promise.race([lines.read(), timeout]);
          if (done) ended = true;
          else buffer += value;
        } finally {
          clearTimeout(timer);
        }
      }
    },
    kill() {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    },
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
