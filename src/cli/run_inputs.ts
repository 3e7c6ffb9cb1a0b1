/**
 * What `mur run` is given (docs/running.md): its flags, checked before
 * anything is loaded (a bad value is E-CLI-003 and changes nothing), the launch task, and the
 * session `--resume` continues.
 */
import { isContainmentClass } from "../containment/classes.ts";
import { looksLikePath, missingTaskFile } from "./task_path.ts";
import type { Manifest } from "../manifest/types.ts";
import { pathError } from "../path_errors.ts";
import { planResume, type ResumePlan } from "../session/resume.ts";
import { badValue, parse, usageError } from "./args.ts";
import { resolveSessionDir, sessionDirs } from "./session_dirs.ts";
import { existsSync as exists } from "../path_exists.ts";

export const USAGE =
  `usage: mur run [--manifest PATH] [--task TEXT|PATH] [--context ID] [--resume [SESSION]]
               [--workdir DIR] [--bind ADDR] [--port N] [--json] [-v]
               [--containment advisory|scoped|sealed]
               [--lifecycle-task-acceptance none|single|queue] [--lifecycle-after-task exit|sleep]
       mur run --roster FILE [--task TEXT|PATH] [--json]

Starts a capsule: loads the manifest, opens the A2A door, runs tasks as the lifecycle says, and
ends with a status line (status: ok exits 0; failed, max_turns_reached, spend_ceiling_reached or
canceled exit 1, with error[E-RUN-040] naming the task that decided it).

  --manifest PATH         the capsule's murmur.yaml, or the folder holding one (default
                          ./murmur.yaml)
  --roster FILE           launch the formation a roster file names: every member as its own
                          mur run, the entry member with the task (docs/crews.md)
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
  --containment CLASS     raise the manifest's containment floor: advisory, scoped or sealed
                          (docs/containment.md; E-CAP-003 when this host cannot reach it)
  --json                  print one JSON readiness line instead of the human lines
  -v, --verbose           also print workdir:, manifest:, driver:, page: (and otel:, tokens:) lines
  --lifecycle-task-acceptance none|single|queue
                          override lifecycle.task_acceptance
  --lifecycle-after-task exit|sleep
                          override lifecycle.after_task
  -h, --help              this text

SIGTERM or SIGINT ends the session cleanly; a second one kills what it runs and exits at once.`;

export const FLAGS = {
  manifest: { type: "string" },
  roster: { type: "string" },
  task: { type: "string" },
  context: { type: "string" },
  resume: { type: "string" },
  workdir: { type: "string" },
  bind: { type: "string" },
  port: { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  containment: { type: "string" },
  "lifecycle-task-acceptance": { type: "string" },
  "lifecycle-after-task": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

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
export async function resumePlan(
  address: string,
  manifest: Manifest,
  workdir: string | undefined,
): Promise<ResumePlan> {
  const root = workdir ?? `${manifest.dir}/workdir`;
  const { trace, sessionId } = await resolveSessionDir(address, await sessionDirs(root), root);
  return planResume(trace, sessionId ?? undefined, manifest.lifecycle.historyLimit);
}

export type RunFlags = ReturnType<typeof parseRun>;

export function parseRun(args: string[]) {
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
export function checkValues(v: RunFlags): void {
  const acc = v["lifecycle-task-acceptance"];
  if (acc !== undefined && acc !== "none" && acc !== "single" && acc !== "queue") {
    throw badValue("run", "--lifecycle-task-acceptance", acc, "one of none, single, queue", USAGE);
  }
  const after = v["lifecycle-after-task"];
  if (after !== undefined && after !== "exit" && after !== "sleep") {
    throw badValue("run", "--lifecycle-after-task", after, "one of exit, sleep", USAGE);
  }
  if (v.containment !== undefined && !isContainmentClass(v.containment)) {
    throw badValue("run", "--containment", v.containment, "one of advisory, scoped, sealed", USAGE);
  }
  if (v.port !== undefined && (!/^\d+$/.test(v.port) || Number(v.port) > 65535)) {
    throw badValue("run", "--port", v.port, "a port number (0 to 65535)", USAGE);
  }
  // `--task ./taks.md` with no such file is a slip, not a task (task_path.ts).
  if (v.task !== undefined && looksLikePath(v.task) && !exists(v.task)) {
    throw missingTaskFile(v.task);
  }
}

/**
 * The launch task: `--task` names a file to read, else it is the text itself; without it, a
 * task.md in the workdir. A file that is there but cannot be read is an error, never its path
 * taken as the task's text.
 */
export async function readTask(
  arg: string | undefined,
  workdirRoot: string,
): Promise<string | null> {
  if (arg !== undefined) {
    let st: Deno.FileInfo;
    try {
      st = await Deno.stat(arg);
    } catch {
      return arg; // not a path to anything: the literal text (checkValues refused a path-like one)
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
