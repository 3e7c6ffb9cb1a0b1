/**
 * One spawned harness: stdin kept open or closed per the launch plan, stdout read as lines,
 * stderr drained into a tail, SIGINT for an interrupt, SIGKILL to the whole process group to
 * end it (npm launchers such as `codex` exec a native child; killing only the launcher would
 * orphan it). Knows no particular CLI.
 */
import { trackGroup } from "../../process_groups.ts";
import { ByteTail, readLines } from "./lines.ts";

export interface SpawnSpec {
  binary: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  stdin?: string;
  keepStdinOpen: boolean;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

export class HarnessProcess {
  readonly pid: number;
  readonly status: Promise<ExitStatus>;
  #child: Deno.ChildProcess;
  #stdin: WritableStreamDefaultWriter<Uint8Array> | null;
  #tail = new ByteTail(4096);
  #stderrDone: Promise<void>;
  #exited = false;
  #killed = false;

  private constructor(child: Deno.ChildProcess) {
    this.#child = child;
    this.pid = child.pid;
    this.#stdin = child.stdin.getWriter();
    this.#stderrDone = this.#tail.drain(child.stderr);
    this.status = child.status.then((s) => {
      this.#exited = true;
      return { code: s.signal ? null : s.code, signal: s.signal };
    });
  }

  /** Spawns the harness and writes the plan's stdin. Throws when the binary cannot start. */
  static async spawn(spec: SpawnSpec): Promise<HarnessProcess> {
    const child = new Deno.Command(spec.binary, {
      args: spec.args,
      env: spec.env,
      clearEnv: true,
      cwd: spec.cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      // Its own process group, so a kill reaches the harness's children too.
      detached: true,
    }).spawn();
    trackGroup(child.pid, child.status);
    const proc = new HarnessProcess(child);
    if (spec.stdin) await proc.write(spec.stdin);
    if (!spec.keepStdinOpen) await proc.closeStdin();
    return proc;
  }

  get exited(): boolean {
    return this.#exited;
  }

  get killed(): boolean {
    return this.#killed;
  }

  get stdinOpen(): boolean {
    return this.#stdin !== null;
  }

  lines(): AsyncGenerator<string> {
    return readLines(this.#child.stdout);
  }

  /** Writes to stdin; false when stdin is closed or the harness stopped reading. */
  async write(text: string): Promise<boolean> {
    if (!this.#stdin) return false;
    try {
      await this.#stdin.write(new TextEncoder().encode(text));
      return true;
    } catch {
      return false;
    }
  }

  async closeStdin(): Promise<void> {
    const w = this.#stdin;
    this.#stdin = null;
    if (!w) return;
    try {
      await w.close();
    } catch {
      // Already closed by the harness exiting.
    }
  }

  /** SIGINT to the harness itself; false when it already exited. */
  interrupt(): boolean {
    if (this.#exited) return false;
    try {
      this.#child.kill("SIGINT");
      return true;
    } catch {
      return false;
    }
  }

  /** SIGKILL to the harness's process group (and the harness, should the group be gone). */
  kill(): void {
    if (this.#exited) return;
    this.#killed = true;
    try {
      Deno.kill(-this.pid, "SIGKILL");
    } catch {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // Exited in between.
      }
    }
  }

  /** Kills whatever is left of the group after the harness exited (stray children). */
  reapGroup(): void {
    try {
      Deno.kill(-this.pid, "SIGKILL");
    } catch {
      // No group left: the usual case.
    }
  }

  async stderrTail(): Promise<string> {
    // The drain ends at EOF, which follows exit; bounded so a leaked pipe cannot hang us.
    await Promise.race([this.#stderrDone, new Promise((r) => setTimeout(r, 500))]);
    return this.#tail.text();
  }

  /** Releases the streams (after exit). */
  async dispose(): Promise<void> {
    await this.closeStdin();
    try {
      await this.#child.stdout.cancel();
    } catch {
      // Already consumed.
    }
  }
}
