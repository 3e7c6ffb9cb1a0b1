/**
 * One call of a hook (docs/hooks.md "How a hook runs"): its command with the event on stdin, in
 * the workdir, under the per-call deadline; the answer read from stdout; a line in the hook's log
 * for every call, and its stderr under it.
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import type { BoundHook, HookConfig } from "../manifest/types.ts";
import type { HookEvent } from "../session/hooks_api.ts";
import { shellEnv } from "../tools/shell_env.ts";
import { narrowEnv } from "../artifact_env.ts";
import { runHookCommand } from "./exec.ts";
import type { HookLog } from "./log.ts";
import { type HookArm, parseHookOutput } from "./output.ts";

/** What one invocation produced. */
export type Outcome =
  | { ok: true; arm: HookArm }
  | { ok: false; kind: "timeout" | "error"; reason: string };

/** One finished call, as an observer hears it (src/otel/: a `capsule.hook` span). */
export interface HookCallRecord {
  hook: string;
  binding: BoundHook["binding"];
  mode: HookConfig["executionMode"];
  durationMs: number;
  /** Wall-clock ms when the call ended. */
  endedAt: number;
  /** The arm it answered (`none`, `reopen-task`, …), or why it failed. */
  answer?: string;
  failure?: string;
  /** The task the event was about, when it names one. */
  taskId?: string;
}

export interface CallSetting {
  sessionId: string;
  /** The session workdir: each hook's cwd (and `MURMUR_WORKDIR`). */
  workdirRoot: string;
  timeoutMs: number;
  /** Hears every finished call; one that throws is ignored (a hook never fails for it). */
  onCall?: (call: HookCallRecord) => void;
  /** What the hook's process runs under (src/containment/); absent: advisory. */
  containment?: ContainmentPolicy;
}

/** Runs the command once; logs the call and its stderr. */
export async function callHook(
  h: BoundHook,
  ev: HookEvent,
  o: CallSetting,
  log: HookLog,
): Promise<Outcome> {
  const input = { event: h.binding, session_id: o.sessionId, ...ev };
  const run = await runHookCommand(h.command, input, {
    cwd: o.workdirRoot,
    timeoutMs: o.timeoutMs,
    containment: o.containment,
    env: {
      // A hook artifact sees only the baseline and its grant (docs/manifest.md "Artifact
      // capabilities"); mur's own MURMUR_* variables come after, so they are always there.
      ...(h.hostEnv ? narrowEnv(shellEnv(), h.hostEnv) : shellEnv()),
      MURMUR_SESSION_ID: o.sessionId,
      MURMUR_HOOK_NAME: h.name,
      MURMUR_WORKDIR: o.workdirRoot,
      ...h.env,
    },
  });
  let out: Outcome;
  switch (run.kind) {
    case "spawn_failed":
      out = { ok: false, kind: "error", reason: run.message };
      break;
    case "timeout":
      out = {
        ok: false,
        kind: "timeout",
        reason: `it did not answer within ${o.timeoutMs} ms and was killed`,
      };
      break;
    case "exited": {
      if (run.code !== 0) {
        out = { ok: false, kind: "error", reason: `it exited with status ${run.code}` };
        break;
      }
      const arm = parseHookOutput(run.stdout);
      out = "unreadable" in arm
        ? { ok: false, kind: "error", reason: arm.unreadable }
        : { ok: true, arm };
    }
  }
  log.line(
    `${h.binding} (${h.executionMode}) ${run.durationMs} ms: ${
      out.ok ? `answered ${out.arm.arm}` : `failed: ${out.reason}`
    }`,
  );
  if (run.kind !== "spawn_failed" && run.stderr.trim() !== "") log.block("stderr", run.stderr);
  try {
    o.onCall?.({
      hook: h.name,
      binding: h.binding,
      mode: h.executionMode,
      durationMs: run.durationMs,
      endedAt: Date.now(),
      ...(out.ok ? { answer: out.arm.arm } : { failure: out.reason }),
      ...("task_id" in ev && typeof ev.task_id === "string" && { taskId: ev.task_id }),
    });
  } catch {
    // an observer's bug is not the hook's failure
  }
  return out;
}
