/**
 * One attempt of a task run by a harness, knowing no particular CLI: resolve the binary, probe
 * its version, plan the session and the launch (launch.ts), start the tool bridge, spawn, and
 * supervise the run (supervisor.ts) while the turn tracker turns the dialect's events into
 * `HarnessPart`s, until exactly one `result` (outcome.ts) on every path out.
 */
import { harnessMcpServers } from "./mcp_servers.ts";
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import { errorMessage } from "../../errors.ts";
import { BRIDGE_SERVER_NAME, ToolBridge } from "./bridge.ts";
import { CallOrder } from "./call_order.ts";
import { HarnessProcess } from "./harness_process.ts";
import { materialize, planSession, startFields, storedSessionKey } from "./launch.ts";
import { harnessEnv, probeVersion, resolveBinary, type VersionProbe } from "./launch_env.ts";
import { canceled, classifyOutcome, failed } from "./outcome.ts";
import type { HarnessSessionStore } from "./sessions.ts";
import { type HarnessLimits, Supervisor } from "./supervisor.ts";
import { trace, TurnTracker } from "./turn_tracker.ts";
import type {
  AttemptOutcome,
  AttemptRequest,
  HarnessDialect,
  HarnessFailureKind,
  HarnessPart,
  HarnessTelemetry,
  LaunchPlan,
} from "./types.ts";

/** How long a bridge call waits for the harness to announce it on stdout (call_order.ts). */
const CALL_ORDER_GRACE_MS = 2_000;

export interface AttemptContext {
  dialect: HarnessDialect;
  driverName: string;
  command?: string;
  env?: string[];
  model?: string;
  /** The tools' cwd; the harness runs there. */
  workdir: string;
  /** Where a relative `inference.command` resolves. */
  baseDir: string;
  hostEnv: Record<string, string>;
  store: HarnessSessionStore;
  limits: HarnessLimits;
  now: () => number;
  newSessionId: () => string;
  /** Version probes by binary path, shared across attempts. */
  versions: Map<string, VersionProbe>;
  /** The session's OpenTelemetry export, for a task: what the harness joins (telemetry.ts). */
  telemetry?: (taskId: string) => HarnessTelemetry | undefined;
  /** The manifest's `mcp_servers:`, handed to the harness (docs/mcp.md). */
  mcpServers?: McpServerConfig[];
}

type Describe = ReturnType<HarnessDialect["describe"]>;
type Binary = Awaited<ReturnType<typeof resolveBinary>>;
type SessionPlan = ReturnType<typeof planSession>;
type Bridge = ToolBridge | null;

/** What an attempt holds until it ends: released on every path out (`release`). */
interface Held {
  supervisor: Supervisor;
  callOrder: CallOrder;
  bridge: Bridge;
  filesDir: string | null;
  proc: HarnessProcess | null;
}

/**
 * The attempt, step by step: the binary and its version, the session plan, the tool bridge, the
 * launch plan and its files, the spawn, the supervised run, the outcome. Each step that can fail
 * before the harness runs ends the attempt with its `harness_failed` line and one result.
 */
export async function* runAttempt(
  ctx: AttemptContext,
  req: AttemptRequest,
  signal: AbortSignal,
): AsyncGenerator<HarnessPart> {
  const desc = ctx.dialect.describe();
  if (signal.aborted) {
    yield { type: "result", outcome: canceled(false, false), turns: 0, sessionId: null };
    return;
  }
  const found = yield* findHarness(ctx, desc);
  if (!found) return;
  const { session, remember } = sessionFor(ctx, req, desc);
  const held: Held = {
    supervisor: new Supervisor(ctx.limits, signal),
    callOrder: new CallOrder(CALL_ORDER_GRACE_MS),
    bridge: null,
    filesDir: null,
    proc: null,
  };
  const started = ctx.now();
  try {
    held.bridge = startBridge(ctx, req, held);
    const plan = yield* planLaunch(ctx, req, held.bridge, session);
    if (!plan) return;
    held.filesDir = await writeLaunchFiles(plan);
    const { args, env } = materialize(plan, found.baseEnv, held.filesDir);
    if (signal.aborted) {
      yield { type: "result", outcome: canceled(false, false), turns: 0, sessionId: session.id };
      return;
    }
    held.proc = yield* spawnHarness(ctx, found.binary, plan, args, env, session);
    if (!held.proc) return;
    yield trace(
      "harness_start",
      startFields({
        driverName: ctx.driverName,
        desc,
        binary: found.binary,
        pid: held.proc.pid,
        probe: found.probe,
        session,
        plan,
        args,
        env,
        bridgeTools: held.bridge?.toolNames ?? [],
      }),
    );
    yield* supervise(ctx, req, desc, held, plan, session, remember, started);
  } finally {
    await release(held);
  }
}

