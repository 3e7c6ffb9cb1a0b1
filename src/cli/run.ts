/**
 * `mur run` (contract §1): load the manifest, start the session and its door, announce it, run
 * tasks until the lifecycle ends the session, and report `status:` with the exit code of §7.
 */
import { startDoor } from "../door/server.ts";
import { createDriver } from "../drivers/mod.ts";
import { errorMessage, MurError, warningLine } from "../errors.ts";
import { otelConfig } from "../otel/config.ts";
import { newId } from "../ids.ts";
import { loadManifest } from "../manifest/load.ts";
import type { Manifest } from "../manifest/types.ts";
import { CommandHooks, hookTimeoutMs } from "../hooks/mod.ts";
import { lossReport, markLost, planResume, type ResumePlan } from "../session/resume.ts";
import { resolveSessionDir, sessionDirs } from "./session_dirs.ts";
import { requestInputTool } from "../session/request_input.ts";
import { isHarnessDriver } from "../drivers/harness.ts";
import {
  removeRunningRecord,
  removeRunningRecordSync,
  writeRunningRecord,
} from "./running_records.ts";
import { killAllGroups } from "../process_groups.ts";
import { Session, type SessionStatus } from "../session/session.ts";
import { bootstrapLog, openWorkdir, writeMurmurMd } from "../session/workdir.ts";
import { fence } from "../tools/fence.ts";
import { ToolBox } from "../tools/toolbox.ts";
import { badValue, parse, usageError } from "./args.ts";
import { pathError } from "../path_errors.ts";
import { backgroundResult } from "../tools/shell.ts";
import type { Tool } from "../tools/types.ts";
import { pageUrl } from "../ui/routes.ts";

export const USAGE =
  `usage: mur run [--manifest PATH] [--task TEXT|PATH] [--context ID] [--resume [SESSION]]
               [--workdir DIR] [--bind ADDR] [--port N] [--json] [-v]
               [--lifecycle-task-acceptance none|single|queue] [--lifecycle-after-task exit|sleep]

Starts a capsule: loads the manifest, opens the A2A door, runs tasks as the lifecycle says, and
ends with a status line (status: ok exits 0; failed, max_turns_reached, spend_ceiling_reached or
canceled exit 1, with error[E-RUN-040] naming the task that decided it).

  --manifest PATH         the capsule's murmur.yaml, or the folder holding one (default
                          ./murmur.yaml)
  --task TEXT|PATH        the launch task: a file's contents, else the text itself (default: a
                          task.md in the workdir)
  --context ID            the launch task's context id (default: a new ctx_ for each task)
  --resume [SESSION]      start a new session continuing a finished one's context (default @1 of
                          the manifest's session folders)
  --workdir DIR           the tools' working directory; the session's own files go to
                          DIR/.murmur/<session id>; refused while another session runs there
                          (default: <manifest dir>/workdir/<session id>, which holds both)
  --bind ADDR             the door's listen address (default 127.0.0.1)
  --port N                the door's port, 0 for any free one (default network.internal_port,
                          else any free one)
  --json                  print one JSON readiness line instead of the human lines
  -v, --verbose           also print workdir:, manifest: and driver: lines
  --lifecycle-task-acceptance none|single|queue
                          override lifecycle.task_acceptance
  --lifecycle-after-task exit|sleep
                          override lifecycle.after_task
  -h, --help              this text

SIGTERM or SIGINT ends the session cleanly; a second one kills what it runs and exits at once.`;

export const FLAGS = {
  manifest: { type: "string" },
  task: { type: "string" },
  context: { type: "string" },
  resume: { type: "string" },
  workdir: { type: "string" },
  bind: { type: "string" },
  port: { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  "lifecycle-task-acceptance": { type: "string" },
  "lifecycle-after-task": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** How long a session that faulted may take to end by itself (README "Running a capsule"). */
export const FAULT_GRACE_MS = 5_000;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** A bare `--resume` (last, or followed by another flag) means `--resume @1`. */
function bareResume(args: string[]): string[] {
  const out = [...args];
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== "--resume") continue;
    const next = out[i + 1];
    if (next === undefined || next.startsWith("-")) out.splice(i + 1, 0, "@1");
  }
  return out;
}

