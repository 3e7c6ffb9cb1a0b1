/**
 * `mur attach` (docs/steering.md): one terminal that follows a session as `mur watch` does and
 * reads lines from the person at it. A line answers the newest question a task waits on, or
 * else sends a follow-up task in the conversation seen last; `/approve` and `/deny [reason]`
 * decide the newest pending approval, `/steer [TASK] TEXT` steers a working task, `/cancel [TASK]` cancels the newest running task (or the
 * one named), `/quit` (or end of input) leaves. What each line did is said on stderr.
 */
import { usageText } from "../invocation.ts";
import { MurError } from "../errors.ts";
import { taskLabel } from "../watch/format.ts";
import { watch } from "../watch/watch.ts";
import { parse, usageError } from "./args.ts";
import { callDoor } from "./door_call.ts";
import { request } from "../http/http1_client.ts";
import { httpBase } from "../watch/card_probe.ts";
import { stdoutColor, stdoutWidth, writeErr, writeOut } from "./output.ts";
import { ATTACH_COMMANDS, AttachState, type LineAction, type Waiting } from "./attach_state.ts";
import { sendMessage } from "./steer_call.ts";
import { freshLook } from "./fresh_look.ts";
import { noSteerLine, offersSteer, steer } from "./attach_steer.ts";
import { answerMessage, approvalMessage, taskMessage } from "./steer_messages.ts";
import { resolveTarget, type SteerTarget, TARGET_FLAGS, TARGET_USAGE } from "./steer_target.ts";

export const USAGE = `usage: mur attach [options]

Follows a running session as mur watch does and reads lines: a line answers the question a task
waits on ([input-required]), or else sends a follow-up task in the conversation shown last.

  /approve              approve the call the newest pending approval asks about
  /deny [REASON]        deny it (the model reads the reason)
  /steer [TASK] TEXT    steer the newest working task (or the one whose label ends in TASK): it
                        reads TEXT at its next turn boundary; says how it was taken
  /cancel [TASK]        cancel the newest running task, or the one whose label ends in TASK
  /quit                 leave (so does end of input, Ctrl-D); the session keeps running

${TARGET_USAGE}
  --json                 the session's events as mur watch --json prints them (one JSON object
                         per line on stdout); what each typed line did stays on stderr
  -h, --help             this text

Exit: 0 after /quit or end of input, or when the capsule closes the stream; 1 with E-IO-003 when
the connection is lost (the capsule ended, or cannot be reached); 2 a usage error.`;

export const FLAGS = {
  ...TARGET_FLAGS,
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function attachCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse("attach", args, FLAGS, USAGE);
  if (values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  if (positionals.length > 0) {
    throw usageError("attach", "takes no arguments: name the session with --session", USAGE);
  }
  const target = await resolveTarget("attach", values, USAGE);
  const state = new AttachState();
  const quit = new AbortController();
  // The replay retells questions long answered: what waits is said once the replay reaches the
  // newest event there was at the start, then each new wait as it comes.
  const replayEnd = await newestEventId(target);
  const onEvent = (result: unknown, id: number | null) => {
    const w = state.see(result);
    if (id !== null && id < replayEnd) return;
    if (id !== null && id === replayEnd) {
      for (const waiting of state.waiting.values()) writeErr(asking(waiting)).catch(() => {});
    } else if (w) writeErr(asking(w)).catch(() => {});
  };
  const watching = watch(target, { stdout: writeOut, stderr: writeErr }, {
    json: values.json ?? false,
    labels: true,
    color: !values.json && stdoutColor("auto"),
    terminal: Deno.stdout.isTerminal(),
    width: stdoutWidth(),
    connectedLine:
      `[murmur] attached to ${target.name} at ${target.url}: type a line to answer or follow up; ${ATTACH_COMMANDS}`,
    signal: quit.signal,
    lookAgain: (ending) => freshLook(target.url, target.record, ending),
    onEvent,
  }).catch((e) => {
    if (quit.signal.aborted) return 0;
    throw e;
  });
  const reading = readLines(async (line) => {
    const action = state.line(line);
    if (action.kind === "quit") return false;
    await act(target, action);
    return true;
  }).then(() => {
    quit.abort();
    return 0;
  });
  // Whichever ends first: the person leaves, or the session's stream ends.
  return await Promise.race([watching, reading]);
}

/** The newest event id when attach starts (GET /ui/status `lastId`), or 0 when not told. */
async function newestEventId(target: SteerTarget): Promise<number> {
  try {
    const res = await request({
      url: `${httpBase(target.url)}/ui/status`,
      method: "GET",
      headers: target.token ? { authorization: `Bearer ${target.token}` } : {},
      signal: AbortSignal.timeout(5000),
    });
    const body = JSON.parse(await res.text());
    return typeof body?.lastId === "number" ? body.lastId : 0;
  } catch {
    return 0;
  }
}

/** The stderr line under a task that now waits on the person. */
function asking(w: Waiting): string {
  const label = taskLabel(w.taskId);
  if (w.approval) {
    return `[murmur] ${label} asks to approve ${w.approval.tool}: /approve or /deny [reason]\n`;
  }
  return `[murmur] ${label} waits for input: type the answer\n`;
}

/** Does what a line asked; a refusal is told and attach goes on. */
async function act(target: SteerTarget, action: LineAction): Promise<void> {
  try {
    switch (action.kind) {
      case "nothing":
      case "quit":
        return;
      case "say":
        return await writeErr(`[murmur] ${action.text}\n`);
      case "answer": {
        await sendMessage(target, answerMessage(action.taskId, action.text));
        return await writeErr(`[murmur] answered ${taskLabel(action.taskId)}\n`);
      }
      case "task": {
        const t = await sendMessage(target, taskMessage(action.text, action.contextId));
        const how = action.contextId ? ` (a follow-up in ${action.contextId})` : "";
        return await writeErr(
          `[murmur] sent ${taskLabel(t.id)}${how}: ${
            t.status.state.replace("TASK_STATE_", "").toLowerCase()
          }\n`,
        );
      }
      case "decide": {
        await sendMessage(
          target,
          approvalMessage(action.taskId, action.approve, action.argumentsHash, action.reason),
        );
        return await writeErr(
          `[murmur] ${action.approve ? "approved" : "denied"} ${taskLabel(action.taskId)}\n`,
        );
      }
      case "steer": {
        // The answer comes at the task's next turn boundary: told when it comes, while the
        // person goes on typing.
        if (!(await offersSteer(target))) return await writeErr(noSteerLine(target) + "\n");
        await writeErr(`[murmur] steering ${taskLabel(action.taskId)}\n`);
        steer(target, action.taskId, action.text).then((line) => writeErr(line + "\n"))
          .catch(() => {});
        return;
      }
      case "cancel": {
        const a = await callDoor(target.url, "CancelTask", { id: action.taskId }, target.token);
        return await writeErr(
          a.ok
            ? `[murmur] canceled ${taskLabel(action.taskId)}\n`
            : `[murmur] could not cancel ${taskLabel(action.taskId)}: ${a.code} ${a.message}\n`,
        );
      }
    }
  } catch (e) {
    if (!(e instanceof MurError)) throw e;
    await writeErr(e.format() + "\n");
  }
}

/** Calls `each` per line of stdin until it returns false or input ends. */
async function readLines(each: (line: string) => Promise<boolean>): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of Deno.stdin.readable) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!(await each(line))) return;
    }
  }
  if (buffered !== "") await each(buffered);
}
