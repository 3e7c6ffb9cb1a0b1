/**
 * `lifecycle.done_check` (docs/hooks.md "keep_working and done_check"): a shell command that must
 * pass before a task completes. It runs in the workdir after an attempt completes (and after
 * keep_working has had its say), before the on-task-end hooks. A non-zero exit reopens the task
 * with the command's output as feedback, up to `done_check.limit` times.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import { errorMessage } from "../errors.ts";
import { exitCodeOf, spawnCaptured, terminate } from "../tools/process.ts";
import { shellEnv } from "../tools/shell_env.ts";

/** How long one run may take before it is killed and counts as failed. */
export const DONE_CHECK_TIMEOUT_MS = 10 * 60_000;
/** Output the model gets back as feedback: the last bytes, where test failures usually are. */
export const FEEDBACK_BYTES = 16 * 1024;

export interface DoneCheckRun {
  passed: boolean;
  /** Exit code (128 + signal when killed); null when it could not be started. */
  exitCode: number | null;
  /** stdout then stderr, the tail of it (FEEDBACK_BYTES). */
  output: string;
  outputBytes: number;
  durationMs: number;
  /** Why it did not run to an exit code of its own (spawn failure, timeout, cancel). */
  note?: string;
}

export async function runDoneCheck(
  command: string,
  cwd: string,
  signal: AbortSignal,
  containment?: ContainmentPolicy,
  timeoutMs = DONE_CHECK_TIMEOUT_MS,
): Promise<DoneCheckRun> {
  const started = Date.now();
  let s;
  try {
    s = spawnCaptured("sh", {
      args: ["-c", command],
      cwd,
      env: shellEnv(),
      containment,
    });
  } catch (e) {
    return {
      passed: false,
      exitCode: null,
      output: "",
      outputBytes: 0,
      durationMs: Date.now() - started,
      note: `it could not be started: ${errorMessage(e)}`,
    };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => terminate(s);
  signal.addEventListener("abort", onAbort, { once: true });
  const ended = await Promise.race([
    s.status.then(() => "exited" as const),
    new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (ended === "timeout") await terminate(s, 500);
  const st = await s.finished;
  signal.removeEventListener("abort", onAbort);
  const dec = new TextDecoder();
  const all = dec.decode(s.stdout.data()) + dec.decode(s.stderr.data());
  const exitCode = exitCodeOf(st);
  return {
    passed: ended === "exited" && exitCode === 0 && !signal.aborted,
    exitCode,
    output: all.length > FEEDBACK_BYTES ? all.slice(all.length - FEEDBACK_BYTES) : all,
    outputBytes: s.stdout.bytes + s.stderr.bytes,
    durationMs: Date.now() - started,
    ...(ended === "timeout" ? { note: `it ran longer than ${timeoutMs} ms and was killed` } : {}),
  };
}
