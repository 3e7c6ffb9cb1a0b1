/**
 * Running a tool's subprocess: spawn it in its own process group (so cancel and kill reach
 * whatever it forked), pump stdout and stderr into memory, and, when a shell command detaches,
 * redirect both pumps into a log file without losing or reordering a byte.
 */
import { trackGroup } from "../process_groups.ts";
import { groupLeaderSpawn } from "./group_leader.ts";
import { containedCommand } from "../containment/spawn.ts";
import type { ContainmentPolicy } from "../containment/policy.ts";
import { shellEnv } from "./shell_env.ts";

/** Bytes of one stream kept in memory; beyond this only the count grows (a note says so). */
export const MEMORY_CAP_BYTES = 32 * 1024 * 1024;
/** After the process exits, how long its pipes may stay open (a forked child holding them). */
const DRAIN_MS = 300;
/** SIGTERM first; SIGKILL when the group has not gone after this long. */
export const KILL_GRACE_MS = 2000;

/** One output stream: in memory until `redirect()`, then appended to a shared file writer. */
export class StreamCapture {
  readonly chunks: Uint8Array[] = [];
  /** Every byte the stream produced (also the ones past the memory cap, and redirected ones). */
  bytes = 0;
  /** Bytes held in `chunks`. */
  kept = 0;
  #sink: ((chunk: Uint8Array) => void) | null = null;

  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.#sink) return this.#sink(chunk);
    if (this.kept + chunk.length > MEMORY_CAP_BYTES) {
      const room = MEMORY_CAP_BYTES - this.kept;
      if (room > 0) {
        this.chunks.push(chunk.subarray(0, room));
        this.kept += room;
      }
      return;
    }
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  /** True when bytes were dropped at the memory cap. */
  get clipped(): boolean {
    return this.kept < this.bytes && this.#sink === null;
  }

  /** Everything kept, as one array. */
  data(): Uint8Array {
    const out = new Uint8Array(this.kept);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }

  /** From now on chunks go to `sink`; what was kept is handed over first. */
  redirect(sink: (chunk: Uint8Array) => void): void {
    for (const c of this.chunks) sink(c);
    this.chunks.length = 0;
    this.kept = 0;
    this.#sink = sink;
  }
}

/** Serialised appends to one file: two pumps share it, and a write may be partial. */
export class FileAppender {
  #chain: Promise<void> = Promise.resolve();
  #error: unknown = null;
  written = 0;

  private constructor(readonly path: string, readonly file: Deno.FsFile) {}

  static async open(path: string): Promise<FileAppender> {
    const file = await Deno.open(path, { write: true, create: true, append: true });
    return new FileAppender(path, file);
  }

  write(chunk: Uint8Array): void {
    // Copy: the pump may reuse nothing, but a caller's view must not change under the queue.
    const data = chunk.slice();
    this.#chain = this.#chain.then(async () => {
      if (this.#error) return;
      try {
        let off = 0;
        while (off < data.length) off += await this.file.write(data.subarray(off));
        this.written += data.length;
      } catch (e) {
        this.#error = e;
      }
    });
  }

  /** Waits for queued writes and closes the file. */
  async close(): Promise<void> {
    await this.#chain;
    try {
      this.file.close();
    } catch {
      // already closed
    }
  }
}

export interface Spawned {
  child: Deno.ChildProcess;
  pid: number;
  stdout: StreamCapture;
  stderr: StreamCapture;
  /** The process's exit status. */
  status: Promise<Deno.CommandStatus>;
  /** Exit status once both pipes are drained (or given up on shortly after the exit). */
  finished: Promise<Deno.CommandStatus>;
  /**
   * Stops reading the pipes and lets the runtime exit without waiting for the process, which
   * keeps running (its writes to the closed pipes fail from then on).
   */
  release(): void;
}

