/**
 * The capsule `mur run` starts, built from its plan (launch_plan.ts): driver, workdir and its lock,
 * OpenTelemetry, tools and hooks, the session, push notifications, the session's own tools,
 * MURMUR.md, the cluster's token key and the door. Each step is one function, in the order whose
 * failures leave least behind: a per-turn driver before the workdir, MURMUR.md and the door before
 * the session begins (a port in use fails the launch with an empty trace).
 */
import { dataArtifact } from "../session/published_files.ts";
import { startDoor } from "../door/server.ts";
import { createDriver } from "../drivers/mod.ts";
import type { AnyDriver } from "../drivers/types.ts";
import { isHarnessDriver } from "../drivers/harness.ts";
import { warningLine } from "../errors.ts";
import { newId } from "../ids.ts";
import { lazyImport } from "../lazy.ts";
import type { Manifest } from "../manifest/types.ts";
import { otelConfig } from "../otel/config.ts";
import type { OtelExport } from "../otel/export.ts";
import { CommandHooks, hookTimeoutMs } from "../hooks/mod.ts";
import { pathError } from "../path_errors.ts";
import type { PushNotifications } from "../push/push.ts";
import type { Membership } from "../crew/formation/membership.ts";
import { requestInputTool } from "../session/request_input.ts";
import { publishTool } from "../session/publish.ts";
import { DEFAULTS } from "../manifest/schema.ts";
import type { ResumePlan } from "../session/resume.ts";
import { Session } from "../session/session.ts";
import { openWorkdir, type Workdir, writeMurmurMd } from "../session/workdir.ts";
import type { WorkdirLock } from "../session/workdir_lock.ts";
import { fence } from "../tools/fence.ts";
import { ToolBox } from "../tools/toolbox.ts";
import type { Tool } from "../tools/types.ts";
import type { LaunchPlan } from "./launch_plan.ts";
import { stageCapsule } from "../stage/stage.ts";
import type { RuntimeArtifactField } from "../trace_events.ts";
import { type Inventory, inventory } from "../stage/inventory.ts";
import { readTask } from "./run_inputs.ts";
import type { SourcesLaunch } from "./run_sources.ts";
import type { A2aCallRecord } from "../a2a/call_record.ts";
import { watchFaults } from "./run_endings.ts";
import {
  chooseContainment,
  type ContainmentChoice,
  type ContainmentRuntime,
  containmentRuntime,
} from "../containment/launch.ts";
import type { ContainmentPolicy } from "../containment/policy.ts";
import { containmentConfig } from "../manifest/containment_keys.ts";
import type { SessionContainment } from "../session/session_api.ts";

type ClusterModule = typeof import("../cluster/publish_session.ts");
type Door = Awaited<ReturnType<typeof startDoor>>;

/** Everything a launch built, for run.ts to start, run and take down. */
export interface Capsule {
  plan: LaunchPlan;
  sessionId: string;
  session: Session;
  workdir: Workdir;
  lock: WorkdirLock;
  driver: AnyDriver;
  toolbox: ToolBox;
  otel: OtelExport | null;
  push: PushNotifications | null;
  door: Door;
  /** The launch task's text (`--task`, else the workdir's task.md), or null. */
  taskText: string | null;
  /** The launch task's id, once the session took it (run.ts `start`). */
  launchTaskId?: string;
  /** The cluster's module and the token key the door shares, with `cluster:`. */
  cluster: { module: ClusterModule; tokenKey: Uint8Array | undefined } | null;
  /** Resolves on the first error nobody caught (run_endings.ts watchFaults). */
  afterFault: Promise<void>;
  /** Lets the door's requests through (they wait until the launch task is registered). */
  opened(): void;
  /** What the capsule offers (src/stage/inventory.ts): MURMUR.md and `-v` list it. */
  inventory: Inventory;
  /** Writes MURMUR.md again, now with the door's address. */
  murmurMd(url: string | null): void;
  /** The manifest's tool sources, started (docs/mcp.md), or null without any. */
  mcp: SourcesLaunch | null;
  /** The class the session's processes run under, and the `-v` line saying so. */
  containment: ContainmentChoice;
  /** Removes the containment's files and pids group once the session has ended. */
  closeContainment(): void;
}

