/**
 * Where `mur send`, `mur answer` and `mur attach` send: a session named as `mur watch` names one
 * (`--session`: `@N`, default `@1`, a full `ses_` id or a unique suffix; session_address.ts) with
 * the operator token from its running record (on a public door, its `approval_token`: the one
 * thing such a door takes only from the operator), or a door elsewhere (`--url HOST:PORT`, presenting
 * `$MURMUR_DOOR_TOKEN`). A task is its `tsk_` id or the label `mur watch` prints (task_address.ts).
 */
import { murLine } from "../invocation.ts";
import { resolveSession } from "./session_address.ts";
import { TASK_ID, TASK_SUFFIX, taskBySuffix } from "./task_address.ts";
import { badValue, usageError } from "./args.ts";
import type { WatchTarget } from "../watch/watch.ts";
import type { RunningRecord } from "../home/running_records.ts";

/** The flags every steering command takes to name its session. */
export const TARGET_FLAGS = {
  session: { type: "string", short: "s" },
  url: { type: "string" },
} as const;

export const TARGET_USAGE =
  `  -s, --session SESSION  @N (N-th newest, default @1), a full ses_ id, or a unique suffix of 4+
                         characters
  --url HOST:PORT        the door at this address instead; presents $MURMUR_DOOR_TOKEN when set`;

/** A door to steer: its address, how messages name it, the token, and the flags that reach it. */
export interface SteerTarget extends WatchTarget {
  /** `--session <id>` or `--url <addr>`: what a printed command line names the session with. */
  address: string[];
  /** The session's running record, when it was named by address (fresh_look.ts reads it). */
  record?: RunningRecord;
}

/** `--session` / `--url` → the door, its name and token (E-RUN-022/023 when nothing answers). */
export async function resolveTarget(
  command: string,
  values: { session?: string; url?: string },
  usage: string,
): Promise<SteerTarget> {
  if (values.session !== undefined && values.url !== undefined) {
    throw usageError(command, "give --session or --url, not both", usage);
  }
  if (values.url !== undefined) {
    const url = values.url.replace(/^https?:\/\//, "").replace(/\/+$/, "");
    return {
      url,
      name: url,
      token: Deno.env.get("MURMUR_DOOR_TOKEN") || undefined,
      address: ["--url", url],
    };
  }
  const { record } = await resolveSession(values.session ?? "@1");
  return {
    url: record.url,
    name: record.session_id,
    token: record.tokens?.operator ?? record.approval_token,
    address: ["--session", record.session_id],
    record,
  };
}

/** TASK as given → a full task id (a label is looked up with ListTasks); E-CLI-003 when neither. */
export async function resolveTask(
  command: string,
  target: SteerTarget,
  given: string,
  usage: string,
): Promise<string> {
  const t = given.trim().toLowerCase();
  if (TASK_ID.test(t)) return t;
  if (!TASK_SUFFIX.test(t)) {
    throw badValue(command, "TASK", given, "a tsk_ id or 4 to 32 of its last hex digits", usage);
  }
  return await taskBySuffix(target.url, target.name, t, target.token);
}

/** A mur command line that reaches the same session: `mur answer --session ses_… a1b2c3 TEXT`. */
export function steerLine(target: SteerTarget, command: string, ...args: string[]): string {
  return murLine(command, ...target.address, ...args);
}

/** The label `mur watch` prints for a task (the last 6 hex digits), else the id. */
export function shortTask(taskId: string): string {
  const m = /^tsk_[0-9a-f]{26}([0-9a-f]{6})$/.exec(taskId);
  return m ? m[1] : taskId;
}

/** A fresh messageId: each new message is new work (a reused id with other content is refused). */
export function newMessageId(): string {
  return `msg-cli-${crypto.randomUUID()}`;
}
