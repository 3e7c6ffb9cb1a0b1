/**
 * What happens when the model stops (a turn with no tool calls, or a harness ending its run):
 * the attempt completes, unless a continuation has one more user message for it. Both
 * transports ask here, so a reason to go on is written once: work the task handed off (member
 * answers and delegation outcomes that arrive after the turn ended; docs/crews.md), then
 * `lifecycle.keep_working` (docs/hooks.md).
 */
import { answersMessage, continuingStatus, waitingStatus } from "../crew/calls/answers_message.ts";
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

/**
 * Work the task handed off (`call-member`, `delegate-task`; docs/crews.md): once the model
 * stops with turns left, wait until every call and delegation has ended (WORKING `waiting on …`
 * while some are out), then go on once with every answer in one user message (`continuing with
 * …`). Answers that all arrived during the turn need no wait and write no waiting status.
 */
export function handedOffWork(d: LoopDeps): Continuation {
  return {
    async next(run, _reply, parent) {
      const { task, counters: c } = run;
      const work = task.handedOff;
      const signal = task.abort.signal;
      if (!work || !work.pending() || signal.aborted) return null;
      // No turn left to read the answers: the loop's end stops what is still out.
      if (c.turns >= d.manifest.inference.maxTurns) return null;
      const waitStarted = d.clock();
      await work.settle(signal, (o) => {
        d.registry.status(task, "TASK_STATE_WORKING", waitingStatus(o));
      });
      if (signal.aborted) return null;
      const round = work.takeArrived();
      if (round.length === 0) return null;
      recordWorking(d, task, {
        line: "task_continued",
        parent,
        fields: {
          task_id: task.id,
          member_calls: round.filter((w) => w.kind === "call").map((w) => w.id),
          delegations: round.filter((w) => w.kind === "delegation").map((w) => w.id),
          waited_ms: d.clock() - waitStarted,
          turns_remaining: d.manifest.inference.maxTurns - c.turns,
        },
        status: continuingStatus(round),
      });
      return answersMessage(round);
    },
  };
}
