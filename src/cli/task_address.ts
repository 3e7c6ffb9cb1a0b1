/**
 * A task named on the command line: a full `tsk_` id, or a unique suffix of 4 to 32 of its hex
 * digits — the 6 that `mur watch` labels a status line with (`[tsk a1b2c3]`, src/watch/format.ts).
 * Every flag and argument that takes a task takes both: `mur cancel SESSION TASK` and
 * `mur watch --task TASK`. A suffix is looked up with ListTasks on the session's door.
 */
import { MurError } from "../errors.ts";
import { callDoor } from "./door_call.ts";
import { murLine } from "../invocation.ts";

export const TASK_ID = /^tsk_[0-9a-f]{32}$/;
export const TASK_SUFFIX = /^[0-9a-f]{4,32}$/;

/** Where task labels come from, for a hint beside "no such task". */
export const taskHint = () =>
  `\`${
    murLine("watch")
  }\` names each status line's task as [tsk a1b2c3] (--labels on every line); a task is those 6 hex digits or its full tsk_ id`;

/** The one task of the session whose id ends with `suffix` (ListTasks, every page). */
export async function taskBySuffix(
  url: string,
  name: string,
  suffix: string,
  token: string | undefined,
): Promise<string> {
  const matches: string[] = [];
  let pageToken = "";
  for (let page = 0; page < 1000; page++) {
    const answer = await callDoor(url, "ListTasks", { pageSize: 100, pageToken }, token);
    if (!answer.ok) {
      throw new MurError(
        "E-IO-004",
        `${name} refused ListTasks, which finds the task ending in ${suffix}: ${answer.code} ${answer.message}`,
        "give the full tsk_ id instead",
      );
    }
    const r = answer.result as { tasks?: { id?: unknown }[]; nextPageToken?: unknown };
    for (const t of r.tasks ?? []) {
      if (typeof t.id === "string" && t.id.endsWith(suffix)) matches.push(t.id);
    }
    if (typeof r.nextPageToken !== "string" || r.nextPageToken === "") break;
    pageToken = r.nextPageToken;
  }
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) {
    throw new MurError("E-RUN-048", `${name} holds no task ending in ${suffix}`, taskHint());
  }
  throw new MurError(
    "E-RUN-048",
    `'${suffix}' is ambiguous in ${name}: it ends ${matches.sort().join(", ")}`,
    "give more digits, or the full tsk_ id",
  );
}