/** What the launch brings besides its plan. */
export interface AssemblyInputs {
  resume?: ResumePlan;
  membership: Membership | null;
}

const env = (name: string) => Deno.env.get(name);
const warn = (line: string) => console.error(line);

// Why long: the launch's order is the point (what a failure leaves behind, module doc), one step a
// line or two; split, the order would be spread over several functions.
export async function assembleCapsule(plan: LaunchPlan, inputs: AssemblyInputs): Promise<Capsule> {
  const { manifest } = plan;
  // A per-turn driver is made before the workdir, so a bad one leaves none behind; a harness
  // (transport: process) runs in the workdir, so it is made once the workdir exists.
  const turnDriver = plan.harness ? null : await createDriver(manifest);
  const sessionId = newId("ses");
  // The floor is checked before anything is made: E-CAP-003 leaves no workdir behind.
  const choice = await chooseContainment(manifest.containment, plan.containment, env);
  for (const w of choice.warnings) warn(w);
  // One session per workdir: refused (E-RUN-043) while a live session holds it. The lock goes
  // when the session ends, and on every other way out of the process (the unload event).
  const { workdir, lock } = await openWorkdir(manifest, sessionId, plan.workdirArg);
  globalThis.addEventListener("unload", () => lock.release());
  const contained = await containmentPolicy(choice, manifest, sessionId, workdir);
  const policy = contained.policy;
  const otel = await otelExport(manifest, () => session);
  const driver = turnDriver ?? await createDriver(manifest, {
    workdir: workdir.root,
    sessionStorePath: `${workdir.logs}/harness-sessions.json`,
    telemetry: otel ? (taskId) => otel.harnessTelemetry(taskId) : undefined,
  });
  const taskText = await launchTask(plan, workdir);
  const { staged, toolbox, mcp } = await toolsFor(plan, workdir, sessionId, policy);
  const sessionTools = new Map<string, Tool>();
  let push: PushNotifications | null = null;
  const session: Session = buildSession(plan, {
    sessionId,
    workdir,
    driver,
    toolbox,
    sessionTools,
    otel,
    resume: inputs.resume,
    hooks: commandHooks(manifest, workdir, sessionId, () => session, otel, policy),
    runtimeArtifacts: staged.artifacts,
    containment: { declared: choice.declared, achieved: choice.achieved, policy },
    finishPush: () => finishPush(push),
  });
  push = await pushFor(plan, session);
  // No silent death (docs/running.md): from here on, an error nobody caught ends the
  // session as every other way out does.
  const afterFault = watchFaults(session);
  if (plan.debugSubscriptions) debugSubscriptions(session);
  // Published files' url parts name the door, whose address is known once it listens.
  const files = { doorBase: "" };
  await registerSessionTools(plan, session, toolbox, sessionTools, workdir, files, otel);
  // A tool source's tool (an MCP server's, docs/mcp.md) is a tool, not a skill: `has` says so.
  const offered = inventory(manifest, staged, toolbox.specs(), (name) => toolbox.has(name));
  const murmurMd = murmurMdWriter(plan, session, offered, workdir, sessionId, driver);
  // The door binds before the session begins, so a port in use fails the launch with an empty
  // trace; requests that arrive meanwhile wait until the launch task is registered.
  let opened!: () => void;
  const ready = new Promise<void>((r) => (opened = r));
  const cluster = await clusterFor(plan, sessionId);
  const door = await openDoor(plan, session, driver, ready, push, cluster?.tokenKey, inputs, otel);
  // As the card names the door (an edge rewrites the urls of the Tasks it answers to its own).
  files.doorBase = (manifest.cluster?.advertise ?? `http://${door.address}`).replace(/\/+$/, "");
  session.registry.rebasePastFiles(files.doorBase);
  return {
    plan,
    sessionId,
    session,
    workdir,
    lock,
    driver,
    toolbox,
    otel,
    push,
    door,
    taskText,
    cluster,
    afterFault,
    opened,
    inventory: offered,
    murmurMd,
    mcp,
    containment: choice,
    closeContainment: contained.close,
  };
}

/**
 * A debug line per change of the live subscription count (stream connections, SendMessage
 * waits): what the reliability suite reads to prove disconnects leak nothing.
 */
