/**
 * `mur cancel SESSION TASK_ID` / `mur cancel --url HOST:PORT TASK_ID`: CancelTask through the
 * door. Prints the task and its state, then what keeps running (detached shells, delegations).
 * A task that had already ended is reported as it is and left unchanged (exit 0).
 */
import { MurError } from "../errors.ts";
import { resolveSession } from "../session/running.ts";
import { stateWord } from "../watch/format.ts";
import { parse, UsageError, usageFailure } from "./args.ts";
import { callDoor } from "./door_call.ts";
import { writeOut } from "./output.ts";
import { residueLine, residueOfTask } from "./residue.ts";

const USAGE = `usage: mur cancel SESSION TASK_ID
       mur cancel --url HOST:PORT TASK_ID

SESSION is @N, a full ses_ id, or a unique suffix of 4+ characters.
--url presents $MURMUR_DOOR_TOKEN as the bearer token when it is set.`;

export async function cancelCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(args, { url: { type: "string" }, help: { type: "boolean", short: "h" } }, USAGE);
    if (parsed.values.help) {
      console.log(USAGE);
      return 0;
    }
    const want = parsed.values.url === undefined ? 2 : 1;
    if (parsed.positionals.length !== want) {
      throw new UsageError(
        want === 2 ? "give a SESSION and a TASK_ID" : "with --url, give only the TASK_ID",
        USAGE,
      );
    }
  } catch (e) {
    if (e instanceof UsageError) return usageFailure("cancel", e);
    throw e;
  }
  const { values, positionals } = parsed;

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
  const taskId = positionals.at(-1)!;

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
  if (answer.code === -32002) {
    // Already ended: the door says in which state; nothing was changed.
    const info = Array.isArray(answer.data) ? answer.data[0] : undefined;
    const state = info?.metadata?.state;
    await writeOut(
      `task:    ${taskId}\nstate:   ${typeof state === "string" ? stateWord(state) : "ended"}\n`,
    );
    return 0;
  }
  if (answer.code === -32001) {
    throw new MurError(
      "E-IO-003",
      `${name} holds no task ${taskId} (${answer.code} ${answer.message})`,
      "mur watch shows the ids of the session's tasks",
    );
  }
  throw new MurError(
    "E-IO-003",
    `${name} refused CancelTask for ${taskId}: ${answer.code} ${answer.message}`,
  );
}
