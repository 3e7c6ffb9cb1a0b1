/**
 * What `mur approve` and `mur deny` share (docs/approvals.md "From the terminal"): reach the
 * session (a session address, default @1, or --url with $MURMUR_DOOR_TOKEN; the operator token
 * from the running record), find the task (a tsk_ id or its label), read its pending approval
 * from GetTask (the `approval` artifact), and answer it with a SendMessage carrying
 * `{approve, argumentsHash, reason?}`. Prints what was answered on stdout, or one JSON object
 * with --json; the next step as a hint on stderr.
 */
import { MurError } from "../errors.ts";
import { murLine, usageText } from "../invocation.ts";
import { RPC_ERRORS } from "../diagnostics.ts";
import { stateWord } from "../watch/format.ts";
import { badValue, parse, usageError } from "./args.ts";
import { callDoor } from "./door_call.ts";
import { writeErr, writeOut } from "./output.ts";
import { resolveSession } from "./session_address.ts";
import { TASK_ID, TASK_SUFFIX, taskBySuffix, taskHint } from "./task_address.ts";

export const APPROVAL_FLAGS = {
  session: { type: "string", short: "s" },
  url: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export const DENY_FLAGS = { ...APPROVAL_FLAGS, reason: { type: "string" } } as const;

interface Target {
  url: string;
  name: string;
  token: string | undefined;
  /** How to name the session again in a hint (`@1`, an id, or `--url HOST:PORT`). */
  again: string[];
}

interface Pending {
  tool: string;
  argumentsHash: string;
  arguments?: Record<string, unknown>;
  argumentsPreview?: string;
  reason?: string;
}

interface Asked {
  values: { session?: string; url?: string; json?: boolean; help?: boolean; reason?: string };
  /** The session address, when given. */
  session?: string;
  /** The task (lower case), when given; absent: the one task waiting for an approval. */
  task?: string;
}

/** `@N` or a full `ses_` id: a lone argument that names a session, not a task. */
const SESSION_ONLY = /^(@\d+|ses_[0-9a-f]{32})$/i;

/** The flags and arguments; a mistake is a usage error (exit 2). */
function readArgs(command: "approve" | "deny", args: string[], usage: string): Asked {
  // `--reason` is deny's alone: under approve it is an unknown flag (E-CLI-002).
  const parsed = command === "approve"
    ? parse(command, args, APPROVAL_FLAGS, usage)
    : parse(command, args, DENY_FLAGS, usage);
  const values = parsed.values as Asked["values"];
  const p = parsed.positionals;
  if (values.help) return { values };
  if (values.session !== undefined && values.url !== undefined) {
    throw usageError(command, "give --session or --url, not both", usage);
  }
  // The session by --session (as mur send and mur answer name it) or as the first argument.
  const named = values.url !== undefined || values.session !== undefined;
  if (p.length > (named ? 1 : 2)) {
    throw usageError(
      command,
      named ? "with --session or --url, give only the TASK" : "give at most a SESSION and a TASK",
      usage,
    );
  }
  if (values.session !== undefined) return withTask(command, values, values.session, p[0], usage);
  if (p.length === 1 && values.url === undefined && SESSION_ONLY.test(p[0])) {
    return { values, session: p[0] };
  }
  return withTask(command, values, p.length === 2 ? p[0] : undefined, p.at(-1), usage);
}

/** The arguments with TASK checked: a tsk_ id or a label (E-CLI-003 otherwise). */
function withTask(
  command: string,
  values: Asked["values"],
  session: string | undefined,
  task: string | undefined,
  usage: string,
): Asked {
  if (
    task !== undefined && !TASK_ID.test(task.toLowerCase()) &&
    !TASK_SUFFIX.test(task.toLowerCase())
  ) {
    throw badValue(command, "TASK", task, "a tsk_ id or 4 to 32 of its last hex digits", usage);
  }
  return { values, session, task: task?.toLowerCase() };
}

/** `mur approve|deny`: parse, answer, print. Exit 0 when the door took the answer. */
export async function approvalCommand(
  command: "approve" | "deny",
  args: string[],
  usage: string,
): Promise<number> {
  const { values, session, task: given } = readArgs(command, args, usage);
  if (values.help) {
    console.log(usageText(usage));
    return 0;
  }
  const target = await targetOf(values.url, session);
  const taskId = given === undefined
    ? await onlyWaiting(target, command)
    : TASK_ID.test(given)
    ? given
    : await taskBySuffix(target.url, target.name, given, target.token);
  const pending = await pendingApproval(target, taskId, command);
  const reason = values.reason?.trim();
  const answer = await callDoor(target.url, "SendMessage", {
    message: {
      messageId: `mur-${command}-${crypto.randomUUID()}`,
      role: "ROLE_USER",
      taskId,
      parts: [{
        data: {
          approve: command === "approve",
          argumentsHash: pending.argumentsHash,
          ...(reason ? { reason } : {}),
        },
        mediaType: "application/json",
      }],
    },
    configuration: { returnImmediately: true },
  }, target.token);
  if (!answer.ok) {
    throw new MurError(
      "E-RUN-071",
      `${target.name} refused to ${command} ${taskId}: ${answer.code} ${answer.message}`,
      answer.code === RPC_ERRORS.unsupportedOperation.code
        ? "only the operator token answers an approval: run this on the machine that runs the session, or set MURMUR_DOOR_TOKEN to its operator token with --url"
        : "nothing was changed; read the task again and answer what it waits for now",
    );
  }
  const state = (answer.result as { task?: { status?: { state?: string } } }).task?.status?.state;
  await printAnswer(command, target, taskId, pending, reason, state, values.json === true);
  return 0;
}

/** What was answered (stdout: a line, or one JSON object), then how to follow the task (stderr). */
async function printAnswer(
  command: "approve" | "deny",
  target: Target,
  taskId: string,
  pending: Pending,
  reason: string | undefined,
  state: string | undefined,
  json: boolean,
): Promise<void> {
  const word = command === "approve" ? "approved" : "denied";
  if (json) {
    await writeOut(
      JSON.stringify({
        task: taskId,
        decision: word,
        tool: pending.tool,
        argumentsHash: pending.argumentsHash,
        ...(reason ? { reason } : {}),
        state: state ?? null,
      }) + "\n",
    );
  } else {
    const what = whatOf(pending);
    await writeOut(`${word} ${taskId}: ${pending.tool} ${what}${reason ? ` (${reason})` : ""}\n`);
  }
  await writeErr(
    `[murmur] the task goes on${state ? ` (${stateWord(state)})` : ""}; follow it: ${
      murLine("watch", ...target.again, "--task", taskId.slice(-6))
    }\n`,
  );
}

async function targetOf(url: string | undefined, session: string | undefined): Promise<Target> {
  if (url !== undefined) {
    const u = url.replace(/^https?:\/\//, "").replace(/\/+$/, "");
    return {
      url: u,
      name: u,
      token: Deno.env.get("MURMUR_DOOR_TOKEN") || undefined,
      again: ["--url", u],
    };
  }
  const address = session ?? "@1";
  const { record } = await resolveSession(address);
  return {
    url: record.url,
    name: record.session_id,
    token: record.tokens?.operator ?? record.approval_token,
    again: session === undefined ? [] : [address],
  };
}

/** The task's pending approval (GetTask's `approval` artifact), or the error saying what it waits for. */
async function pendingApproval(t: Target, taskId: string, command: string): Promise<Pending> {
  const got = await callDoor(t.url, "GetTask", { id: taskId, historyLength: 0 }, t.token);
  if (!got.ok) {
    if (got.code === RPC_ERRORS.taskNotFound.code) {
      throw new MurError("E-RUN-048", `${t.name} holds no task ${taskId}`, taskHint());
    }
    throw new MurError(
      "E-IO-004",
      `${t.name} refused GetTask for ${taskId}: ${got.code} ${got.message}`,
    );
  }
  const task = got.result as {
    status?: { state?: string };
    artifacts?: { artifactId?: string; parts?: { data?: unknown; text?: string }[] }[];
  };
  const state = task.status?.state ?? "TASK_STATE_UNSPECIFIED";
  const data = task.artifacts?.find((a) => a.artifactId === "approval")?.parts?.[0]?.data as
    | Pending
    | undefined;
  if (state === "TASK_STATE_INPUT_REQUIRED" && data && typeof data.argumentsHash === "string") {
    return data;
  }
  const asks = task.artifacts?.find((a) => a.artifactId === "prompt")?.parts?.[0]?.text;
  throw new MurError(
    "E-RUN-070",
    state === "TASK_STATE_INPUT_REQUIRED"
      ? `task ${taskId} waits for an answer to its question, not for an approval: ${asks ?? ""}`
        .trimEnd()
      : `task ${taskId} is ${stateWord(state)}, not waiting for an approval; nothing to ${command}`,
    state === "TASK_STATE_INPUT_REQUIRED"
      ? "answer the question with a message naming the task (docs/door.md)"
      : `\`${
        murLine("watch", "--task", taskId.slice(-6))
      }\` shows an approval as [input-required] approve …?`,
  );
}

/** No TASK given: the one task of the session waiting for an approval, or E-RUN-070 saying why not. */
async function onlyWaiting(t: Target, command: string): Promise<string> {
  const waiting: { id: string; what: string }[] = [];
  let pageToken = "";
  for (let page = 0; page < 1000; page++) {
    const answer = await callDoor(t.url, "ListTasks", {
      status: "TASK_STATE_INPUT_REQUIRED",
      includeArtifacts: true,
      pageSize: 100,
      pageToken,
    }, t.token);
    if (!answer.ok) {
      throw new MurError(
        "E-IO-004",
        `${t.name} refused ListTasks, which finds the task waiting for an approval: ${answer.code} ${answer.message}`,
        "name the TASK instead",
      );
    }
    const r = answer.result as {
      tasks?: {
        id?: unknown;
        artifacts?: { artifactId?: string; parts?: { data?: unknown }[] }[];
      }[];
      nextPageToken?: unknown;
    };
    for (const task of r.tasks ?? []) {
      const data = task.artifacts?.find((a) => a.artifactId === "approval")?.parts?.[0]?.data as
        | Pending
        | undefined;
      if (typeof task.id === "string" && data && typeof data.argumentsHash === "string") {
        waiting.push({ id: task.id, what: `${data.tool}: ${whatOf(data)}` });
      }
    }
    if (typeof r.nextPageToken !== "string" || r.nextPageToken === "") break;
    pageToken = r.nextPageToken;
  }
  if (waiting.length === 1) return waiting[0].id;
  if (waiting.length === 0) {
    throw new MurError(
      "E-RUN-070",
      `no task of ${t.name} waits for an approval; nothing to ${command}`,
      `\`${murLine("watch")}\` shows an approval as [input-required] approve …?`,
    );
  }
  throw new MurError(
    "E-RUN-070",
    `${waiting.length} tasks of ${t.name} wait for an approval: ${
      waiting.map((w) => `${w.id.slice(-6)} (${w.what})`).join(", ")
    }`,
    `name one: \`${murLine(command, ...t.again, waiting[0].id.slice(-6))}\``,
  );
}

/** The call as a person reads it: the shell line, else the arguments. */
function whatOf(p: Pending): string {
  const cmd = p.arguments?.command;
  if (typeof cmd === "string") return cmd;
  return p.arguments ? JSON.stringify(p.arguments) : p.argumentsPreview ?? "";
}
