/**
 * What `mur run` will start, decided before anything is started (README "Running a capsule:
 * `mur run`"): flags + the loaded manifest + the environment → a `LaunchPlan`. Pure: it reads no
 * file, opens nothing and prints nothing (its warnings are lines the caller prints), so every
 * decision of a launch is tested without a process (tests/run/launch_plan_test.ts). The assembly
 * (run_assembly.ts) builds the capsule from it; run.ts runs that.
 */
import { type ContainmentClass, isContainmentClass } from "../containment/classes.ts";
import { MurError, warningLine } from "../errors.ts";
import type { Manifest, SpawnTarget } from "../manifest/types.ts";
import { backgroundResult, takesTasks } from "../session/lifecycle.ts";
import type { BackgroundResult } from "../tools/background.ts";
import type { RunFlags } from "./run_inputs.ts";
import { crewCallees } from "../crew/calls/crew_file.ts";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Where the launch's own file errors point: the user's --workdir, or the session folder. */
export type WorkdirSource = "--workdir" | "the session folder";

export interface LaunchPlan {
  /** The manifest with the lifecycle flags applied (a copy: the loaded one is not changed). */
  manifest: Manifest;
  bind: string;
  port: number;
  /** `--workdir`, when given. */
  workdirArg?: string;
  workdirSource: WorkdirSource;
  /** `--task` as given (a file's path or the text), read once the workdir exists. */
  taskArg?: string;
  /** `--context`: the launch task's context id. */
  contextId?: string;
  /** `--resume`: the session address whose context the launch task continues. */
  resumeFrom?: string;
  /** A harness (transport: process) is made in the workdir; a per-turn driver before it. */
  harness: boolean;
  /** ms to wait for a first task (`MURMUR_A2A_TIMEOUT_SECS`, default 30 s). */
  idleTimeoutMs: number;
  /** `MURMUR_HEARTBEAT_MS` (default 15 s). */
  heartbeatMs: number;
  /** Push notifications: the manifest turns them on and the capsule takes tasks. */
  push: boolean;
  /** `MURMUR_PUSH_RETRY_BASE_MS`, when a positive number. */
  pushRetryBaseMs?: number;
  /** What a detached command's result becomes (src/session/lifecycle.ts). */
  background: BackgroundResult;
  /** The session tools this capsule offers besides the manifest's (docs/crews.md, "Tools"). */
  requestInput: boolean;
  /** A crew member's callees (`MURMUR_CREW_CALLEES`) and its crew file (`MURMUR_CREW_FILE`). */
  callees: string[];
  crewFile: string | undefined;
  /** `capabilities.spawn.allow`: the manifests delegate-task may start. */
  spawnTargets: SpawnTarget[];
  /** `MURMUR_DEBUG_SUBSCRIPTIONS`: a stderr line per change of the subscription count. */
  debugSubscriptions: boolean;
  /** The manifest has a `cluster:` block: the publisher is loaded. */
  cluster: boolean;
  json: boolean;
  verbose: boolean;
  /** Lines to print on stderr before the launch goes on. */
  warnings: string[];
  /** `--containment`: raises the manifest's floor (docs/containment.md). */
  containment?: ContainmentClass;
}

type Env = (name: string) => string | undefined;

/** The lifecycle flags over the manifest's lifecycle (run_inputs.ts checked their values). */
function withOverrides(m: Manifest, v: RunFlags): Manifest {
  const lifecycle = { ...m.lifecycle };
  const acc = v["lifecycle-task-acceptance"];
  if (acc === "none" || acc === "single" || acc === "queue") lifecycle.taskAcceptance = acc;
  const after = v["lifecycle-after-task"];
  if (after === "exit" || after === "sleep") lifecycle.afterTask = after;
  return { ...m, lifecycle };
}

export function planLaunch(v: RunFlags, loaded: Manifest, env: Env): LaunchPlan {
  if (v.resume !== undefined && v.context !== undefined) {
    throw new MurError(
      "E-RUN-015",
      "--resume and --context name the same thing two ways",
      "drop --context: a resumed session continues the context of the session it resumes",
    );
  }
  const manifest = withOverrides(loaded, v);
  const bind = v.bind ?? "127.0.0.1";
  const warnings: string[] = [];
  if (!LOOPBACK.test(bind) && !manifest.network.authentication) {
    warnings.push(warningLine(
      "W-SEC-032",
      `the door is bound to ${bind} and network.authentication is not declared — any caller that reaches it can call every method`,
    ));
  }
  const callees = crewCallees(env);
  // The heartbeat keeps its old reading: a value that is not a positive number means 15 s.
  const heartbeatMs = Number(env("MURMUR_HEARTBEAT_MS") ?? "15000") || 15000;
  const idleSecs = Number(env("MURMUR_A2A_TIMEOUT_SECS") ?? "30");
  const pushRetry = Number(env("MURMUR_PUSH_RETRY_BASE_MS"));
  return {
    manifest,
    bind,
    port: v.port !== undefined ? Number(v.port) : manifest.network.internalPort ?? 0,
    ...(v.workdir !== undefined ? { workdirArg: v.workdir } : {}),
    workdirSource: v.workdir !== undefined ? "--workdir" : "the session folder",
    ...(v.task !== undefined ? { taskArg: v.task } : {}),
    ...(v.context !== undefined ? { contextId: v.context } : {}),
    ...(v.resume !== undefined ? { resumeFrom: v.resume } : {}),
    harness: manifest.inference.transport === "process",
    idleTimeoutMs: (Number.isFinite(idleSecs) ? idleSecs : 30) * 1000,
    heartbeatMs,
    push: manifest.network.pushNotifications !== undefined && takesTasks(manifest.lifecycle),
    ...(Number.isFinite(pushRetry) && pushRetry > 0 ? { pushRetryBaseMs: pushRetry } : {}),
    background: backgroundResult(manifest.lifecycle),
    requestInput: manifest.tools.some((t) => t.kind === "builtin" && t.name === "request-input"),
    callees,
    crewFile: env("MURMUR_CREW_FILE"),
    spawnTargets: manifest.capabilities.spawn?.allow ?? [],
    debugSubscriptions: Boolean(env("MURMUR_DEBUG_SUBSCRIPTIONS")),
    cluster: manifest.cluster !== undefined,
    json: v.json === true,
    verbose: v.verbose === true,
    warnings,
    ...(isContainmentClass(v.containment) ? { containment: v.containment } : {}),
  };
}
