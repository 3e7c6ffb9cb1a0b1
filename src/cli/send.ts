/**
 * `mur send [TASK_TEXT]` (docs/steering.md): a new task for a running session, or a follow-up in
 * a conversation (`--context`), its text from the argument or stdin. Prints the task, then on
 * stderr how to follow, answer and continue it; `--follow` streams the task as
 * `mur watch --task` does and exits by its outcome.
 */
import { usageText } from "../invocation.ts";
import { MurError } from "../errors.ts";
import { stateWord } from "../watch/format.ts";
import { watch } from "../watch/watch.ts";
import { parse, usageError } from "./args.ts";
import { getTask } from "./watch.ts";
import { writeErr, writeOut } from "./output.ts";
import { sendMessage, statusText } from "./steer_call.ts";
import { freshLook } from "./fresh_look.ts";
import { taskMessage } from "./steer_messages.ts";
import {
  resolveTarget,
  shortTask,
  steerLine,
  type SteerTarget,
  TARGET_FLAGS,
  TARGET_USAGE,
} from "./steer_target.ts";
import { murLine } from "../invocation.ts";

export const USAGE = `usage: mur send [TASK_TEXT] [options]
       echo TASK_TEXT | mur send [options]

Sends a task to a running session (SendMessage): a new task, or a follow-up in a conversation.
Without TASK_TEXT the task's text is read from stdin.

${TARGET_USAGE}
  --context CTX          a follow-up in this conversation (its ctx_ id, as mur send and
                         mur watch --json show it); without it, a new conversation
  --follow               stream the task as mur watch --task does, and exit by its outcome
  --json                 print the task as the door answered it, one JSON line
  -h, --help             this text

Exit: 0 the task was taken (with --follow: it completed); 1 an error (E-IO-003 no door, E-IO-004
a refusal, or the capsule rejected the task); 2 a usage error; with --follow, 3 when the task
failed or was rejected, 4 when it was canceled, 1 when the connection was lost first.`;

export const FLAGS = {
  ...TARGET_FLAGS,
  context: { type: "string" },
  follow: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function sendCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse("send", args, FLAGS, USAGE);
  if (values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  if (positionals.length > 1) {
    throw usageError("send", "give the task's text as one argument (quote it)", USAGE);
  }
  if (values.context !== undefined && !/^\S+$/.test(values.context)) {
    throw usageError("send", "--context needs a context id (ctx_…)", USAGE);
  }
  const text = positionals[0] ?? await readStdin();
  if (text === null || text.trim() === "") {
    throw usageError("send", "give the task's text, as TASK_TEXT or on stdin", USAGE);
  }
  const target = await resolveTarget("send", values, USAGE);
  const task = await sendMessage(target, taskMessage(text, values.context));
  const word = stateWord(task.status.state);
  if (word === "rejected") {
    throw new MurError(
      "E-IO-004",
      `${target.name} rejected the task: ${statusText(task) || "no reason given"}`,
      "the capsule is busy or closing: try again once a task ends, or start another capsule",
    );
  }
  if (values.json) await writeOut(JSON.stringify(task) + "\n");
  else {
    await writeOut(
      [`task:    ${task.id}`, `context: ${task.contextId ?? "-"}`, `state:   ${word}`].join("\n") +
        "\n",
    );
  }
  if (!values.follow) {
    await writeErr(hints(target, task.id, task.contextId).join("\n") + "\n");
    return 0;
  }
  return await followTask(target, task.id, values.json ?? false);
}

/** What to run next: follow, answer, continue, cancel. */
function hints(target: SteerTarget, taskId: string, contextId?: string): string[] {
  const label = shortTask(taskId);
  const session = target.address[0] === "--session" ? [target.address[1]] : target.address;
  return [
    `[murmur] follow it:  ${murLine("watch", ...session, "--task", label)}`,
    `[murmur] answer it when it asks: ${steerLine(target, "answer", label, "TEXT")}`,
    ...(contextId
      ? [`[murmur] follow up:  ${steerLine(target, "send", "--context", contextId, "TEXT")}`]
      : []),
    `[murmur] cancel it:  ${murLine("cancel", ...session, label)}`,
  ];
}

/** `--follow`: the task's stream until it ends; the exit code by its outcome. */
export async function followTask(
  target: SteerTarget,
  taskId: string,
  json: boolean,
): Promise<number> {
  return await watch(target, { stdout: writeOut, stderr: writeErr }, {
    json,
    color: false,
    terminal: Deno.stdout.isTerminal(),
    connectedLine: `[murmur] following ${taskId} on ${target.name}`,
    task: { id: taskId, check: () => getTask(target, taskId) },
    exitStatus: true,
    lookAgain: (ending) => freshLook(target.url, target.record, ending),
    answerCommand: (id) => steerLine(target, "answer", shortTask(id), "TEXT"),
    decideCommand: (verb, id) => steerLine(target, verb, shortTask(id)),
  });
}

/** All of stdin as text, or null when stdin is a terminal (nothing piped). */
async function readStdin(): Promise<string | null> {
  if (Deno.stdin.isTerminal()) return null;
  // `echo TEXT | mur send`: the line end echo adds is not part of the task.
  return (await new Response(Deno.stdin.readable).text()).replace(/\r?\n$/, "");
}
