/**
 * Shell tools (docs/tools.md): one tool per `capabilities.shell.allow` binary. Interpreters run
 * a whole script line through `-c`; any other binary takes args only, split shell-style with
 * nothing expanded. The result is data whatever the exit code; a command that outlives
 * `lifecycle.shell_grace_secs` moves to the background (docs/hooks.md "Detached shells").
 */
import { type BackgroundResult, detachedNote, detachPromise } from "./background.ts";
import { CAPSULE_HOME, resolveOnPath, shellEnv } from "./shell_env.ts";
import { errorMessage } from "../errors.ts";
import { newId } from "../ids.ts";
import type { DetachedShells } from "./detached.ts";
import { decode, headUtf8, TRUNCATE_BYTES, withNewline, writeOutputLog } from "./output.ts";
import {
  exitCodeOf,
  FileAppender,
  KILL_GRACE_MS,
  spawnCaptured,
  type Spawned,
  type StreamCapture,
  terminate,
} from "./process.ts";
import { ShellWordsError, splitShellWords } from "./shell_words.ts";
import {
  type DetachedOutcome,
  notReached,
  type ShellRun,
  type Tool,
  type ToolContext,
  type ToolResult,
} from "./types.ts";

/** Binaries that take a whole script line as `<bin> -c <line>`. */
export const INTERPRETERS: ReadonlySet<string> = new Set([
  "bash",
  "sh",
  "zsh",
  "fish",
  "dash",
  "ksh",
]);

export interface ShellToolOptions {
  /** The `capabilities.shell.allow` entry: a bare name looked up on PATH. */
  binary: string;
  /** `lifecycle.shell_grace_secs`; 0 detaches at the first check after spawn. */
  graceSecs: number;
  registry: DetachedShells;
  /** Base environment; default mur's own minus credential variables. `HOME` is always set. */
  env?: Record<string, string>;
  now?: () => number;
  /** SIGTERM → SIGKILL grace on cancel. */
  killGraceMs?: number;
  /** Where a detached command's result ends up (default `delivered`). */
  background?: BackgroundResult;
}

