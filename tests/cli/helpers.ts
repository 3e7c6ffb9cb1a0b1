/** Running the real CLI (`deno run -A main.ts …`) as a subprocess, with bounded waits. */
import { type RunningRecord, writeRunningRecord } from "../../src/home/running_records.ts";
import { killTree } from "../helpers/kill_tree.ts";

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
  const timer = setTimeout(() => killTree(child.pid), timeoutMs);
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

/** Reads a byte stream line by line as it arrives, each read bounded by a timeout. */
export class LineReader {
  private reader: ReadableStreamDefaultReader<string>;
  private buffer = "";
  private ended = false;
  /** Every line read so far. */
  readonly seen: string[] = [];

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next line, or null at end of stream; throws after timeoutMs. */
  async next(timeoutMs = 15_000): Promise<string | null> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const nl = this.buffer.indexOf("\n");
      if (nl >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.seen.push(line);
        return line;
      }
      if (this.ended) {
        if (this.buffer === "") return null;
        const rest = this.buffer;
        this.buffer = "";
        this.seen.push(rest);
        return rest;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`no line within ${timeoutMs} ms (have ${JSON.stringify(this.buffer)})`);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`no line within ${timeoutMs} ms (seen ${JSON.stringify(this.seen)})`)),
          left,
        );
      });
      try {
        const { value, done } = await Promise.race([this.reader.read(), timeout]);
        if (done) this.ended = true;
        else this.buffer += value;
      } finally {
        clearTimeout(timer);
      }
    }
  }

  /** Reads lines until one satisfies `pred`; returns the lines read, that one included. */
  async until(pred: (line: string) => boolean, timeoutMs = 15_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    const got: string[] = [];
    while (true) {
      const line = await this.next(Math.max(1, deadline - Date.now()));
      if (line === null) {
        throw new Error(`stream ended before the line (read ${JSON.stringify(got)})`);
      }
      got.push(line);
      if (pred(line)) return got;
    }
  }

  /** Everything left, until the stream ends. */
  async rest(timeoutMs = 15_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    const got: string[] = [];
    while (true) {
      const line = await this.next(Math.max(1, deadline - Date.now()));
      if (line === null) return got;
      got.push(line);
    }
  }
}

/** A child whose stdout and stderr are read line by line as they arrive. */
export interface LiveMur {
  child: Deno.ChildProcess;
  out: LineReader;
  err: LineReader;
  /** Resolves with the next stdout line, or null at end of output; rejects after timeoutMs. */
  nextLine(timeoutMs?: number): Promise<string | null>;
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
  const out = new LineReader(child.stdout);
  const err = new LineReader(child.stderr);
  return {
    child,
    out,
    err,
    nextLine: (timeoutMs) => out.next(timeoutMs),
    kill() {
      killTree(child.pid);
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
