/**
 * `mur watch [SESSION] | --url HOST:PORT` and its flags: follow a running session's event stream
 * (docs/protocol.md "What mur watch does", the default). SESSION defaults to @1 and is resolved
 * and verified against the running records; --url skips resolution and presents
 * $MURMUR_DOOR_TOKEN if set. docs/watch.md documents every flag and exit code.
 */
import { usageText } from "../invocation.ts";
import { TASK_SUFFIX, taskBySuffix } from "./task_address.ts";
import { RPC_ERRORS } from "../diagnostics.ts";
import { MurError } from "../errors.ts";
import { probeCard } from "../watch/card_probe.ts";
import { resolveSession } from "./session_address.ts";
import type { TaskCheck } from "../watch/follow.ts";
import { WATCH_EXIT } from "../watch/outcome.ts";
import { watch, type WatchTarget } from "../watch/watch.ts";
import { badValue, parse, usageError } from "./args.ts";
import { callDoor } from "./door_call.ts";
import { murLine } from "../invocation.ts";
import { freshLook } from "./fresh_look.ts";
import { listRunningRecords, type RunningRecord } from "../home/running_records.ts";
import { shortTask } from "./steer_target.ts";
import { stdoutColor, stdoutWidth, writeErr, writeOut } from "./output.ts";

export const USAGE = `usage: mur watch [SESSION] [options]
       mur watch --url HOST:PORT [options]

Follows a running session's event stream (murmur.WatchSession) until the capsule closes it.

  SESSION               @N (N-th newest, default @1), a full ses_ id, or a unique suffix of 4+
                        characters
  --url HOST:PORT       watch the door at this address; presents $MURMUR_DOOR_TOKEN when set
  --json                NDJSON: exactly one JSON object per line on stdout,
                        {"id": <event id, or null for an unnumbered event>, "event": <StreamResponse>}
  --color WHEN          auto (default: colour when stdout is a terminal and NO_COLOR is unset or
                        empty), always, or never
  --task TASK           show only this task's events (and the session's gap, lagged and closing
                        notices); end when the task ends. TASK is its tsk_ id or its label, the
                        6 hex digits a status line shows ([tsk a1b2c3]), or any 4+ of its last
                        digits
  --since N             replay the events after id N instead of from 0 (resume where a lost
                        connection stopped: "lost after event id N")
  --exit-status         exit 3 when a followed task failed or was rejected, 4 when one was canceled
  --labels              name the task on every status line ([tsk a1b2c3]); without it, status
                        lines are named once the session shows more than one task
  -h, --help            this text

Exit: 0 when the capsule closes the stream (with --task: when the task ends); 1 with E-IO-003
when the connection cannot be made or is lost; 2 on a usage error; with --exit-status, 3 or 4
as above, before 0 or 1.`;