export class ShellTool implements Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly interpreter: boolean;
  readonly #o: ShellToolOptions;
  readonly #now: () => number;

  constructor(o: ShellToolOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.name = o.binary;
    this.interpreter = INTERPRETERS.has(o.binary);
    const later = detachPromise(o.graceSecs, o.background ?? "delivered");
    this.description = this.interpreter
      ? `Run a ${o.binary} command line in the workdir (\`${o.binary} -c <command>\`). Returns the ` +
        `exit code, stdout and stderr; a non-zero exit code is a result, not a failure. ${later}`
      : `Run \`${o.binary}\` with arguments in the workdir. \`command\` holds the arguments only ` +
        `(no shell: quotes group words, nothing is expanded, no pipes or redirections). Returns ` +
        `the exit code, stdout and stderr. ${later}`;
    this.inputSchema = {
      type: "object",
      properties: {
        command: {
          type: "string",
          description: this.interpreter
            ? `The script line ${o.binary} runs with -c.`
            : `The arguments to ${o.binary}, as on a command line.`,
        },
      },
      required: ["command"],
      additionalProperties: false,
    };
  }

  async call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const started = this.#now();
    const command = input.command;
    if (typeof command !== "string") {
      return notReached(`${this.name}: \`command\` must be a string, got ${typeName(command)}`);
    }
    let args: string[];
    try {
      args = this.interpreter ? ["-c", command] : splitShellWords(command);
    } catch (e) {
      if (!(e instanceof ShellWordsError)) throw e;
      return notReached(
        `${this.name}: cannot split the arguments: ${e.message} (this tool runs no shell; ` +
          `quote with matching ' or ")`,
      );
    }
    const shown = this.interpreter
      ? `$ ${command}`
      : `$ ${[this.name, command.trim()].filter(Boolean).join(" ")}`;
    const binary = resolveOnPath(this.name, this.#o.env?.PATH ?? Deno.env.get("PATH") ?? "");
    if (!binary) {
      return notReached(
        `${this.name}: cannot run: '${this.name}' was not found on PATH; it is in ` +
          `capabilities.shell.allow but not installed on this machine`,
      );
    }
    if (ctx.signal.aborted) return notReached(`${shown}\ncanceled before it started`);
    const home = `${ctx.workdir}/${CAPSULE_HOME}`;
    let spawned: Spawned;
    try {
      await Deno.mkdir(home, { recursive: true });
      spawned = spawnCaptured(binary, {
        args,
        cwd: ctx.workdir,
        env: { ...(this.#o.env ?? shellEnv()), HOME: home },
        clearEnv: true,
        containment: ctx.containment,
      });
    } catch (e) {
      return notReached(`${this.name}: cannot run ${binary}: ${errorMessage(e)}`);
    }
    const run = { binary, command };

    const graceMs = Math.max(0, this.#o.graceSecs * 1000);
    const outcome = await firstOf(spawned.status, graceMs, ctx.signal);
    if (outcome === "aborted") {
      await terminate(spawned, this.#o.killGraceMs ?? KILL_GRACE_MS);
      await spawned.finished;
      return {
        ...notReached(`${shown}\ncanceled: the command was stopped because the task was canceled`),
        shell: { ...run, exitCode: null, ...sizes(spawned) },
      };
    }
    if (outcome === "grace") {
      const detached = await this.#detach(spawned, run, started, graceMs, shown, ctx);
      if (detached) return detached;
    }
    const st = await spawned.finished;
    const exitCode = exitCodeOf(st);
    const { text, truncated } = await this.#format(shown, exitCode, spawned, ctx.workdir);
    return {
      content: text,
      fenceSource: null,
      isError: false,
      exitCode,
      truncated,
      durationMs: this.#now() - started,
      images: [],
      shell: { ...run, exitCode, ...sizes(spawned) },
    };
  }

  /** The result text; streams over 16 KiB are cut and the whole text goes to a log file. */
  async #format(
    shown: string,
    exitCode: number,
    s: Spawned,
    workdir: string,
  ): Promise<{ text: string; truncated: boolean }> {
    const over = (c: StreamCapture) => c.bytes > TRUNCATE_BYTES;
    if (!over(s.stdout) && !over(s.stderr)) {
      return {
        text: shellText(shown, exitCode, decode(s.stdout.data()), decode(s.stderr.data())),
        truncated: false,
      };
    }
    const full = shellText(shown, exitCode, whole(s.stdout), whole(s.stderr));
    let logPath: string;
    try {
      logPath = await writeOutputLog(workdir, "shell", this.#now(), full);
    } catch (e) {
      logPath = `(not written: ${errorMessage(e)})`;
    }
    const part = (c: StreamCapture, name: string) =>
      over(c)
        ? withNewline(headUtf8(c.data(), TRUNCATE_BYTES)) +
          `[${name} truncated: the first ${TRUNCATE_BYTES} of ${c.bytes} bytes are shown; ` +
          `full output in ${logPath}]\n`
        : decode(c.data());
    return {
      text: shellText(shown, exitCode, part(s.stdout, "stdout"), part(s.stderr, "stderr")),
      truncated: true,
    };
  }

  /**
   * Moves a running command to the background: its output so far and from now on goes to
   * `logs/<work id>.log`. Returns null when the command ended while the log was being opened
   * (it then reports in the foreground like any other).
   */
  async #detach(
    s: Spawned,
    run: { binary: string; command: string },
    started: number,
    graceMs: number,
    shown: string,
    ctx: ToolContext,
  ): Promise<ToolResult | null> {
    let ended = false;
    s.status.then(() => (ended = true));
    const workId = newId("wrk");
    const outputPath = `logs/${workId}.log`;
    let log: FileAppender;
    try {
      await Deno.mkdir(`${ctx.workdir}/logs`, { recursive: true });
      log = await FileAppender.open(`${ctx.workdir}/${outputPath}`);
    } catch {
      return null; // no log file, no background: the command reports in the foreground
    }
    if (ended) {
      await log.close();
      await Deno.remove(log.path).catch(() => {});
      return null;
    }
    const detachedAtMs = this.#now();
    const stdoutSoFar = s.stdout.bytes;
    const stderrSoFar = s.stderr.bytes;
    s.stdout.redirect((c) => log.write(c));
    s.stderr.redirect((c) => log.write(c));
    const done: Promise<DetachedOutcome> = s.finished.then(async (st) => {
      await log.close();
      return {
        exitCode: exitCodeOf(st),
        durationMs: this.#now() - started,
        outputPath,
        outputBytes: log.written,
      };
    });
    this.#o.registry.add(
      {
        workId,
        ...run,
        startedAtMs: started,
        detachedAtMs,
        pid: s.pid,
        outputPath,
        taskId: ctx.taskId,
        contextId: ctx.contextId,
      },
      { status: s.status, done, release: s.release },
    );
    const content = `${shown}\n` +
      `Still running after ${secs(graceMs)}: moved to the background as ${workId}.\n` +
      detachedNote(outputPath, this.#o.background ?? "delivered");
    return {
      content,
      fenceSource: null,
      isError: false,
      exitCode: null,
      truncated: false,
      durationMs: this.#now() - started,
      images: [],
      shell: {
        ...run,
        exitCode: null,
        stdoutBytes: stdoutSoFar,
        stderrBytes: stderrSoFar,
        detached: { workId, graceMs, done },
      },
    };
  }
}

/**
 * The text the model reads (docs/tools.md): `$ …`, `Exit code: N`, `Stdout:` and its text, and
 * `Stderr:` and its text after a blank line when the command wrote any (docs/protocol.md "Frames":
 * the artifact example shows no `Stderr:` for a command that wrote none).
 */
export function shellText(shown: string, exitCode: number, stdout: string, stderr: string): string {
  let text = `${shown}\nExit code: ${exitCode}\nStdout:\n${withNewline(stdout)}`;
  if (stderr !== "") text += `\nStderr:\n${withNewline(stderr)}`;
  return text;
}

function whole(c: StreamCapture): string {
  const text = decode(c.data());
  return c.clipped ? withNewline(text) + `[${c.bytes - c.kept} more bytes were not kept]\n` : text;
}

function sizes(s: Spawned): Pick<ShellRun, "stdoutBytes" | "stderrBytes"> {
  return { stdoutBytes: s.stdout.bytes, stderrBytes: s.stderr.bytes };
}

function typeName(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  return Array.isArray(v) ? "an array" : `a ${typeof v}`;
}

function secs(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** Which happens first: the exit, the grace period running out, or the cancel. */
function firstOf(
  status: Promise<unknown>,
  graceMs: number,
  signal: AbortSignal,
): Promise<"exited" | "grace" | "aborted"> {
  // A cancel that came while the command was being spawned (the await on mkdir) has already fired
  // its event: without this check the command would run on to its grace period.
  if (signal.aborted) return Promise.resolve("aborted");
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish("grace"), graceMs);
    const onAbort = () => finish("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    status.then(() => finish("exited"));
    function finish(v: "exited" | "grace" | "aborted") {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(v);
    }
  });
}
