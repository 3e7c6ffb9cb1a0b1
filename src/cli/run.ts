/**
 * `mur run` (README "Running a capsule: `mur run`"): load the manifest, start the session and its
 * door, announce it, run tasks until the lifecycle ends the session, and report `status:` with
 * its exit code. Its flags and inputs are run_inputs.ts; what it prints, run_announce.ts.
 */
import { startDoor } from "../door/server.ts";
import { createDriver } from "../drivers/mod.ts";
import { MurError, warningLine } from "../errors.ts";
import { otelConfig } from "../otel/config.ts";
import { newId } from "../ids.ts";
import { lazyImport } from "../lazy.ts";
import { usageError } from "./args.ts";
import { loadManifest } from "../manifest/load.ts";
import type { Manifest } from "../manifest/types.ts";
import { CommandHooks, hookTimeoutMs } from "../hooks/mod.ts";
import { lossReport, markLost, type ResumePlan } from "../session/resume.ts";
import { requestInputTool } from "../session/request_input.ts";
import { crewCallees } from "../crew/calls/crew_file.ts";
import {
  callMemberTool,
  DEFAULT_DEADLINE_SECS,
  delegateTaskTool,
  endWithoutAnswerTool,
} from "../session/crew_tools.ts";
import { isHarnessDriver } from "../drivers/harness.ts";
import { removeRunningRecord, removeRunningRecordSync } from "../home/running_records.ts";
import { announce, recordRunning, reportStatus } from "./run_announce.ts";
import {
  applyOverrides,
  checkValues,
  parseRun,
  readTask,
  resumePlan,
  USAGE,
} from "./run_inputs.ts";

export { FLAGS, USAGE } from "./run_inputs.ts";
import { killAllGroups } from "../process_groups.ts";
import {
  hasLifeline,
  LIFELINE_ENV,
  LIFELINE_GRACE_MS,
  watchLifeline,
} from "../crew/calls/lifeline.ts";
import { CREW_DOOR_ENV, readMembership } from "../crew/formation/membership.ts";
import { Session, type SessionStatus } from "../session/session.ts";
import { bootstrapLog, openWorkdir, writeMurmurMd } from "../session/workdir.ts";
import { fence } from "../tools/fence.ts";
import { ToolBox } from "../tools/toolbox.ts";
import { pathError } from "../path_errors.ts";
import { PushNotifications } from "../push/push.ts";
import { backgroundResult, takesTasks } from "../session/lifecycle.ts";
import type { Tool } from "../tools/types.ts";
import { stageCapsule } from "../stage/stage.ts";
import { inventory } from "../stage/inventory.ts";

/** How long a session that faulted may take to end by itself (README "Running a capsule"). */
export const FAULT_GRACE_MS = 5_000;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * The OpenTelemetry export, when the manifest or the environment names a collector (README
 * "OpenTelemetry"); the SDK is loaded only then.
 */
async function otelExport(manifest: Manifest, session: () => Session) {
  const config = otelConfig(manifest.observability, (n) => Deno.env.get(n), console.error);
  if (!config) return null;
  const { OtelExport } = await lazyImport<typeof import("../otel/export.ts")>(
    new URL("../otel/export.ts", import.meta.url),
  );
  return new OtelExport(config, manifest, {
    input: (id) => session().registry.get(id)?.text,
    output: (id) => session().registry.get(id)?.response,
  });
}

/** Flags that name one capsule's own setup: with --roster each member's manifest decides these. */
const ROSTER_CONFLICTS = [
  "manifest",
  "context",
  "resume",
  "workdir",
  "bind",
  "port",
  "lifecycle-task-acceptance",
  "lifecycle-after-task",
] as const;

