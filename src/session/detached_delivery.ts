/**
 * What becomes of a shell command that moved to the background (docs/hooks.md "Detached shells"):
 * when it ends while the session is open, a `completion` task under the context it was started
 * from (bg lane, `task_start.source: detached_shell`) and a `shell_completed` line; when the
 * session ends first, one `shell_abandoned` line — with the exit code when the command ended
 * during teardown. Each of the three is also one line on stderr.
 */
import { errorMessage } from "../errors.ts";
import { basename } from "../paths.ts";
import type { DetachedOutcome } from "../tools/types.ts";
import { fence } from "../tools/fence.ts";
import type { DetachedShell } from "./task_run.ts";
import type { TaskRecord } from "./task_record.ts";
import type { TraceWriter } from "../trace_writer.ts";

/** Output of a finished command the completion task carries: its last bytes. */
export const COMPLETION_OUTPUT_BYTES = 16 * 1024;

interface Tracked {
  shell: DetachedShell;
  task: TaskRecord;
  startedAt: number;
  outcome?: DetachedOutcome;
  /** shell_completed or shell_abandoned is written. */
  accounted: boolean;
}

export interface DeliveryDeps {
  trace: TraceWriter;
  sessionEventId(): string;
  workdirRoot: string;
  /** Is the session still taking work it generates (not closing)? */
  open(): boolean;
  /** Enqueues the completion task; returns it. */
  enqueue(text: string, contextId: string): TaskRecord;
  warn(line: string): void;
  bootstrap(line: string): void;
  clock: () => number;
}

export class DetachedDelivery {
  readonly #tracked = new Map<string, Tracked>();

  constructor(private readonly d: DeliveryDeps) {}

  started(task: TaskRecord, shell: DetachedShell): void {
    const t: Tracked = {
      shell,
      task,
      startedAt: this.d.clock() - shell.graceMs,
      accounted: false,
    };
    this.#tracked.set(shell.workId, t);
    this.d.warn(
      `[murmur] shell_detached: ${shell.workId} (${shell.binary} ${shell.command}) still running after ${shell.graceMs} ms; output goes to logs/${shell.workId}.log`,
    );
    shell.done.then((o) => this.#ended(t, o), () => {});
  }

  #ended(t: Tracked, o: DetachedOutcome): void {
    t.outcome = o;
    if (t.accounted || !this.d.open()) return;
    t.accounted = true;
    const { workId, binary, command } = t.shell;
    const completion = this.d.enqueue(this.#text(t, o), t.task.contextId);
    this.d.trace.write("shell_completed", this.d.sessionEventId(), {
      work_id: workId,
      binary,
      command,
      exit_code: o.exitCode,
      duration_ms: o.durationMs,
      output_path: o.outputPath,
      output_bytes: o.outputBytes,
      resource_limit: null,
      status: o.exitCode === 0 ? "ok" : "error",
      completion_task_id: completion.id,
    });
    this.d.warn(
      `[murmur] shell_completed: ${workId} (${binary} ${command}) exited ${o.exitCode} after ${o.durationMs} ms; its result arrives as task ${completion.id}`,
    );
  }

  #text(t: Tracked, o: DetachedOutcome): string {
    let output = "";
    try {
      const bytes = Deno.readFileSync(`${this.d.workdirRoot}/${o.outputPath}`);
      const tail = bytes.length > COMPLETION_OUTPUT_BYTES
        ? bytes.subarray(bytes.length - COMPLETION_OUTPUT_BYTES)
        : bytes;
      output = new TextDecoder().decode(tail);
    } catch (e) {
      output = `(the log could not be read: ${errorMessage(e)})`;
    }
    const cut = o.outputBytes > COMPLETION_OUTPUT_BYTES
      ? ` (the last ${COMPLETION_OUTPUT_BYTES} of ${o.outputBytes} bytes)`
      : "";
    return `The background command ${t.shell.workId} has finished.\n` +
      `Binary: ${t.shell.binary}\nCommand: ${t.shell.command}\n` +
      `Exit code: ${o.exitCode}\nDuration: ${o.durationMs} ms\n` +
      `Output, from ${o.outputPath}${cut}:\n` +
      fence(`tool:${basename(t.shell.binary)}`, output);
  }

  /** Session teardown: every command not yet accounted for is abandoned, once. */
  abandonAll(): void {
    for (const t of this.#tracked.values()) {
      if (t.accounted) continue;
      t.accounted = true;
      const { workId, binary, command } = t.shell;
      const o = t.outcome;
      this.d.trace.write("shell_abandoned", this.d.sessionEventId(), {
        work_id: workId,
        binary,
        command,
        running_ms: o ? o.durationMs : this.d.clock() - t.startedAt,
        ...(o
          ? { exit_code: o.exitCode, output_path: o.outputPath, output_bytes: o.outputBytes }
          : {}),
      });
      const line = o
        ? `[murmur] shell_abandoned: ${workId} (${binary} ${command}) ended with exit code ${o.exitCode} while the session was ending; its result was not delivered (${o.outputPath})`
        : `[murmur] shell_abandoned: ${workId} (${binary} ${command}) was still running when the session ended; its result is lost`;
      this.d.warn(line);
      this.d.bootstrap(line);
    }
  }
}
