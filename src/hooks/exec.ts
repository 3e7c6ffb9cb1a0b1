/**
 * Running one hook command for one event (docs/hooks.md "How a hook runs"): the event as one JSON
 * object on stdin, the workdir as cwd, a deadline (30 s), and stdout read back. The process runs in
 * its own group, so a hook that hangs is killed together with whatever it forked.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import { errorMessage } from "../errors.ts";
import { exitCodeOf, spawnCaptured, terminate } from "../tools/process.ts";

/**
 * The hook deadline (docs/hooks.md "How a hook runs"). `MURMUR_HOOK_TIMEOUT_MS` overrides it for
 * tests.
 */
export const HOOK_TIMEOUT_MS = 30_000;

export function hookTimeoutMs(env: (name: string) => string | undefined): number {
  const raw = env("MURMUR_HOOK_TIMEOUT_MS");
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : HOOK_TIMEOUT_MS;
}

export type HookRun =
  | { kind: "exited"; code: number; stdout: string; stderr: string; durationMs: number }
  | { kind: "timeout"; stderr: string; durationMs: number }
  | { kind: "spawn_failed"; message: string; durationMs: number };

const dec = new TextDecoder();
const enc = new TextEncoder();

export async function runHookCommand(
  argv: string[],
  input: Record<string, unknown>,
  opts: {
    cwd: string;
    timeoutMs: number;
    env?: Record<string, string>;
    containment?: ContainmentPolicy;
  },
): Promise<HookRun> {
  const started = Date.now();
  let spawned;
  try {
    spawned = spawnCaptured(argv[0], {
      args: argv.slice(1),
      cwd: opts.cwd,
      env: opts.env,
      // The env given is the whole environment: without this, Deno adds mur's own on top, and the
      // credentials the caller left out (MURMUR_DOOR_TOKEN, provider keys) reach the hook.
      clearEnv: opts.env !== undefined,
      stdin: enc.encode(JSON.stringify(input) + "\n"),
      containment: opts.containment,
    });
  } catch (e) {
    return {
      kind: "spawn_failed",
      message: `cannot run ${argv[0]}: ${errorMessage(e)}`,
      durationMs: Date.now() - started,
    };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = await Promise.race([
    spawned.status.then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), opts.timeoutMs))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    await terminate(spawned, 500);
    await spawned.finished;
    return {
      kind: "timeout",
      stderr: dec.decode(spawned.stderr.data()),
      durationMs: Date.now() - started,
    };
  }
  const st = await spawned.finished;
  return {
    kind: "exited",
    code: exitCodeOf(st),
    stdout: dec.decode(spawned.stdout.data()),
    stderr: dec.decode(spawned.stderr.data()),
    durationMs: Date.now() - started,
  };
}
