/**
 * A capsule this mur starts as a child process (docs/crews.md): a formation member
 * (src/crew/formation/launch.ts) or a delegated child (`delegate-task`). It runs `mur run --manifest <path>
 * --json --bind 127.0.0.1` as the leader of its own process group, with a lifeline on its stdin
 * (src/crew/calls/lifeline.ts), so it ends when this process ends however that happens. It inherits this
 * process's environment except what makes a formation member (`MURMUR_FORMATION_ID`,
 * `MURMUR_CREW_*`), which only its starter gives it.
 *
 * API: `ChildCapsule.start(options)` resolves once the child's `--json` readiness line is read
 * (bounded by `readyTimeoutMs`) and throws E-RUN-045 otherwise (the child is killed first);
 * `url`, `pid`, `sessionId`, `tokens` come from that line; `exited` settles when the child exits;
 * `stop()` ends it: lifeline closed, SIGTERM 2 s later if it still runs, SIGKILL of its group
 * after `graceMs`, and a running record it left (killed) removed.
 */
import { entryArgs, mainModule } from "../../module_root.ts";
import { MurError } from "../../errors.ts";
import { trackGroup } from "../../process_groups.ts";
import { groupLeaderSpawn } from "../../tools/group_leader.ts";
import { LIFELINE_ENV } from "./lifeline.ts";
import { removeRunningRecord } from "../../home/running_records.ts";
import { murLine, murPath } from "../../invocation.ts";

/** The `--json` readiness line of `mur run` (docs/running.md). */
export interface ChildReadyLine {
  /** `localhost:<port>` as the child printed it. */
  url: string;
  pid: number;
  session_id: string;
  name: string;
  version: string;
  workdir: string;
  session_dir: string;
  tokens?: Record<string, string>;
}

export interface ChildOptions {
  /** The manifest path (a file or the folder holding murmur.yaml), as `--manifest` takes it. */
  manifest: string;
  /** More `mur run` flags: `--task`, `--workdir`, `--lifecycle-*`, … (`--json`, `--bind` are set). */
  args?: string[];
  /** Added to this process's environment for the child. */
  env?: Record<string, string>;
  cwd?: string;
  /** How long the readiness line may take (default 60 s: a cold `deno run` compiles first). */
  readyTimeoutMs?: number;
  /** Each stderr line of the child, as it comes (default: dropped). */
  onStderr?: (line: string) => void;
  /** Each stdout line after the readiness line (default: dropped). */
  onStdout?: (line: string) => void;
  /** Names the child in error messages (default: the manifest path). */
  label?: string;
}

/** Variables a child never inherits from this process (src/crew/formation/launch.ts sets them itself). */
const MEMBERSHIP_ENV = [
  "MURMUR_FORMATION_ID",
  "MURMUR_CREW_DOOR",
  "MURMUR_CREW_CALLEES",
  "MURMUR_CREW_FILE",
  LIFELINE_ENV,
];

/** How long stop() waits on the lifeline alone before it sends SIGTERM too. */
export const SIGTERM_AFTER_MS = 2_000;

/** Default time a child gets to end after stop() before its group is killed. */
export const CHILD_STOP_GRACE_MS = 10_000;

/** Lines of a failed child's stderr quoted in E-RUN-045. */
const STDERR_TAIL = 8;

/** How this program runs `mur`: the binary itself, or `deno run -A` of main.ts or of the bundle's main.js
 * (src/module_root.ts `entryArgs`: a bundle with no config file), whichever this process runs. */
export function murCommand(): { program: string; args: string[] } {
  if (Deno.build.standalone) return { program: Deno.execPath(), args: [] };
  return { program: Deno.execPath(), args: ["run", "-A", ...entryArgs(mainModule().pathname)] };
}

export class ChildCapsule {
  readonly #proc: Deno.ChildProcess;
  readonly #lifeline: WritableStreamDefaultWriter<Uint8Array>;
  #exitCode: number | null = null;

