/**
 * `mur approve [SESSION] [TASK]` / `mur approve --url HOST:PORT [TASK]`: approves the call a task
 * waits on (docs/approvals.md "From the terminal"); the shared flow is approval_reply.ts.
 */
import { APPROVAL_FLAGS, approvalCommand } from "./approval_reply.ts";

export const USAGE = `usage: mur approve [SESSION] [TASK] [--json]
       mur approve --url HOST:PORT [TASK] [--json]

Approves the tool call a task waits on (TASK_STATE_INPUT_REQUIRED, "approve bash: …?"): the call
runs and the task goes on. Only the session's operator token may answer; mur reads it from the
running record.

  SESSION          @N (N-th newest, default @1), a full ses_ id, or a unique suffix of 4+ characters
  -s, --session SESSION
                   the same, as mur send and mur answer name it
  TASK             a full tsk_ id, or its label: the 6 hex digits mur watch shows as [tsk a1b2c3]
                   (any 4+ of its last digits); left out: the one task waiting for an approval
  --url HOST:PORT  answer at this door instead; presents $MURMUR_DOOR_TOKEN when set
  --json           print one JSON object: {task, decision, tool, argumentsHash, state}
  -h, --help       this text

Exit 0 when the door took the answer; 1 when the session holds no such task (E-RUN-048), the task
waits for no approval, or without TASK none or several do (E-RUN-070), the door refused the answer (E-RUN-071: not the operator's
token, or the call waiting changed), or the door cannot be reached (E-IO-003, E-IO-004); 2 on a
usage error.`;

export const FLAGS = APPROVAL_FLAGS;

export function approveCommand(args: string[]): Promise<number> {
  return approvalCommand("approve", args, USAGE);
}
