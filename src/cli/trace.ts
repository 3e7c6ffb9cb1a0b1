/**
 * `mur trace show [SESSION] [--workdir DIR]` and `mur trace steps [SESSION] [--workdir DIR]`:
 * read a session's trace.jsonl. SESSION (default @1) is resolved among the `ses_*` folders of
 * DIR (default ./workdir), or is a path to a session folder or trace file. Without --workdir
 * and with no session folders in ./workdir, the running sessions' workdirs are the candidates.
 */

import { listRunningRecords, sessionDirOf } from "../home/running_records.ts";
import { usageText } from "../invocation.ts";
import { parse, UsageError, usageError } from "./args.ts";
import { writeOut } from "./output.ts";
import { resolveSessionDir, type SessionDir, sessionDirs } from "./session_dirs.ts";
import { readTrace } from "./trace_read.ts";
import { showTrace } from "./trace_show.ts";
import { stepsTree } from "./trace_steps.ts";

export const USAGE = `usage: mur trace show [SESSION] [--workdir DIR]
       mur trace steps [SESSION] [--workdir DIR]

Reads a session's trace.jsonl: show prints a summary (turns, tokens, tool calls by task, …),
steps the session → task → turn tree.

  SESSION        @N (N-th newest, default @1), a full ses_ id, a unique suffix of 4+ characters,
                 or a path to a session folder or its trace.jsonl
  --workdir DIR  where to look for sessions: the ses_… folders in DIR and in DIR/.murmur (what
                 mur run --workdir DIR leaves); default ./workdir, else the running sessions
  -h, --help     this text`;

export const FLAGS = {
  workdir: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function traceCommand(args: string[]): Promise<number> {
  const parsed = parse("trace", args, FLAGS, USAGE);
  if (parsed.values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  const [first, ...more] = parsed.positionals;
  if (first !== "show" && first !== "steps") {
    throw first
      ? new UsageError("E-CLI-001", `mur trace: unknown command '${first}' (show or steps)`, USAGE)
      : usageError("trace", "give show or steps", USAGE);
  }
  if (more.length > 1) throw usageError("trace", "give one SESSION at most", USAGE);
  const [sub, address = "@1"] = parsed.positionals;
  const root = parsed.values.workdir ?? "./workdir";
  let candidates: SessionDir[] = await sessionDirs(root);
  let where = root;
  if (candidates.length === 0 && parsed.values.workdir === undefined) {
    candidates = (await listRunningRecords().catch(() => [])).map((r) => ({
      sessionId: r.session_id,
      dir: sessionDirOf(r),
    }));
    where = `${root} or the running sessions`;
  }
  const { trace, sessionId } = await resolveSessionDir(address, candidates, where);
  const events = await readTrace(trace, sessionId);
  const lines = sub === "show" ? showTrace(events) : stepsTree(events);
  await writeOut(lines.join("\n") + "\n");
  return 0;
}
