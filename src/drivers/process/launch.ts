/**
 * Launch preparation, pure: which harness session a run uses (docs/process-transport.md), the
 * dialect's launch plan turned into the argv and
 * environment of the spawn, and the `harness_start` trace fields. The runner (runner.ts) does the
 * effects around it: the binary lookup, the version probe, the private files, the spawn.
 */
import type { HarnessTraceFields } from "../../trace_events.ts";
import type { ResolvedBinary, VersionProbe } from "./launch_env.ts";
import type { AttemptRequest, HarnessDescription, LaunchPlan } from "./types.ts";

export interface SessionPlan {
  id: string | null;
  mode: "new" | "resume";
}

/**
 * `known`: the session stored for the task (a reopened attempt) or the context (a threaded one),
 * as `req.resume` asks. A new session's id is minted here when the harness wants the runtime's.
 */
export function planSession(
  known: string | null,
  desc: HarnessDescription,
  newSessionId: () => string,
): SessionPlan {
  if (known) return { id: known, mode: "resume" };
  return { id: desc.runtimeMintsSessionIds ? newSessionId() : null, mode: "new" };
}

/** Which stored session `req` asks for: the task's, the context's, or none. */
export function storedSessionKey(
  req: AttemptRequest,
): { task: string } | { context: string } | null {
  if (req.resume === "task") return { task: req.task.id };
  if (req.resume === "context") return { context: req.task.contextId };
  return null;
}

/** The plan's argv and environment with `{files_dir}` replaced; the plan's env wins. */
export function materialize(
  plan: LaunchPlan,
  baseEnv: Record<string, string>,
  filesDir: string,
): { args: string[]; env: Record<string, string> } {
  const sub = (s: string) => s.replaceAll("{files_dir}", filesDir);
  const env = { ...baseEnv };
  for (const [k, v] of Object.entries(plan.env)) env[k] = sub(v);
  return { args: plan.args.map(sub), env };
}

/** The `harness_start` line: names and counts, never argument or environment values. */
export function startFields(x: {
  driverName: string;
  desc: HarnessDescription;
  binary: ResolvedBinary;
  pid: number;
  probe: VersionProbe;
  session: SessionPlan;
  plan: LaunchPlan;
  args: string[];
  env: Record<string, string>;
  bridgeTools: string[];
}): HarnessTraceFields["harness_start"] {
  return {
    driver: x.driverName,
    harness: x.desc.harness,
    binary: x.binary.path,
    binary_source: x.binary.source,
    pid: x.pid,
    harness_version: x.probe.version,
    version_tested: x.probe.tested,
    harness_session_id: x.session.id,
    session_mode: x.session.mode,
    args_count: x.args.length,
    env_names: Object.keys(x.env).sort(),
    files: x.plan.files.map((f) => f.name),
    bridge_tools: x.bridgeTools,
    stdin_bytes: x.plan.stdin ? new TextEncoder().encode(x.plan.stdin).length : 0,
    keep_stdin_open: x.plan.keepStdinOpen,
  };
}