/** The binary on PATH (or `inference.command`), its environment, and its version probe. */
async function* findHarness(
  ctx: AttemptContext,
  desc: Describe,
): AsyncGenerator<
  HarnessPart,
  { binary: Binary; probe: VersionProbe; baseEnv: Record<string, string> } | null
> {
  const baseEnv = harnessEnv(ctx.hostEnv, ctx.env, desc.defaultEnv, desc.envDefaults);
  let binary;
  try {
    binary = await resolveBinary(ctx.command, desc.binary, baseEnv.PATH ?? "", ctx.baseDir);
  } catch (e) {
    yield* failedBeforeStart("E-RUN-006", "not-found", errorMessage(e), null);
    return null;
  }
  let probe = ctx.versions.get(binary.path);
  if (!probe) {
    probe = await probeVersion(
      binary.path,
      desc.versionArgs,
      baseEnv,
      ctx.workdir,
      desc.testedVersions,
    );
    ctx.versions.set(binary.path, probe);
  }
  if (!probe.tested) {
    yield trace("harness_warning", {
      code: "W-RUN-002",
      message: `harness version ${probe.version ?? "unknown"} of ${desc.harness} is untested ` +
        `(tested: ${desc.testedVersions.join(", ")})`,
    });
  }
  return { binary, probe, baseEnv };
}

/** The session plan (docs/process-transport.md): new, resumed, and how the id is remembered. */
function sessionFor(ctx: AttemptContext, req: AttemptRequest, desc: Describe): {
  session: SessionPlan;
  remember: (id: string) => Promise<void>;
} {
  const key = storedSessionKey(req);
  const known = key === null
    ? null
    : "task" in key
    ? ctx.store.getTask(key.task)
    : ctx.store.getContext(key.context);
  const session = planSession(known, desc, ctx.newSessionId);
  const remember = async (id: string) => {
    ctx.store.setTask(req.task.id, id);
    if (req.conversation === "threaded" || req.resume === "context") {
      await ctx.store.setContext(req.task.contextId, id);
    }
  };
  return { session, remember };
}

/** The MCP tool bridge, when the task has tools to offer. */
function startBridge(ctx: AttemptContext, req: AttemptRequest, held: Held): Bridge {
  if (!req.tools.length) return null;
  return ToolBridge.start({
    tools: req.tools,
    dispatch: req.dispatch,
    ready: (name) => held.callOrder.ready(name),
    now: ctx.now,
    onActivity: () => held.supervisor.activity(),
    onInFlight: (d) => held.supervisor.inFlight(d),
  });
}

/** The dialect's launch plan; a dialect that cannot plan fails the attempt (E-RUN-034). */
function* planLaunch(
  ctx: AttemptContext,
  req: AttemptRequest,
  bridge: Bridge,
  session: SessionPlan,
): Generator<HarnessPart, LaunchPlan | null> {
  try {
    return ctx.dialect.launch({
      model: ctx.model,
      // The session composed it: the [Capsule] block first (src/drivers/capsule_block.ts).
      systemPrompt: req.system ?? "",
      bridge: bridge
        ? {
          serverName: BRIDGE_SERVER_NAME,
          url: bridge.url,
          token: bridge.token,
          toolNames: bridge.toolNames,
        }
        : undefined,
      session,
      prompt: req.prompt,
      telemetry: ctx.telemetry?.(req.task.id),
      ...(ctx.mcpServers?.length &&
        { mcpServers: harnessMcpServers(ctx.mcpServers, ctx.hostEnv) }),
    });
  } catch (e) {
    const message = `the process driver could not plan the launch: ${errorMessage(e)}`;
    yield* failedBeforeStart("E-RUN-034", "driver-error", message, session.id);
    return null;
  }
}

/** The plan's files in a private directory outside the workdir: the tools cannot read a token. */
async function writeLaunchFiles(plan: LaunchPlan): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-harness-" });
  await Deno.chmod(dir, 0o700);
  for (const f of plan.files) {
    await Deno.writeTextFile(`${dir}/${f.name}`, f.contents, { mode: 0o600 });
  }
  return dir;
}