function debugSubscriptions(session: Session): void {
  session.log.onSubscriptionCount = (n) => console.error(`debug: subscriptions ${n}`);
}

/** The staged tools, and the manifest's tool sources (docs/mcp.md) added to the toolbox. */
async function toolsFor(
  plan: LaunchPlan,
  workdir: Workdir,
  sessionId: string,
  policy: ContainmentPolicy | undefined,
) {
  const { staged, toolbox } = await stagedTools(plan, workdir, sessionId, policy);
  const mcp = await sourcesFor(plan, workdir, policy);
  for (const source of mcp?.sources ?? []) toolbox.addSource(source);
  return { staged, toolbox, mcp };
}

/** The policy every process of the session runs under; its files go when the process ends. */
async function containmentPolicy(
  choice: ContainmentChoice,
  manifest: Manifest,
  sessionId: string,
  workdir: Workdir,
): Promise<ContainmentRuntime> {
  const contained = await containmentRuntime(
    choice,
    manifest.containment ?? containmentConfig({}),
    {
      sessionId,
      workdir: workdir.root,
      manifestDir: manifest.dir,
      readOnly: manifest.capabilities.filesystem.readOnly,
    },
  );
  // Removed when the session ends (run.ts), and on any other way out that unloads.
  globalThis.addEventListener("unload", () => contained.close());
  return contained;
}

/**
 * The tool sources (docs/mcp.md): MCP servers and OpenAPI services, loaded and started only when
 * the manifest has some. A harness is handed the MCP servers in its own configuration instead.
 */
async function sourcesFor(
  plan: LaunchPlan,
  workdir: Workdir,
  containment: ContainmentPolicy | undefined,
): Promise<SourcesLaunch | null> {
  const m = plan.manifest;
  if (!m.mcpServers?.length && !m.openApiServices?.length) return null;
  const { startSources } = await lazyImport<typeof import("./run_sources.ts")>(
    "cli/run_sources.ts",
  );
  return await startSources(m, {
    logsDir: workdir.logs,
    workdirRoot: workdir.root,
    harness: plan.harness,
    warn,
    containment,
  });
}

/**
 * The OpenTelemetry export, when the manifest or the environment names a collector (README
 * "OpenTelemetry"); the SDK is loaded only then.
 */
async function otelExport(manifest: Manifest, session: () => Session) {
  const config = otelConfig(manifest.observability, env, console.error);
  if (!config) return null;
  const { OtelExport } = await lazyImport<typeof import("../otel/export.ts")>(
    "otel/export.ts",
  );
  return new OtelExport(config, manifest, {
    input: (id) => session().registry.get(id)?.text,
    output: (id) => session().registry.get(id)?.response,
  });
}

/**
 * The staging phase's workdir steps (src/stage/): artifacts staged, on-stage hooks, runtime tool
 * manifests and skills; then the toolbox over them. A failure stops the launch here: no trace, no
 * door, no record.
 */
async function stagedTools(
  plan: LaunchPlan,
  workdir: Workdir,
  sessionId: string,
  containment: ContainmentPolicy | undefined,
) {
  const { manifest } = plan;
  const staged = await stageCapsule({
    manifest,
    workdir,
    sessionId,
    hookTimeoutMs: hookTimeoutMs(env),
    warn,
    containment,
  });
  const toolbox = new ToolBox({
    capabilities: manifest.capabilities,
    tools: [...manifest.tools, ...staged.runtimeTools],
    skills: staged.skills,
    shellGraceSecs: manifest.lifecycle.shellGraceSecs,
    background: plan.background,
  });
  return { staged, toolbox };
}

/** The launch task's text; `--task` is written to the workdir's task.md. */
async function launchTask(plan: LaunchPlan, workdir: Workdir): Promise<string | null> {
  const taskText = await readTask(plan.taskArg, workdir.root);
  if (plan.taskArg !== undefined && taskText !== null) {
    try {
      await Deno.writeTextFile(`${workdir.root}/task.md`, taskText);
    } catch (e) {
      throw pathError(e, {
        source: plan.workdirSource,
        path: workdir.root,
        doing: "write the launch task to task.md",
      });
    }
  }
  return taskText;
}