/**
 * `--resume SESSION`: the session folder among `<manifest dir>/workdir/ses_*`, or, under
 * `--workdir DIR`, among `DIR/.murmur/ses_*` (and a trace an older mur left in DIR itself), and
 * its plan.
 */
async function resumePlan(
  address: string,
  manifest: Manifest,
  workdir: string | undefined,
): Promise<ResumePlan> {
  const root = workdir ?? `${manifest.dir}/workdir`;
  const { trace, sessionId } = await resolveSessionDir(address, await sessionDirs(root), root);
  return planResume(trace, sessionId ?? undefined);
}

function parseRun(args: string[]) {
  const parsed = parse("run", bareResume(args), FLAGS, USAGE);
  if (parsed.positionals.length > 0) {
    throw usageError(
      "run",
      `unexpected argument '${parsed.positionals[0]}' (a task is given with --task)`,
      USAGE,
    );
  }
  return parsed.values;
}

/** Flag values checked before anything is loaded: a bad one is E-CLI-003 and changes nothing. */
function checkValues(v: ReturnType<typeof parseRun>): void {
  const acc = v["lifecycle-task-acceptance"];
  if (acc !== undefined && acc !== "none" && acc !== "single" && acc !== "queue") {
    throw badValue("run", "--lifecycle-task-acceptance", acc, "one of none, single, queue", USAGE);
  }
  const after = v["lifecycle-after-task"];
  if (after !== undefined && after !== "exit" && after !== "sleep") {
    throw badValue("run", "--lifecycle-after-task", after, "one of exit, sleep", USAGE);
  }
  if (v.port !== undefined && (!/^\d+$/.test(v.port) || Number(v.port) > 65535)) {
    throw badValue("run", "--port", v.port, "a port number (0 to 65535)", USAGE);
  }
}

function applyOverrides(m: Manifest, v: ReturnType<typeof parseRun>): void {
  const acc = v["lifecycle-task-acceptance"];
  if (acc === "none" || acc === "single" || acc === "queue") m.lifecycle.taskAcceptance = acc;
  const after = v["lifecycle-after-task"];
  if (after === "exit" || after === "sleep") m.lifecycle.afterTask = after;
}

/**
 * The launch task: `--task` names a file to read, else it is the text itself; without it, a
 * task.md in the workdir. A file that is there but cannot be read is an error, never its path
 * taken as the task's text.
 */