async function* spawnHarness(
  ctx: AttemptContext,
  binary: Binary,
  plan: LaunchPlan,
  args: string[],
  env: Record<string, string>,
  session: SessionPlan,
): AsyncGenerator<HarnessPart, HarnessProcess | null> {
  try {
    return await HarnessProcess.spawn({
      binary: binary.path,
      args,
      env,
      cwd: ctx.workdir,
      stdin: plan.stdin,
      keepStdinOpen: plan.keepStdinOpen,
    });
  } catch (e) {
    const message = `the harness '${binary.path}' could not be started: ${errorMessage(e)}`;
    yield* failedBeforeStart("E-RUN-034", "driver-error", message, session.id);
    return null;
  }
}

/** The supervised run (supervisor.ts + turn_tracker.ts), then how it ended (outcome.ts). */
async function* supervise(
  ctx: AttemptContext,
  req: AttemptRequest,
  desc: Describe,
  held: Held,
  plan: LaunchPlan,
  session: SessionPlan,
  remember: (id: string) => Promise<void>,
  started: number,
): AsyncGenerator<HarnessPart> {
  const { bridge, proc } = held;
  const tracker = new TurnTracker({
    turnsUsed: req.turnsUsed,
    maxTurns: req.maxTurns,
    now: ctx.now,
    progressIntervalMs: ctx.limits.progressIntervalMs,
    sessionId: session.id,
    matchCall: bridge
      ? (id, name, args) =>
        bridge.takeById(id) ??
          (name && args !== undefined ? bridge.takeByNameArgs(name, args) : null)
      : undefined,
  });
  const parser = ctx.dialect.createParser({ serverName: BRIDGE_SERVER_NAME });
  const end = yield* held.supervisor.run(
    proc!,
    parser,
    tracker,
    { method: desc.interrupt, plan },
    remember,
    (id, name) => held.callOrder.announce(id, name),
    desc.announcesCallBy,
  );
  const outcome = classifyOutcome(ctx.dialect, {
    stopped: end.stopped,
    interrupted: end.interrupted,
    killedOnCancel: end.killedOnCancel,
    terminal: tracker.terminal,
    exit: { code: end.status.code, signal: end.status.signal, stderrTail: end.stderrTail },
    resumedSilently: session.mode === "resume" && !tracker.sawSession,
    sessionId: tracker.sessionId,
    lastSegmentText: tracker.lastSegmentText,
  });
  if (outcome.status === "completed") {
    tracker.rememberPlannedAtEnd();
    const id = tracker.takeRemember();
    if (id) await remember(id);
  }
  if (outcome.status === "failed") yield failedTrace(outcome);
  for (const id of tracker.openCalls) {
    yield trace("harness_note", { text: `a tool call never got a result: ${id}` });
  }
  yield trace("harness_exit", {
    code: end.status.code,
    signal: end.status.signal,
    cause: end.exitCause,
    killed: proc!.killed,
    duration_ms: ctx.now() - started,
  });
  yield { type: "result", outcome, turns: tracker.turns, sessionId: tracker.sessionId };
}

/** Everything the attempt held, on every path out: timers, the process and its group, files. */
async function release(held: Held): Promise<void> {
  held.supervisor.release();
  const { proc } = held;
  if (proc && !proc.exited) {
    proc.kill();
    await proc.status;
  }
  if (proc) {
    proc.reapGroup();
    await proc.dispose();
  }
  held.callOrder.close();
  if (held.bridge) await held.bridge.close();
  if (held.filesDir) await Deno.remove(held.filesDir, { recursive: true }).catch(() => {});
}

/** A run that failed before the harness started: its `harness_failed` line and its result. */
function* failedBeforeStart(
  code: "E-RUN-006" | "E-RUN-034",
  kind: HarnessFailureKind,
  message: string,
  sessionId: string | null,
): Generator<HarnessPart> {
  const outcome = failed(code, kind, "runtime", message);
  yield failedTrace(outcome);
  yield { type: "result", outcome, turns: 0, sessionId };
}

type Failed = Extract<AttemptOutcome, { status: "failed" }>;

function failedTrace(o: Failed): HarnessPart {
  return trace("harness_failed", { kind: o.kind, message: o.message, source: o.origin });
}