export async function runCommand(args: string[]): Promise<number> {
  const v = parseRun(args);
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  checkValues(v);
  if (v.roster !== undefined) {
    for (const flag of ROSTER_CONFLICTS) {
      if (v[flag] !== undefined) {
        throw usageError(
          "run",
          `--${flag} does not go with --roster: each member runs from its own manifest`,
          USAGE,
        );
      }
    }
    const { runRoster } = await lazyImport<typeof import("../crew/formation/launch.ts")>(
      new URL("../crew/formation/launch.ts", import.meta.url),
    );
    return await runRoster({ roster: v.roster, task: v.task, json: v.json });
  }
  // A formation member: its formation and the key its door checks edge tokens with.
  const membership = await readMembership();
  const lifeline = hasLifeline();
  // Neither is for the tools and hooks this session starts: a `mur run` they start is not a member.
  Deno.env.delete(LIFELINE_ENV);
  Deno.env.delete(CREW_DOOR_ENV);
  const { manifest, warnings } = await loadManifest(v.manifest ?? "./murmur.yaml");
  for (const w of warnings) console.error(w);
  applyOverrides(manifest, v);
  let resume: ResumePlan | undefined;
  if (v.resume !== undefined) {
    if (v.context !== undefined) {
      throw new MurError(
        "E-RUN-015",
        "--resume and --context name the same thing two ways",
        "drop --context: a resumed session continues the context of the session it resumes",
      );
    }
    resume = await resumePlan(v.resume, manifest, v.workdir);
    if (resume.tornLine !== null) {
      console.error(
        `warning[W-RUN-003]: the conversation record of context '${resume.contextId}' in ${resume.fromDir}/conversation/ ends in a line cut short (the session was killed while saving it): that last message was left out of the resumed history`,
      );
    }
  }
  let port = manifest.network.internalPort ?? 0;
  if (v.port !== undefined) port = Number(v.port);
  const bind = v.bind ?? "127.0.0.1";
  if (!LOOPBACK.test(bind) && !manifest.network.authentication) {
    console.error(warningLine(
      "W-SEC-032",
      `the door is bound to ${bind} and network.authentication is not declared — any caller that reaches it can call every method`,
    ));
  }

  // A per-turn driver is made before the workdir, so a bad one leaves none behind; a harness
  // (transport: process) runs in the workdir, so it is made once the workdir exists.
  const harness = manifest.inference.transport === "process";
  const turnDriver = harness ? null : await createDriver(manifest);
  const sessionId = newId("ses");
  // One session per workdir: refused (E-RUN-043) while a live session holds it. The lock goes
  // when the session ends, and on every other way out of the process (the unload event).
  const { workdir, lock } = await openWorkdir(manifest, sessionId, v.workdir);
  globalThis.addEventListener("unload", () => lock.release());
  const otel = await otelExport(manifest, () => session);
  const driver = turnDriver ?? await createDriver(manifest, {
    workdir: workdir.root,
    sessionStorePath: `${workdir.logs}/harness-sessions.json`,
    telemetry: otel ? (taskId) => otel.harnessTelemetry(taskId) : undefined,
  });
  const taskText = await readTask(v.task, workdir.root);
  if (v.task !== undefined && taskText !== null) {
    try {
      await Deno.writeTextFile(`${workdir.root}/task.md`, taskText);
    } catch (e) {
      throw pathError(e, {
        source: v.workdir !== undefined ? "--workdir" : "the session folder",
        path: workdir.root,
        doing: "write the launch task to task.md",
      });
    }
  }

  // The staging phase's workdir steps (src/stage/): artifacts staged, on-stage hooks, runtime
  // tool manifests and skills. A failure stops the launch here: no trace, no door, no record.
  const staged = await stageCapsule({
    manifest,
    workdir,
    sessionId,
    hookTimeoutMs: hookTimeoutMs((name) => Deno.env.get(name)),
    warn: (line) => console.error(line),
  });

  const sessionTools = new Map<string, Tool>();
  const toolbox = new ToolBox({
    capabilities: manifest.capabilities,
    tools: [...manifest.tools, ...staged.runtimeTools],
    skills: staged.skills,
    shellGraceSecs: manifest.lifecycle.shellGraceSecs,
    background: backgroundResult(manifest.lifecycle),
  });
  const hooks = new CommandHooks({
    hooks: manifest.hooks,
    workdirRoot: workdir.root,
    logsDir: workdir.logs,
    sessionId,
    trace: () => session?.trace ?? null,
    sessionEventId: () => session?.sessionEventId ?? null,
    warn: (line) => console.error(line),
    timeoutMs: hookTimeoutMs((name) => Deno.env.get(name)),
    onCall: otel ? (call) => otel.hookCall(call) : undefined,
  });
  const idleSecs = Number(Deno.env.get("MURMUR_A2A_TIMEOUT_SECS") ?? "30");
  const session: Session = new Session({
    id: sessionId,
    manifest,
    workdir,
    driver,
    tools: toolbox,
    sessionTools,
    hooks,
    contextId: resume?.contextId ?? v.context,
    resume: resume && {
      fromSession: resume.fromSession,
      contextId: resume.contextId,
      history: resume.history,
    },
    idleTimeoutMs: (Number.isFinite(idleSecs) ? idleSecs : 30) * 1000,
    residue: () =>
      toolbox.detached.list().map((d) => ({
        kind: "detached_shell" as const,
        work_id: d.workId,
        binary: d.binary,
        command: d.command,
        started_at_ms: d.startedAtMs,
      })),
    holdCancelStatus: isHarnessDriver(driver),
    warn: (line) => console.error(line),
    otel: otel ?? undefined,
    push: { finish: () => finishPush() },
  });
  // Push notifications (README "Push notifications"): on when the manifest says so and the
  // capsule takes tasks; deliveries drain when the session ends (finishPush).
  const pushConfig = manifest.network.pushNotifications;
  const push = pushConfig && takesTasks(manifest.lifecycle)
    ? await PushNotifications.create({
      manifest: pushConfig,
      log: session.log,
      trace: (type, fields) => session.trace.write(type, session.sessionEventId, fields),
      retryBaseMs: pushRetryBaseMs(),
    })
    : null;
  async function finishPush(): Promise<void> {
    if (!push) return;
    const t = await push.finish();
    if (t.undelivered + t.dropped + t.gaveUp > 0) {
      console.error(warningLine(
        "W-PUSH-001",
        `push notifications not delivered: ${t.gaveUp} given up, ${t.dropped} dropped from a full queue, ${t.undelivered} left when the session ended; the trace's push_end lines name them`,
      ));
    }
  }
  // No silent death (README "Running a capsule"): an error nobody caught, anywhere in this process
  // from here on, ends the session as every other way out does (Session.fault: E-RUN-050).
  let faultSeen!: () => void;
  const afterFault = new Promise<void>((r) => (faultSeen = r));
  const onFault = (ev: Event) => {
    ev.preventDefault();
    session.fault(ev instanceof ErrorEvent ? ev.error : (ev as PromiseRejectionEvent).reason);
    faultSeen();
  };
  globalThis.addEventListener("error", onFault);
  globalThis.addEventListener("unhandledrejection", onFault);
  if (Deno.env.get("MURMUR_DEBUG_SUBSCRIPTIONS")) {
    // A debug line per change of the live subscription count (stream connections, SendMessage
    // waits): what the reliability suite reads to prove disconnects leak nothing.
    session.log.onSubscriptionCount = (n) => console.error(`debug: subscriptions ${n}`);
  }
  if (manifest.tools.some((t) => t.kind === "builtin" && t.name === "request-input")) {
    const tool = requestInputTool(
      session.registry,
      manifest.lifecycle.inputTimeoutSecs,
      (reply) => fence("tool:request-input", reply),
    );
    toolbox.register(tool);
    sessionTools.set(tool.name, tool);
  }
  // A crew member that may call others (README "Crews"): the launcher names its callees.
  const callees = crewCallees((name) => Deno.env.get(name));
  if (callees.length > 0) {
    const deps = {
      registry: session.registry,
      trace: () => session.trace,
      callees,
      crewFile: Deno.env.get("MURMUR_CREW_FILE"),
      deadlineSecs: manifest.lifecycle.delegationDeadlineSecs ?? DEFAULT_DEADLINE_SECS,
    };
    for (const tool of [callMemberTool(deps), endWithoutAnswerTool(deps)]) {
      toolbox.register(tool);
      sessionTools.set(tool.name, tool);
    }
  }
  // A capsule that may start children for a task (README "Crews": delegate-task).
  const spawnTargets = manifest.capabilities.spawn?.allow ?? [];
  if (spawnTargets.length > 0) {
    const tool = delegateTaskTool({
      registry: session.registry,
      trace: () => session.trace,
      targets: spawnTargets,
      workdirRoot: workdir.root,
      deadlineSecs: manifest.lifecycle.delegationDeadlineSecs ?? DEFAULT_DEADLINE_SECS,
    });
    toolbox.register(tool);
    sessionTools.set(tool.name, tool);
  }
  // MURMUR.md (the model's onboarding file) is written before the door binds, so a workdir that
  // cannot take it fails the launch with a coded error and nothing started.
  const offered = inventory(manifest, staged, toolbox.specs(), (name) => toolbox.has(name));
  const murmurMd = (url: string | null) =>
    writeMurmurMd(workdir, { manifest, sessionId, url, ...offered, model: driver.model });
  try {
    murmurMd(null);
  } catch (e) {
    session.trace.close();
    throw pathError(e, {
      source: v.workdir !== undefined ? "--workdir" : "the session folder",
      path: v.workdir ?? workdir.root,
      doing: "write MURMUR.md",
    });
  }
  // The door binds before the session begins, so a port in use fails the launch with an empty
  // trace; requests that arrive meanwhile wait until the launch task is registered.
  let opened!: () => void;
  const ready = new Promise<void>((r) => (opened = r));
  // A cluster (README "Beyond one machine"): loaded only with the manifest's `cluster:` block.
  const cluster = manifest.cluster
    ? await lazyImport<typeof import("../cluster/publish_session.ts")>(
      new URL("../cluster/publish_session.ts", import.meta.url),
    )
    : null;
  const env = (name: string) => Deno.env.get(name);
  const warn = (line: string) => console.error(line);
  const tokenKey = cluster
    ? await cluster.clusterTokenKey(manifest, sessionId, env, warn)
    : undefined;
  let door;
  try {
    door = await startDoor({
      session,
      bind,
      port,
      tools: session.toolNames(),
      // The card's `streaming`: an http driver streams; a harness says whether it does.
      streamsText: isHarnessDriver(driver) ? driver.streamsText : true,
      heartbeatMs: Number(Deno.env.get("MURMUR_HEARTBEAT_MS") ?? "15000") || 15000,
      warn: (line) => console.error(line),
      ready,
      push,
      tokenKey,
      formation: membership?.door,
    });
  } catch (e) {
    session.trace.close();
    throw e;
  }

  await session.begin({});
  if (taskText !== null) session.launch(taskText);
  if (resume && resume.lost.length > 0) {
    // One report of every command the resumed-from session lost, in the bg lane after the
    // launch task, whatever task_acceptance says; marked shell_lost so it is reported once.
    const report = session.enqueueInternal({
      text: lossReport(resume),
      contextId: resume.contextId,
      origin: "completion",
      trusted: true,
      source: "detached_lost",
    });
    markLost(resume, sessionId, report.id);
  }

  opened();
  const publisher = cluster && manifest.cluster
    ? cluster.startPublishing({
      cluster: manifest.cluster,
      session,
      sessionEventId: () => session.sessionEventId,
      manifest,
      doorAddress: door.address,
      cards: door.cards,
      edgeAuth: !manifest.network.authentication ? "none" : tokenKey ? "shared" : "unverifiable",
      env,
      warn,
    })
    : null;

  // SIGTERM / SIGINT end the session cleanly; a second signal exits at once. Installed before the
  // running record and the announcement: a caller may signal as soon as it reads the url line.
  let signals = 0;
  // The second signal cannot wait for the teardown: every process group this session started
  // (hooks, tools, detached shells, a harness) is killed, the trace closed with session_end, the
  // record and the workdir lock removed, the status line printed.
  const exitNow = (code: number) => {
    killAllGroups();
    const status = session.abortNow();
    removeRunningRecordSync(sessionId);
    lock.release();
    report(status);
    Deno.exit(code);
  };
  const onSignal = (code: number) => () => {
    signals++;
    if (signals > 1) exitNow(code);
    session.shutdown();
  };
  const term = onSignal(143);
  const int = onSignal(130);
  Deno.addSignalListener("SIGTERM", term);
  Deno.addSignalListener("SIGINT", int);
  // Started by another mur (a formation member, a delegated child): its stdin closing means the
  // starter ended, and the session winds down as after a first SIGTERM (src/crew/calls/lifeline.ts).
  if (lifeline) {
    watchLifeline(() => {
      console.error(
        "[mur run] lifeline closed: the formation or the parent ended; ending the session",
      );
      // Once the session is closing (a signal came first) the line would say nothing new.
      if (!session.closing) {
        session.trace.write("lifeline_closed", session.sessionEventId, {
          formation_id: membership?.formationId ?? null,
          formation_member: membership?.door?.member ?? null,
        });
      }
      session.shutdown();
      const t = setTimeout(() => exitNow(143), LIFELINE_GRACE_MS);
      Deno.unrefTimer(t);
    });
  }

  // Rewritten with the door's address; the first write (before the door) already proved the
  // folder writable, so a failure here costs the model the address line only.
  try {
    murmurMd(door.address);
  } catch (e) {
    bootstrapLog(workdir, `MURMUR.md could not be rewritten with the door's address: ${e}`);
  }
  const announced = {
    sessionId,
    manifest,
    workdir,
    address: door.address,
    tokens: door.tokens,
    otel: otel?.config,
    pushSecret: push?.secret,
    formation: membership ?? undefined,
    inventory: offered,
  };
  await recordRunning(announced);
  announce(announced, v);

  // After a fault the session ends by itself once its running task has stopped; if the task loop
  // never comes back, it is ended here, FAULT_GRACE_MS after the fault.
  let grace: ReturnType<typeof setTimeout> | undefined;
  const endedAfterFault = afterFault.then(() =>
    new Promise<SessionStatus>((resolve) => {
      grace = setTimeout(() => resolve(session.endNow()), FAULT_GRACE_MS);
    })
  );
  let status: SessionStatus;
  try {
    status = await Promise.race([session.run(), endedAfterFault]);
  } catch (e) {
    // The session's own ending failed: a fault like any other.
    session.fault(e);
    status = session.endNow();
  } finally {
    clearTimeout(grace);
    session.log.close();
    // The stream's end goes to Redis (bounded: a Redis that does not answer delays nothing long).
    await publisher?.stop();
    await door.shutdown();
    await removeRunningRecord(sessionId).catch(() => {});
    lock.release();
    toolbox.detached.releaseAll();
    await driver.close?.();
    Deno.removeSignalListener("SIGTERM", term);
    Deno.removeSignalListener("SIGINT", int);
  }
  // A fault while the session closed (door, driver) still makes the run a failure.
  if (session.faulted) status = "failed";
  report(status);
  return status === "ok" ? 0 : 1;

  function report(status: SessionStatus): void {
    reportStatus(status, session, { json: v.json, sessionId, workdir });
  }
}

/**
 * `MURMUR_PUSH_RETRY_BASE_MS`: the first retry's wait of a push delivery (README "Environment");
 * absent or not a positive number: the default (src/push/deliveries.ts).
 */
function pushRetryBaseMs(): number | undefined {
  const n = Number(Deno.env.get("MURMUR_PUSH_RETRY_BASE_MS"));
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