export const FLAGS = {
  url: { type: "string" },
  json: { type: "boolean" },
  color: { type: "string" },
  task: { type: "string" },
  since: { type: "string" },
  "exit-status": { type: "boolean" },
  labels: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function watchCommand(args: string[]): Promise<number> {
  const parsed = parse("watch", args, FLAGS, USAGE);
  if (parsed.values.help) {
    console.log(usageText(USAGE));
    return WATCH_EXIT.ok;
  }
  if (parsed.positionals.length > 1) throw usageError("watch", "give one SESSION at most", USAGE);
  if (parsed.values.url !== undefined && parsed.positionals.length > 0) {
    throw usageError("watch", "give a SESSION or --url, not both", USAGE);
  }
  const color = colorValue(parsed.values.color);
  const since = sinceValue(parsed.values.since);
  if (parsed.values.task !== undefined && parsed.values.task.trim() === "") {
    throw usageError("watch", "--task needs a task: its tsk_ id or its label (a1b2c3)", USAGE);
  }
  const { values, positionals } = parsed;

  let target: WatchTarget;
  let connected: string | Promise<string>;
  /** The session's running record on this machine, for the fresh look after a loss. */
  let record: RunningRecord | undefined;
  if (values.url !== undefined) {
    const url = values.url.replace(/^https?:\/\//, "").replace(/\/+$/, "");
    const token = Deno.env.get("MURMUR_DOOR_TOKEN") || undefined;
    target = { url, name: url, token };
    // A door on this machine (or an edge's path naming a session of it): its record, if any.
    record = (await listRunningRecords().catch(() => [])).find((r) =>
      r.url === url || url.endsWith(`/sessions/${r.session_id}`)
    );
    // Name the session when the card says which it is; a door that does not say is still watched.
    // Asked while the stream opens (the answer only names the session): one round trip less
    // before the first event.
    connected = probeCard(url, token, 2000).then((probe) =>
      probe.ok ? `[murmur] watching ${probe.sessionId} at ${url}` : `[murmur] watching ${url}`
    );
  } else {
    ({ record } = await resolveSession(positionals[0] ?? "@1"));
    target = { url: record.url, name: record.session_id, token: record.tokens?.operator };
    connected =
      `[murmur] watching ${record.session_id} (${record.capsule_name}@${record.capsule_version}) at ${record.url}`;
  }
  // A label (`504682`, as the status lines show it) names a task as its full id does.
  const asked = values.task?.trim();
  const taskId = asked !== undefined && TASK_SUFFIX.test(asked.toLowerCase())
    ? await taskBySuffix(target.url, target.name, asked.toLowerCase(), target.token)
    : asked;

  try {
    return await watch(target, { stdout: writeOut, stderr: writeErr }, {
      json: values.json ?? false,
      labels: values.labels ?? false,
      color: !values.json && color,
      terminal: Deno.stdout.isTerminal(),
      width: stdoutWidth(),
      connectedLine: connected,
      since,
      task: taskId === undefined ? undefined : { id: taskId, check: () => getTask(target, taskId) },
      exitStatus: values["exit-status"] ?? false,
      lookAgain: (ending) => freshLook(target.url, record, ending),
      ...steeringHints(values.url !== undefined ? "--url" : "--session", target.name),
    });
  } catch (e) {
    // The reader of a pipe went away (`mur watch | head -1`): nothing left to write to.
    if (e instanceof Deno.errors.BrokenPipe) return WATCH_EXIT.ok;
    throw e;
  }
}

/**
 * The commands the stderr notes name under an `[input-required]` line, reaching this session:
 * `mur answer --session ses_… a1b2c3 TEXT` for a question, `mur approve|deny --session ses_…
 * a1b2c3` for a call waiting for approval (or `--url HOST:PORT`).
 */
function steeringHints(flag: "--url" | "--session", name: string) {
  return {
    answerCommand: (id: string) => murLine("answer", flag, name, shortTask(id), "TEXT"),
    decideCommand: (verb: "approve" | "deny", id: string) =>
      murLine(verb, flag, name, shortTask(id)),
  };
}

/** `--since N`: a decimal event id, 0 or more. */
function sinceValue(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw badValue("watch", "--since", value, "an event id (0 or more)", USAGE);
  }
  return n;
}

/** `--color auto|always|never` → colour on stdout or not. */
function colorValue(value: string | undefined): boolean {
  const choice = value ?? "auto";
  if (choice !== "auto" && choice !== "always" && choice !== "never") {
    throw badValue("watch", "--color", value ?? "", "one of auto, always, never", USAGE);
  }
  return stdoutColor(choice);
}

/** GetTask for `mur watch --task`: does the session hold the task, and has it ended? */
export async function getTask(target: WatchTarget, id: string): Promise<TaskCheck> {
  try {
    const answer = await callDoor(target.url, "GetTask", { id }, target.token);
    if (answer.ok) {
      const state = (answer.result as { status?: { state?: unknown } })?.status?.state;
      return typeof state === "string"
        ? { kind: "state", state }
        : { kind: "unknown", why: "GetTask answered without a state" };
    }
    if (answer.code === RPC_ERRORS.taskNotFound.code) {
      return { kind: "missing", why: `${answer.code} ${answer.message}` };
    }
    return { kind: "unknown", why: `GetTask: ${answer.code} ${answer.message}` };
  } catch (e) {
    if (e instanceof MurError) return { kind: "unknown", why: e.message };
    throw e;
  }
}
