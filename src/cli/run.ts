/**
 * `mur run` (docs/running.md): load the manifest, plan the launch
 * (launch_plan.ts, pure), build the capsule (run_assembly.ts), start it, announce it, run tasks
 * until the lifecycle ends the session, and report `status:` with its exit code. Its flags and
 * inputs are run_inputs.ts; what it prints, run_announce.ts; signals, faults and the lifeline,
 * run_endings.ts.
 */
import { usageText } from "../invocation.ts";
import { lazyImport } from "../lazy.ts";
import { usageError } from "./args.ts";
import { loadManifest } from "../manifest/load.ts";
import { lossReport, markLost, type ResumePlan } from "../session/resume.ts";
import { removeRunningRecord } from "../home/running_records.ts";
import { announce, recordRunning, reportStatus } from "./run_announce.ts";
import { checkValues, parseRun, resumePlan, type RunFlags, USAGE } from "./run_inputs.ts";
import { hasLifeline, LIFELINE_ENV } from "../crew/calls/lifeline.ts";
import { CREW_DOOR_ENV, type Membership, readMembership } from "../crew/formation/membership.ts";
import type { SessionStatus } from "../session/session.ts";
import { bootstrapLog } from "../session/workdir.ts";
import { type LaunchPlan, planLaunch } from "./launch_plan.ts";
import { assembleCapsule, type Capsule } from "./run_assembly.ts";
import { probeHost } from "../containment/probe.ts";
import { endAfterFault, installEndings } from "./run_endings.ts";

export { FLAGS, USAGE } from "./run_inputs.ts";
export { FAULT_GRACE_MS } from "./run_endings.ts";

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
    console.log(usageText(USAGE));
    return 0;
  }
  checkValues(v);
  if (v.roster !== undefined) return await runRosterCommand(v, v.roster);
  // Started now, answered at the launch (run_assembly.ts chooseContainment): its sandboxes run
  // while the manifest is read and checked.
  probeHost((name) => Deno.env.get(name));
  // A formation member: its formation and the key its door checks edge tokens with.
  const membership = await readMembership();
  const lifeline = hasLifeline();
  // Neither is for the tools and hooks this session starts: a `mur run` they start is not a member.
  Deno.env.delete(LIFELINE_ENV);
  Deno.env.delete(CREW_DOOR_ENV);
  const { manifest, warnings } = await loadManifest(v.manifest ?? "./murmur.yaml");
  for (const w of warnings) console.error(w);
  const plan = planLaunch(v, manifest, (name) => Deno.env.get(name));
  const resume = plan.resumeFrom === undefined
    ? undefined
    : await readResume(plan, plan.resumeFrom);
  for (const w of plan.warnings) console.error(w);
  const capsule = await assembleCapsule(plan, { resume, membership });
  await start(capsule, resume);
  const report = (status: SessionStatus) =>
    reportStatus(status, capsule.session, {
      json: plan.json,
      sessionId: capsule.sessionId,
      workdir: capsule.workdir,
    });
  const removeEndings = installEndings({
    session: capsule.session,
    sessionId: capsule.sessionId,
    lock: capsule.lock,
    membership,
    lifeline,
    report,
  });
  await announceRunning(capsule, membership, v);
  // After the readiness line: the Redis client takes a few hundred ms to load on a busy machine
  // (docs/edge.md "The client"); what the session wrote meanwhile is published from its ring.
  const publisher = publish(capsule);
  const status = await runToEnd(capsule, async () => {
    await publisher?.stop();
    removeEndings();
  });
  report(status);
  return status === "ok" ? 0 : 1;
}

/** `mur run --roster` (docs/crews.md): the formation's own launcher (src/crew/formation/). */
async function runRosterCommand(v: RunFlags, roster: string): Promise<number> {
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
    "crew/formation/launch.ts",
  );
  return await runRoster({ roster, task: v.task, json: v.json });
}