async function readTask(arg: string | undefined, workdirRoot: string): Promise<string | null> {
  if (arg !== undefined) {
    let st: Deno.FileInfo;
    try {
      st = await Deno.stat(arg);
    } catch {
      return arg; // not a path to anything: the literal text
    }
    if (!st.isFile) return arg;
    try {
      return await Deno.readTextFile(arg);
    } catch (e) {
      throw pathError(e, { source: "--task", path: arg, doing: "read the task file" });
    }
  }
  try {
    return await Deno.readTextFile(`${workdirRoot}/task.md`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw pathError(e, {
      source: "the workdir's task.md",
      path: `${workdirRoot}/task.md`,
      doing: "read the launch task",
      expect: "file",
    });
  }
}

/**
 * The OpenTelemetry export, when the manifest or the environment names a collector (README
 * "OpenTelemetry"); the SDK is loaded only then.
 */
async function otelExport(manifest: Manifest, session: () => Session) {
  const config = otelConfig(manifest.observability, (n) => Deno.env.get(n), console.error);
  if (!config) return null;
  const { OtelExport } = await import("../otel/export.ts");
  return new OtelExport(config, manifest, {
    input: (id) => session().registry.get(id)?.text,
    output: (id) => session().registry.get(id)?.response,
  });
}

export async function runCommand(args: string[]): Promise<number> {
  const v = parseRun(args);
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  checkValues(v);
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

  const sessionTools = new Map<string, Tool>();
  const toolbox = new ToolBox({
    capabilities: manifest.capabilities,
    tools: manifest.tools,
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
  });
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
  // MURMUR.md (the model's onboarding file) is written before the door binds, so a workdir that
  // cannot take it fails the launch with a coded error and nothing started.
  const toolList = session.toolNames().map((name) => ({
    name,
    description: toolbox.specs().find((s) => s.name === name)?.description ?? "",
  }));
  const murmurMd = (url: string | null) =>
    writeMurmurMd(workdir, { manifest, sessionId, url, tools: toolList, model: driver.model });
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

  // SIGTERM / SIGINT end the session cleanly; a second signal exits at once. Installed before the
  // running record and the announcement: a caller may signal as soon as it reads the url line.
  let signals = 0;
  const onSignal = (code: number) => () => {
    signals++;
    if (signals > 1) {
      // The second signal cannot wait for the teardown: every process group this session
      // started (hooks, tools, detached shells, a harness) is killed, the trace closed with
      // session_end, the record and the workdir lock removed, the status line printed.
      killAllGroups();
      const status = session.abortNow();
      removeRunningRecordSync(sessionId);
      lock.release();
      report(status);
      Deno.exit(code);
    }
    session.shutdown();
  };
  const term = onSignal(143);
  const int = onSignal(130);
  Deno.addSignalListener("SIGTERM", term);
  Deno.addSignalListener("SIGINT", int);

  // Rewritten with the door's address; the first write (before the door) already proved the
  // folder writable, so a failure here costs the model the address line only.
  try {
    murmurMd(door.address);
  } catch (e) {
    bootstrapLog(workdir, `MURMUR.md could not be rewritten with the door's address: ${e}`);
  }
  try {
    await writeRunningRecord({
      session_id: sessionId,
      url: door.address,
      pid: Deno.pid,
      capsule_name: manifest.name,
      capsule_version: manifest.version,
      workdir: workdir.root,
      session_dir: workdir.session,
      started_at: new Date().toISOString(),
      ...(door.tokens ? { tokens: door.tokens as { operator: string } } : {}),
    });
  } catch (e) {
    console.error(warningLine(
      "W-SEC-023",
      `this session's record under ~/.murmur/running/ could not be written, so \`mur watch\` and \`mur cancel\` cannot reach it by session address — only by the URL it announces: ${
        errorMessage(e)
      }`,
    ));
  }

  if (v.json) {
    console.log(JSON.stringify({
      url: door.address,
      pid: Deno.pid,
      session_id: sessionId,
      name: manifest.name,
      version: manifest.version,
      workdir: workdir.root,
      session_dir: workdir.session,
      ...(door.tokens ? { tokens: door.tokens } : {}),
    }));
  } else {
    console.log(`murmur: url ${door.address}`);
    console.log(`session: ${sessionId}`);
    if (v.verbose) {
      console.log(`workdir: ${workdir.root}`);
      if (workdir.session !== workdir.root) console.log(`session dir: ${workdir.session}`);
      console.log(`manifest: ${manifest.path}`);
      console.log(`driver: ${manifest.inference.driver}`);
      console.log(`page: ${pageUrl(door.address)}`);
    }
  }

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

  /** The status line, and E-RUN-040 naming the task that decided a status other than ok. */
  function report(status: SessionStatus): void {
    if (!v.json) console.log(`status: ${status}`);
    if (status === "ok") return;
    // Name the deciding task whose ending set the status, and its own final status message.
    const by = session.decidedBy;
    const part = by?.status.message?.parts[0];
    const text = part && "text" in part ? part.text : status;
    const which = by ? `${by.source === "task_md" ? "the launch task" : "task"} ${by.id}` : null;
    console.error(
      new MurError(
        "E-RUN-040",
        which ? `${which} ended ${status}: ${text}` : `the session ended ${status}`,
        `read ${workdir.resultFile} and run mur trace show ${sessionId}`,
      ).format(),
    );
  }
}