function commandHooks(
  manifest: Manifest,
  workdir: Workdir,
  sessionId: string,
  session: () => Session,
  otel: OtelExport | null,
  containment: ContainmentPolicy | undefined,
): CommandHooks {
  return new CommandHooks({
    containment,
    hooks: manifest.hooks,
    workdirRoot: workdir.root,
    logsDir: workdir.logs,
    sessionId,
    // Asked only once the session exists (its begin writes the first hook's trace line).
    trace: () => session().trace,
    sessionEventId: () => session().sessionEventId,
    warn,
    timeoutMs: hookTimeoutMs(env),
    onCall: otel ? (call) => otel.hookCall(call) : undefined,
    publishData: (taskId, hook, value) => {
      const registry = session().registry;
      const task = registry.get(taskId);
      if (task) registry.publish(task, dataArtifact(task.published.length, hook, value));
    },
  });
}

function buildSession(plan: LaunchPlan, p: {
  sessionId: string;
  workdir: Workdir;
  driver: AnyDriver;
  toolbox: ToolBox;
  sessionTools: Map<string, Tool>;
  otel: OtelExport | null;
  resume?: ResumePlan;
  hooks: CommandHooks;
  runtimeArtifacts: RuntimeArtifactField[];
  containment: SessionContainment;
  finishPush(): Promise<void>;
}): Session {
  const { resume, toolbox } = p;
  return new Session({
    id: p.sessionId,
    manifest: plan.manifest,
    workdir: p.workdir,
    driver: p.driver,
    tools: toolbox,
    sessionTools: p.sessionTools,
    hooks: p.hooks,
    contextId: resume?.contextId ?? plan.contextId,
    resume: resume && {
      fromSession: resume.fromSession,
      contextId: resume.contextId,
      history: resume.history,
      tasks: resume.tasks,
    },
    idleTimeoutMs: plan.idleTimeoutMs,
    residue: () =>
      toolbox.detached.list().map((d) => ({
        kind: "detached_shell" as const,
        work_id: d.workId,
        binary: d.binary,
        command: d.command,
        started_at_ms: d.startedAtMs,
      })),
    holdCancelStatus: isHarnessDriver(p.driver),
    runtimeArtifacts: p.runtimeArtifacts,
    containment: p.containment,
    warn,
    otel: p.otel ?? undefined,
    push: { finish: p.finishPush },
  });
}

/**
 * Push notifications (docs/push.md): on when the manifest says so and the capsule
 * takes tasks; deliveries drain when the session ends (finishPush).
 */
async function pushFor(plan: LaunchPlan, session: Session): Promise<PushNotifications | null> {
  const config = plan.manifest.network.pushNotifications;
  if (!plan.push || !config) return null;
  // Loaded only when push is on: an idle capsule without it holds none of its modules.
  const { PushNotifications } = await lazyImport<typeof import("../push/push.ts")>(
    "push/push.ts",
  );
  return await PushNotifications.create({
    manifest: config,
    log: session.log,
    trace: (type, fields) => session.trace.write(type, session.sessionEventId, fields),
    retryBaseMs: plan.pushRetryBaseMs,
  });
}

async function finishPush(push: PushNotifications | null): Promise<void> {
  if (!push) return;
  const t = await push.finish();
  if (t.undelivered + t.dropped + t.gaveUp > 0) {
    console.error(warningLine(
      "W-PUSH-001",
      `push notifications not delivered: ${t.gaveUp} given up, ${t.dropped} dropped from a full queue, ${t.undelivered} left when the session ended; the trace's push_end lines name them`,
    ));
  }
}

/**
 * The tools the session implements itself: request-input, publish, a crew member's calls,
 * delegate-task.
 */