export interface SpawnOptions {
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  clearEnv?: boolean;
  /** Bytes written to stdin, then closed; absent = stdin is /dev/null. */
  stdin?: Uint8Array;
  /**
   * The session's containment (src/containment/spawn.ts): the process runs inside it, with
   * exactly the environment given (mur's own never added).
   */
  containment?: ContainmentPolicy;
}

async function pump(stream: ReadableStream<Uint8Array>, into: StreamCapture, stop: Promise<void>) {
  const reader = stream.getReader();
  let stopped = false;
  stop.then(() => {
    stopped = true;
    reader.cancel().catch(() => {});
  });
  try {
    while (!stopped) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value) into.push(value);
    }
  } catch {
    // a canceled reader rejects its pending read; nothing is lost that was read before
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // released by cancel
    }
  }
}

/**
 * Spawns `program` in a new process group. Throws what `Deno.Command.spawn` throws (NotFound,
 * PermissionDenied) so callers can report a spawn failure as such.
 */
export function spawnCaptured(program: string, opts: SpawnOptions): Spawned {
  // The child leads its own session and group, so a kill reaches what it forked; through
  // setsid(1) where it can, as a fork costs more the larger mur's heap (group_leader.ts).
  const contained = opts.containment !== undefined && opts.containment.cls !== "advisory";
  const cmd = containedCommand(opts.containment, program, opts.args, opts.cwd);
  const env = contained ? opts.env ?? shellEnv() : opts.env;
  const clearEnv = contained ? true : opts.clearEnv;
  const leader = groupLeaderSpawn(cmd.program, cmd.args, env, clearEnv);
  const child = new Deno.Command(leader.program, {
    args: leader.args,
    cwd: opts.cwd,
    env,
    clearEnv,
    stdin: opts.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
    detached: leader.detached,
  }).spawn();
  const stdout = new StreamCapture();
  const stderr = new StreamCapture();
  const status = child.status;
  trackGroup(child.pid, status);
  let stopPumps!: () => void;
  const stop = new Promise<void>((r) => (stopPumps = r));
  const pumps = Promise.all([pump(child.stdout, stdout, stop), pump(child.stderr, stderr, stop)]);
  if (opts.stdin) writeStdin(child, opts.stdin);
  const finished = status.then(async (st) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      pumps.then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), DRAIN_MS))),
    ]);
    clearTimeout(timer);
    if (!drained) {
      stopPumps();
      await pumps;
    }
    stopPumps();
    return st;
  });
  const release = () => {
    stopPumps();
    try {
      child.unref();
    } catch {
      // already exited
    }
  };
  return { child, pid: child.pid, stdout, stderr, status, finished, release };
}

async function writeStdin(child: Deno.ChildProcess, data: Uint8Array): Promise<void> {
  const w = child.stdin.getWriter();
  try {
    await w.write(data);
  } catch {
    // the program did not read its input (closed stdin early): not an error of the call
  }
  try {
    await w.close();
  } catch {
    // already closed by the peer
  }
}

function signalGroup(pid: number, sig: Deno.Signal): void {
  try {
    Deno.kill(-pid, sig);
  } catch {
    try {
      Deno.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

/**
 * SIGTERM to the process group, SIGKILL after `graceMs` when it has not exited. Resolves with
 * the exit status.
 */
export async function terminate(
  s: Pick<Spawned, "pid" | "status">,
  graceMs = KILL_GRACE_MS,
): Promise<Deno.CommandStatus> {
  signalGroup(s.pid, "SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    s.status.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!exited) signalGroup(s.pid, "SIGKILL");
  const st = await s.status;
  // Stragglers the leader forked and left behind in the group go too.
  signalGroup(s.pid, "SIGKILL");
  return st;
}

/** The shell convention for a status: the exit code, or 128 + signal number when killed. */
export function exitCodeOf(st: Deno.CommandStatus): number {
  if (st.signal) {
    const n = SIGNAL_NUMBERS[st.signal];
    if (n !== undefined) return 128 + n;
  }
  return st.code;
}

const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGXCPU: 24,
  SIGXFSZ: 25,
};
