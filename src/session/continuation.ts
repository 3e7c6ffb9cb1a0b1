/**
 * What happens when the model stops (a turn with no tool calls, or a harness ending its run):
 * the attempt completes, unless a continuation has one more user message for it. Both
 * transports ask here, so a reason to go on is written once: today `lifecycle.keep_working`
 * (README "Hooks and the session loop"); work the task still waits on (answers that arrive after
 * the turn ended) is one more `Continuation` in the list the loop builds.
 */
import { recordWorking } from "./facts.ts";
import type { LoopDeps, TaskRun } from "./task_run.ts";

export interface Continuation {
  /**
   * The model stopped with `reply`: the next user message, or null. `parent` is the event id
   * the continuation's trace line hangs under (the turn's `inference` line, or `task_start`).
   */
  next(run: TaskRun, reply: string, parent: string): Promise<string | null>;
}

/** The first continuation with a message wins; the message joins the conversation. */
export async function continueAfterStop(
  continuations: Continuation[],
  run: TaskRun,
  reply: string,
  parent: string,
): Promise<boolean> {
  for (const c of continuations) {
    const content = await c.next(run, reply, parent);
    if (content === null) continue;
    run.messages.push({ role: "user", content });
    return true;
  }
  return false;
}

/**
 * `lifecycle.keep_working`: the model stopped before its reply says `until`; send `message`, up
 * to `limit` times per task, while turns remain.
 */
export function keepWorking(d: LoopDeps): Continuation {
  return {
    next(run, reply, parent) {
      const kw = d.manifest.lifecycle.keepWorking;
      const c = run.counters;
      if (
        !kw || (kw.until !== undefined && reply.includes(kw.until)) || c.nudges >= kw.limit ||
        c.turns >= d.manifest.inference.maxTurns || run.task.abort.signal.aborted
      ) {
        return Promise.resolve(null);
      }
      c.nudges++;
      recordWorking(d, run.task, {
        line: "keep_working",
        parent,
        fields: {
          task_id: run.task.id,
          turn: c.turns - 1,
          nudge_number: c.nudges,
          limit: kw.limit,
        },
        status: `keep working ${c.nudges} of ${kw.limit}`,
      });
      return Promise.resolve(kw.message);
    },
  };
}