  private constructor(
    proc: Deno.ChildProcess,
    lifeline: WritableStreamDefaultWriter<Uint8Array>,
    readonly ready: ChildReadyLine,
    /** Settles with the child's exit status when it exits, for any reason. */
    readonly exited: Promise<Deno.CommandStatus>,
  ) {
    this.#proc = proc;
    this.#lifeline = lifeline;
    exited.then((s) => (this.#exitCode = s.code));
  }

  get pid(): number {
    return this.#proc.pid;
  }
  /** The door as an http URL on loopback: `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://${this.ready.url.replace(/^localhost:/, "127.0.0.1:")}`;
  }
  get sessionId(): string {
    return this.ready.session_id;
  }
  /** The door's tokens by credential (`operator` first) on an authenticated door, else null. */
  get tokens(): Record<string, string> | null {
    return this.ready.tokens ?? null;
  }
  /** The exit code once the child has exited, else null. */
  get exitCode(): number | null {
    return this.#exitCode;
  }

  /** Starts the child and waits for its readiness line; E-RUN-045 when it does not come. */
  static async start(o: ChildOptions): Promise<ChildCapsule> {
    const label = o.label ?? o.manifest;
    const mur = murCommand();
    const args = [...mur.args, "run", "--manifest", o.manifest, "--json", "--bind", "127.0.0.1"];
    args.push(...(o.args ?? []));
    // A child is nobody's member by inheritance: what makes a process a formation member is
    // given by its starter in `o.env`, never passed down from this process.
    const inherited = Deno.env.toObject();
    for (const name of MEMBERSHIP_ENV) delete inherited[name];
    const env = { ...inherited, ...o.env, [LIFELINE_ENV]: "stdin" };
    // Its own process group, so one kill reaches what it forked (src/tools/group_leader.ts).
    const leader = groupLeaderSpawn(mur.program, args, env, true);
    const proc = new Deno.Command(leader.program, {
      args: leader.args,
      cwd: o.cwd,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: leader.detached,
    }).spawn();
    const exited = proc.status;
    trackGroup(proc.pid, exited);
    const lifeline = proc.stdin.getWriter();
    const tail: string[] = [];
    const stderrDone = eachLine(proc.stderr, (line) => {
      tail.push(line);
      if (tail.length > STDERR_TAIL) tail.shift();
      o.onStderr?.(line);
    });
    let first!: (line: string | null) => void;
    const firstLine = new Promise<string | null>((r) => (first = r));
    let seen = false;
    const stdoutDone = eachLine(proc.stdout, (line) => {
      if (!seen) {
        seen = true;
        first(line);
      } else o.onStdout?.(line);
    }).then(() => first(null));

    const fail = async (why: string): Promise<never> => {
      killGroup(proc.pid, "SIGKILL");
      await exited;
      await within(Promise.all([stderrDone, stdoutDone]), 1000);
      const said = tail.length > 0 ? `; its last stderr lines:\n${tail.join("\n")}` : "";
      throw new MurError(
        "E-RUN-045",
        `capsule ${label} did not come up: ${why}${said}`,
        `run it alone with \`${
          murLine("run", "--manifest", murPath(absolute(o.manifest, o.cwd)))
        }\` to see why`,
      );
    };

    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeoutMs = o.readyTimeoutMs ?? 60_000;
    const line = await Promise.race([
      firstLine,
      new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (line === "timeout") return await fail(`no readiness line within ${timeoutMs / 1000}s`);
    if (line === null) {
      const st = await exited;
      return await fail(`it exited ${st.code} before its readiness line`);
    }
    const ready = parseReady(line);
    if (!ready) return await fail(`its first line is not a readiness line: ${line.slice(0, 200)}`);
    return new ChildCapsule(proc, lifeline, ready, exited);
  }

  /** Closes the lifeline: the child winds down as after a first SIGTERM. */
  closeLifeline(): void {
    this.#lifeline.close().catch(() => {});
  }

  /** Sends `signal` to the child alone (not its group); false when it has exited. */
  signal(signal: Deno.Signal): boolean {
    if (this.#exitCode !== null) return false;
    try {
      Deno.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Ends the child: its lifeline closed (it cancels its tasks, writes session_end and removes its
   * running record); SIGTERM if it still runs `SIGTERM_AFTER_MS` later (a child that does not read
   * its lifeline); SIGKILL of its process group if it still runs after `graceMs`. Resolves with
   * its exit status.
   */
  async stop(graceMs = CHILD_STOP_GRACE_MS): Promise<Deno.CommandStatus> {
    this.closeLifeline();
    if (!(await this.#exitsWithin(Math.min(SIGTERM_AFTER_MS, graceMs)))) {
      this.signal("SIGTERM");
      if (!(await this.#exitsWithin(Math.max(0, graceMs - SIGTERM_AFTER_MS)))) {
        killGroup(this.pid, "SIGKILL");
      }
    }
    const status = await this.exited;
    // A child that was killed (by us or anyone) could not remove its running record; its
    // starter does, as nothing else would until a `mur ps` prunes it.
    await removeRunningRecord(this.sessionId).catch(() => {});
    return status;
  }

  async #exitsWithin(ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      this.exited.then(() => true),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), ms))),
    ]);
    clearTimeout(timer);
    return ended;
  }
}

function parseReady(line: string): ChildReadyLine | null {
  try {
    const v = JSON.parse(line);
    if (
      typeof v?.url === "string" && typeof v.pid === "number" &&
      typeof v.session_id === "string" && /^ses_[0-9a-f]{32}$/.test(v.session_id)
    ) return v as ChildReadyLine;
  } catch {
    // not JSON
  }
  return null;
}

/** Signals the group `pid` leads, or the process alone where it leads none. */
export function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    try {
      Deno.kill(pid, signal);
    } catch {
      // gone already
    }
  }
}

/** Calls `onLine` with each line of `stream` (the last one even without a newline). */
async function eachLine(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let buf = "";
  try {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    }
  } catch {
    // the pipe broke: the child is gone
  }
  if (buf.length > 0) onLine(buf);
}

/** Waits for `p`, at most `ms` (the timer is cleared either way). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** `path` made absolute against `cwd` (the child's), else this process's working directory. */
function absolute(path: string, cwd?: string): string {
  if (path.startsWith("/")) return path;
  return `${cwd ?? Deno.cwd()}/${path}`;
}