/** `--resume`: the session continued, its record read (a torn last line is a warning). */
async function readResume(plan: LaunchPlan, from: string): Promise<ResumePlan> {
  const resume = await resumePlan(from, plan.manifest, plan.workdirArg);
  if (resume.tornLine !== null) {
    console.error(
      `warning[W-RUN-003]: the conversation record of context '${resume.contextId}' in ${resume.fromDir}/conversation/ ends in a line cut short (the session was killed while saving it): that last message was left out of the resumed history`,
    );
  }
  return resume;
}

/**
 * The session begins, takes its launch task (and a resumed session's loss report) and lets the
 * door's requests through.
 */
async function start(c: Capsule, resume: ResumePlan | undefined) {
  const { session } = c;
  await session.begin({});
  c.mcp?.traceTo(session.trace, session.sessionEventId);
  // The launch task's id goes in the `--json` readiness line (`mur watch --task` needs it).
  if (c.taskText !== null) c.launchTaskId = session.launch(c.taskText).id;
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
    markLost(resume, c.sessionId, report.id);
  }
  c.opened();
}

/** Publishing to the cluster, when the manifest has one (src/cluster/publish_session.ts). */
function publish(c: Capsule) {
  const { session, plan } = c;
  if (!c.cluster || !plan.manifest.cluster) return null;
  const tokenKey = c.cluster.tokenKey;
  return c.cluster.module.startPublishing({
    cluster: plan.manifest.cluster,
    session,
    sessionEventId: () => session.sessionEventId,
    manifest: plan.manifest,
    doorAddress: c.door.address,
    cards: c.door.cards,
    edgeAuth: !plan.manifest.network.authentication ? "none" : tokenKey ? "shared" : "unverifiable",
    env: (name) => Deno.env.get(name),
    warn: (line) => console.error(line),
  });
}

/** MURMUR.md with the door's address, the running record, and the readiness lines. */
async function announceRunning(
  c: Capsule,
  membership: Membership | null,
  v: RunFlags,
): Promise<void> {
  // The first write (before the door) already proved the folder writable, so a failure here
  // costs the model the address line only.
  try {
    c.murmurMd(c.door.address);
  } catch (e) {
    bootstrapLog(c.workdir, `MURMUR.md could not be rewritten with the door's address: ${e}`);
  }
  const announced = {
    sessionId: c.sessionId,
    manifest: c.plan.manifest,
    workdir: c.workdir,
    address: c.door.address,
    tokens: c.door.tokens,
    approvalToken: c.door.approvalToken,
    otel: c.otel?.config,
    pushSecret: c.push?.secret,
    formation: membership ?? undefined,
    inventory: c.inventory,
    launchTaskId: c.launchTaskId,
    containment: c.containment.line,
  };
  await recordRunning(announced);
  announce(announced, v);
}

/** Runs the session to its end (or a fault's), then takes the capsule down. */
async function runToEnd(c: Capsule, stopMore: () => Promise<void>): Promise<SessionStatus> {
  const { session } = c;
  const afterFault = endAfterFault(session, c.afterFault);
  let status: SessionStatus;
  let ending: SessionStatus | undefined;
  try {
    status = ending = await Promise.race([session.run(), afterFault.ended]);
  } catch (e) {
    // The session's own ending failed: a fault like any other.
    session.fault(e);
    status = ending = session.endNow();
  } finally {
    afterFault.cancel();
    // Watchers are told how the session ended as their stream closes (src/events/view.ts).
    session.log.close(ending === undefined ? undefined : session.faulted ? "failed" : ending);
    // The stream's end goes to Redis (bounded: a Redis that does not answer delays nothing long),
    // and the signal handlers go.
    await stopMore();
    await c.door.shutdown();
    await removeRunningRecord(c.sessionId).catch(() => {});
    c.lock.release();
    c.toolbox.detached.releaseAll();
    await c.mcp?.close();
    // After every process it contained (MCP servers included) has gone.
    c.closeContainment();
    await c.driver.close?.();
  }
  // A fault while the session closed (door, driver) still makes the run a failure.
  return session.faulted ? "failed" : status;
}
