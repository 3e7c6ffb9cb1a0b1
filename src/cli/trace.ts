/**
 * `mur trace show [SESSION] [--workdir DIR]` and `mur trace steps [SESSION] [--workdir DIR]`:
 * read a session's trace.jsonl. SESSION (default @1) is resolved among the `ses_*` folders of
 * DIR (default ./workdir), or is a path to a session folder or trace file. Without --workdir
 * and with no session folders in ./workdir, the running sessions' workdirs are the candidates.
 */

import { listRunningRecords } from "../session/running.ts";
import { parse, UsageError, usageFailure } from "./args.ts";
import { writeOut } from "./output.ts";
import { resolveSessionDir, type SessionDir, sessionDirs } from "./session_dirs.ts";
import { readTrace } from "./trace_read.ts";
import { showTrace } from "./trace_show.ts";
import { stepsTree } from "./trace_steps.ts";

const USAGE = `usage: mur trace show [SESSION] [--workdir DIR]
       mur trace steps [SESSION] [--workdir DIR]

SESSION is @N (N-th newest, default @1), a full ses_ id, a unique suffix of 4+ characters,
or a path to a session folder or its trace.jsonl. DIR holds the ses_… folders (default ./workdir).`;

export async function traceCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(args, {
      workdir: { type: "string" },
      help: { type: "boolean", short: "h" },
    }, USAGE);
    if (parsed.values.help) {
      console.log(USAGE);
      return 0;
    }
    const [sub, ...rest] = parsed.positionals;
    if (sub !== "show" && sub !== "steps") {
      throw new UsageError(sub ? `unknown trace command '${sub}'` : "give show or steps", USAGE);
    }
    if (rest.length > 1) throw new UsageError("too many arguments", USAGE);
  } catch (e) {
    if (e instanceof UsageError) return usageFailure("trace", e);
    throw e;
  }
  const [sub, address = "@1"] = parsed.positionals;
  const root = parsed.values.workdir ?? "./workdir";
  let candidates: SessionDir[] = await sessionDirs(root);
  let where = root;
  if (candidates.length === 0 && parsed.values.workdir === undefined) {
    candidates = (await listRunningRecords().catch(() => [])).map((r) => ({
      sessionId: r.session_id,
      dir: r.workdir,
    }));
    where = `${root} or the running sessions`;
  }
  const { trace } = await resolveSessionDir(address, candidates, where);
  const events = await readTrace(trace);
  const lines = sub === "show" ? showTrace(events) : stepsTree(events);
  await writeOut(lines.join("\n") + "\n");
  return 0;
}