async function registerSessionTools(
  plan: LaunchPlan,
  session: Session,
  toolbox: ToolBox,
  sessionTools: Map<string, Tool>,
  workdir: Workdir,
  files: { doorBase: string },
  otel: OtelExport | null,
): Promise<void> {
  const add = (tool: Tool) => {
    toolbox.register(tool);
    sessionTools.set(tool.name, tool);
  };
  const lifecycle = plan.manifest.lifecycle;
  if (plan.requestInput) {
    add(requestInputTool(
      session.registry,
      lifecycle.inputTimeoutSecs,
      (reply) => fence("tool:request-input", reply),
    ));
  }
  if (plan.manifest.tools.some((t) => t.kind === "builtin" && t.name === "publish")) {
    // A publish call comes only while a task runs, after the door listens (files.doorBase).
    add(publishTool({
      registry: session.registry,
      outputs: plan.manifest.outputs ??
        { inlineMaxBytes: DEFAULTS.inlineMaxBytes, maxBytes: DEFAULTS.maxFileBytes },
      sessionDir: workdir.session,
      doorBase: () => files.doorBase,
    }));
  }
  if (plan.callees.length === 0 && plan.spawnTargets.length === 0) return;
  // The crew tools (and the member-call and delegation modules behind them) are loaded only by
  // a capsule that may call or start others: an idle capsule outside a crew holds none of them.
  const { DEFAULT_DEADLINE_SECS, callMemberTool, delegateTaskTool, endWithoutAnswerTool } =
    await lazyImport<typeof import("../session/crew_tools.ts")>(
      "session/crew_tools.ts",
    );
  const deadlineSecs = lifecycle.delegationDeadlineSecs ?? DEFAULT_DEADLINE_SECS;
  // Each request to a member's or a child's door: an a2a.client span (docs/opentelemetry.md).
  const a2aClient = otel ? (taskId: string, r: A2aCallRecord) => otel.a2a(r, taskId) : undefined;
  // A crew member that may call others (docs/crews.md): the launcher names its callees.
  if (plan.callees.length > 0) {
    const deps = {
      registry: session.registry,
      trace: () => session.trace,
      callees: plan.callees,
      crewFile: plan.crewFile,
      deadlineSecs,
      a2aClient,
    };
    add(callMemberTool(deps));
    add(endWithoutAnswerTool(deps));
  }
  // A capsule that may start children for a task (docs/crews.md: delegate-task).
  if (plan.spawnTargets.length > 0) {
    add(delegateTaskTool({
      registry: session.registry,
      trace: () => session.trace,
      targets: plan.spawnTargets,
      workdirRoot: workdir.root,
      deadlineSecs,
      a2aClient,
    }));
  }
}

/**
 * MURMUR.md (the model's onboarding file), written now without the door's address: a workdir that
 * cannot take it fails the launch with a coded error and nothing started.
 */
function murmurMdWriter(
  plan: LaunchPlan,
  session: Session,
  offered: Inventory,
  workdir: Workdir,
  sessionId: string,
  driver: AnyDriver,
): (url: string | null) => void {
  const write = (url: string | null) =>
    writeMurmurMd(workdir, {
      manifest: plan.manifest,
      sessionId,
      url,
      ...offered,
      model: driver.model,
    });
  try {
    write(null);
  } catch (e) {
    session.trace.close();
    throw pathError(e, {
      source: plan.workdirSource,
      path: plan.workdirArg ?? workdir.root,
      doing: "write MURMUR.md",
    });
  }
  return write;
}

/** A cluster (docs/edge.md): loaded only with the manifest's `cluster:` block. */
async function clusterFor(
  plan: LaunchPlan,
  sessionId: string,
): Promise<Capsule["cluster"]> {
  if (!plan.cluster) return null;
  const module = await lazyImport<ClusterModule>(
    "cluster/publish_session.ts",
  );
  return { module, tokenKey: await module.clusterTokenKey(plan.manifest, sessionId, env, warn) };
}

async function openDoor(
  plan: LaunchPlan,
  session: Session,
  driver: AnyDriver,
  ready: Promise<void>,
  push: PushNotifications | null,
  tokenKey: Uint8Array | undefined,
  inputs: AssemblyInputs,
  otel: OtelExport | null,
): Promise<Door> {
  try {
    return await startDoor({
      session,
      bind: plan.bind,
      port: plan.port,
      tools: session.toolNames(),
      // The card's `streaming`: an http driver streams; a harness says whether it does.
      streamsText: isHarnessDriver(driver) ? driver.streamsText : true,
      heartbeatMs: plan.heartbeatMs,
      warn,
      ready,
      push,
      tokenKey,
      formation: inputs.membership?.door,
      // Each method call: an a2a.server span (docs/opentelemetry.md "A2A spans").
      ...(otel && { onA2a: (r: A2aCallRecord) => otel.a2a(r) }),
    });
  } catch (e) {
    session.trace.close();
    throw e;
  }
}
