/**
 * `mur cancel SESSION TASK` / `mur cancel --url HOST:PORT TASK`: CancelTask through the door.
 * TASK is a full `tsk_` id or a unique suffix of it (the 6 hex digits `mur watch` labels a status
 * line with), looked up with ListTasks. Prints the task and its state, then what keeps running
 * (detached shells, delegations). A task that cannot be canceled (it has ended) is the door's
 * refusal, E-RUN-049, exit 1: nothing was changed.
 */
import { usageText } from "../invocation.ts";
import { TASK_ID, TASK_SUFFIX, taskBySuffix, taskHint } from "./task_address.ts";
import { RPC_ERRORS } from "../diagnostics.ts";
import { MurError } from "../errors.ts";
import { resolveSession } from "./session_address.ts";
import { stateWord } from "../watch/format.ts";
import { badValue, parse, usageError } from "./args.ts";
import { callDoor } from "./door_call.ts";
import { writeOut } from "./output.ts";
import { residueLine, residueOfTask } from "./residue.ts";

export const USAGE = `usage: mur cancel SESSION TASK
       mur cancel --url HOST:PORT TASK

Cancels one task of a running session (CancelTask) and prints its state and what keeps running.

  SESSION          @N (N-th newest), a full ses_ id, or a unique suffix of 4+ characters
  TASK             a full tsk_ id, or a unique suffix of 4+ characters of one: the 6 hex digits
                   mur watch shows as [tsk a1b2c3] (mur watch --labels shows them on every line)
  --url HOST:PORT  cancel at this door instead; presents $MURMUR_DOOR_TOKEN when set
  -h, --help       this text

Exit 1 when the session holds no such task (E-RUN-048) or the task cannot be canceled because it
has ended (E-RUN-049).`;

export const FLAGS = { url: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export async function cancelCommand(args: string[]): Promise<number> {
  const parsed = parse("cancel", args, FLAGS, USAGE);
  if (parsed.values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  const want = parsed.values.url === undefined ? 2 : 1;
  if (parsed.positionals.length !== want) {
    throw usageError(
      "cancel",
      want === 2 ? "give a SESSION and a TASK" : "with --url, give only the TASK",
      USAGE,
    );
  }
  const { values, positionals } = parsed;
  const given = positionals.at(-1)!.toLowerCase();
  if (!TASK_ID.test(given) && !TASK_SUFFIX.test(given)) {
    throw badValue(
      "cancel",
      "TASK",
      positionals.at(-1)!,
      "a tsk_ id or 4 to 32 of its last hex digits",
      USAGE,
    );
  }

  let url: string, name: string, token: string | undefined;
  if (values.url !== undefined) {
    url = values.url.replace(/^https?:\/\//, "").replace(/\/+$/, "");
    name = url;
    token = Deno.env.get("MURMUR_DOOR_TOKEN") || undefined;
  } else {
    const { record } = await resolveSession(positionals[0]);
    url = record.url;
    name = record.session_id;
    token = record.tokens?.operator;
  }
  const taskId = TASK_ID.test(given) ? given : await taskBySuffix(url, name, given, token);

  const answer = await callDoor(url, "CancelTask", { id: taskId }, token);
  if (answer.ok) {
    const task = answer.result as { id?: string; status?: { state?: string } };
    const lines = [
      `task:    ${task?.id ?? taskId}`,
      `state:   ${stateWord(task?.status?.state ?? "TASK_STATE_CANCELED")}`,
      ...residueOfTask(task).map(residueLine),
    ];
    await writeOut(lines.join("\n") + "\n");
    return 0;
  }
  if (answer.code === RPC_ERRORS.taskNotCancelable.code) {
    // Already ended: the door says in which state; nothing was changed.
    const info = Array.isArray(answer.data) ? answer.data[0] : undefined;
    const state = info?.metadata?.state;
    const ended = typeof state === "string" ? ` (it ended ${stateWord(state)})` : "";
    throw new MurError(
      "E-RUN-049",
      `${name} refused to cancel ${taskId}${ended}: ${answer.code} ${answer.message}`,
      "a task that has ended cannot be canceled; nothing was changed",
    );
  }
  if (answer.code === RPC_ERRORS.taskNotFound.code) {
    throw new MurError(
      "E-RUN-048",
      `${name} holds no task ${taskId} (${answer.code} ${answer.message})`,
      taskHint(),
    );
  }
  throw new MurError(
    "E-IO-004",
    `${name} refused CancelTask for ${taskId}: ${answer.code} ${answer.message}`,
  );
}
