/**
 * `mur answer TASK TEXT` (docs/steering.md): the reply to a task waiting for input
 * (`[input-required]` in mur watch), sent as a SendMessage naming the task. Prints the task and
 * its state (working again), then how to follow it.
 */
import { usageText } from "../invocation.ts";
import { murLine } from "../invocation.ts";
import { stateWord } from "../watch/format.ts";
import { parse, usageError } from "./args.ts";
import { writeErr, writeOut } from "./output.ts";
import { sendMessage } from "./steer_call.ts";
import { answerMessage } from "./steer_messages.ts";
import {
  resolveTarget,
  resolveTask,
  shortTask,
  TARGET_FLAGS,
  TARGET_USAGE,
} from "./steer_target.ts";

export const USAGE = `usage: mur answer [options] TASK TEXT

Answers a task that waits for input ([input-required] in mur watch) with TEXT (SendMessage
naming the task).

  TASK                   the task's tsk_ id, or its label: the 6 hex digits mur watch shows as
                         [tsk a1b2c3], or any 4+ of its last digits
${TARGET_USAGE}
  --json                 print the task as the door answered it, one JSON line
  -h, --help             this text

Exit: 0 the answer was delivered; 1 an error (E-RUN-048 no such task, E-IO-004 the door refused:
the task is not waiting for input, E-IO-003 no door); 2 a usage error.`;

export const FLAGS = {
  ...TARGET_FLAGS,
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function answerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse("answer", args, FLAGS, USAGE);
  if (values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  if (positionals.length !== 2) {
    throw usageError("answer", "give a TASK and the TEXT of the answer (quote it)", USAGE);
  }
  const [given, text] = positionals;
  if (text.trim() === "") throw usageError("answer", "the answer's TEXT is empty", USAGE);
  const target = await resolveTarget("answer", values, USAGE);
  const taskId = await resolveTask("answer", target, given, USAGE);
  const task = await sendMessage(target, answerMessage(taskId, text));
  if (values.json) await writeOut(JSON.stringify(task) + "\n");
  else await writeOut(`task:    ${task.id}\nstate:   ${stateWord(task.status.state)}\n`);
  const session = target.address[0] === "--session" ? [target.address[1]] : target.address;
  await writeErr(
    `[murmur] follow it: ${murLine("watch", ...session, "--task", shortTask(task.id))}\n`,
  );
  return 0;
}
