/**
 * The lifecycle decisions (src/session/lifecycle.ts) as tables: every task_acceptance × after_task
 * combination against the answer docs/running.md gives, and the worker's `next` step
 * for every state it can be in, against a plain reading of the rules written out here.
 */
import assert from "node:assert/strict";
import {
  backgroundResult,
  doorTaskDecides,
  hasRoomFor,
  type LifecycleMode,
  next,
  sleepsBetweenTasks,
  takesTasks,
  type WorkerState,
  type WorkerStep,
} from "../../src/session/lifecycle.ts";
import type { AfterTask, TaskAcceptance } from "../../src/manifest/types.ts";

const ACCEPT: TaskAcceptance[] = ["none", "single", "queue"];
const AFTER: AfterTask[] = ["exit", "sleep"];

// [acceptance, after_task, takes tasks, sleeps, background result]
const MODES: [TaskAcceptance, AfterTask, boolean, boolean, string][] = [
  ["none", "exit", false, false, "lost"],
  ["none", "sleep", false, false, "lost"],
  ["single", "exit", true, false, "lost"],
  ["single", "sleep", true, false, "lost"],
  ["queue", "exit", true, false, "while_queued"],
  ["queue", "sleep", true, true, "delivered"],
];

Deno.test("lifecycle: each acceptance × after_task takes tasks, sleeps, and keeps a detached result as the README says", () => {
  assert.equal(MODES.length, ACCEPT.length * AFTER.length);
  for (const [taskAcceptance, afterTask, takes, sleeps, bg] of MODES) {
    const lc: LifecycleMode = { taskAcceptance, afterTask };
    const name = `${taskAcceptance} + ${afterTask}`;
    assert.equal(takesTasks(lc), takes, name);
    assert.equal(sleepsBetweenTasks(lc), sleeps, name);
    assert.equal(backgroundResult(lc), bg, name);
  }
});

Deno.test("lifecycle: the door's room for one more task, per acceptance", () => {
  // [acceptance, accepted any, waiting, queue depth, room]
  const rows: [TaskAcceptance, boolean, number, number, boolean][] = [
    ["none", false, 0, 1, false],
    ["single", false, 0, 1, true],
    ["single", true, 0, 1, false],
    ["queue", true, 0, 1, true],
    ["queue", true, 1, 1, false],
    ["queue", true, 2, 3, true],
    ["queue", false, 3, 3, false],
  ];
  for (const [taskAcceptance, acceptedAny, waiting, queueDepth, room] of rows) {
    const got = hasRoomFor({ taskAcceptance, afterTask: "exit", queueDepth }, {
      acceptedAny,
      waiting: () => waiting,
    });
    assert.equal(got, room, JSON.stringify({ taskAcceptance, acceptedAny, waiting, queueDepth }));
  }
});

Deno.test("lifecycle: whether a door task's ending decides mur run's status", () => {
  for (const taskAcceptance of ACCEPT) {
    for (const afterTask of AFTER) {
      for (const closing of [false, true]) {
        for (const stopped of [false, true]) {
          for (const queueEmpty of [false, true]) {
            const lc = { taskAcceptance, afterTask };
            const got = doorTaskDecides(lc, { closing, stopped, queueEmpty: () => queueEmpty });
            // docs/running.md: a sleeping capsule's door tasks never decide; the others
            // do when the capsule ends after them or is closing / stopped.
            const want = taskAcceptance === "queue" && afterTask === "sleep"
              ? false
              : closing || stopped || taskAcceptance !== "queue" || queueEmpty;
            assert.equal(got, want, JSON.stringify({ lc, closing, stopped, queueEmpty }));
          }
        }
      }
    }
  }
});

/** The worker's rules as a reader states them, one sentence per line. */
function expected(s: WorkerState): WorkerStep {
  const { taskAcceptance, afterTask } = s.lifecycle;
  if (s.closing) return "end"; // closing: nothing new starts
  if (taskAcceptance !== "queue" && s.ranAny) return "end"; // single / none: one task, then end
  if (s.hasNext) return "run"; // something queued: run it
  if (taskAcceptance === "none") return "end"; // nothing to wait for
  if (taskAcceptance === "queue" && afterTask === "sleep") return "sleep"; // sleep until woken
  if (s.ranAny) return "end"; // queue + exit with an empty queue
  if (s.stopped) return "end"; // stopped before any task
  if (s.waitedInVain) return "end"; // idle_timeout passed with no task
  return "wait"; // wait (bounded) for a first task
}

Deno.test("lifecycle: next(state) over every state the worker can be in", () => {
  const seen = new Set<WorkerStep>();
  let rows = 0;
  const flags = [false, true];
  for (const taskAcceptance of ACCEPT) {
    for (const afterTask of AFTER) {
      for (const closing of flags) {
        for (const stopped of flags) {
          for (const ranAny of flags) {
            for (const hasNext of flags) {
              for (const waitedInVain of flags) {
                // A stopped session never has a next task to start.
                if (stopped && hasNext) continue;
                const s: WorkerState = {
                  lifecycle: { taskAcceptance, afterTask },
                  closing,
                  stopped,
                  ranAny,
                  hasNext,
                  waitedInVain,
                };
                const got = next(s);
                assert.equal(got, expected(s), JSON.stringify(s));
                seen.add(got);
                rows++;
              }
            }
          }
        }
      }
    }
  }
  assert.equal(rows, 6 * 24);
  assert.deepEqual([...seen].sort(), ["end", "run", "sleep", "wait"]);
});

Deno.test("lifecycle: named rows of the worker table", () => {
  const base = { closing: false, stopped: false, waitedInVain: false };
  const row = (a: TaskAcceptance, t: AfterTask, ranAny: boolean, hasNext: boolean) =>
    next({ ...base, lifecycle: { taskAcceptance: a, afterTask: t }, ranAny, hasNext });
  // single runs its one task and ends, even with a generated task queued behind it.
  assert.equal(row("single", "exit", false, true), "run");
  assert.equal(row("single", "exit", true, true), "end");
  // none runs the launch task (queued before the worker starts) and ends.
  assert.equal(row("none", "exit", false, true), "run");
  assert.equal(row("none", "sleep", false, false), "end");
  // queue + exit runs until its queue is empty.
  assert.equal(row("queue", "exit", true, true), "run");
  assert.equal(row("queue", "exit", true, false), "end");
  // queue + sleep sleeps between tasks.
  assert.equal(row("queue", "sleep", true, false), "sleep");
  // Before a first task, a capsule that does not sleep waits (bounded) for one.
  assert.equal(row("single", "exit", false, false), "wait");
  assert.equal(row("queue", "exit", false, false), "wait");
});
