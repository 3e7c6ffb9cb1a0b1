/**
 * docs/hooks.md "Reopening a task" and docs/protocol.md "Reopened tasks": an on-task-end hook with
 * commit_policy reopen-task sends the task back; turns continue; the boundary status carries the
 * ordinal on activated connections only; limits end the task reopen_budget_exhausted.
 */
import assert from "node:assert/strict";
import { frameOf } from "../helpers/sse.ts";
import {
  artifactText,
  endCapsule,
  getTask,
  hookScript,
  messageOf,
  ofType,
  runLaunch,
  startCapsule,
  statusMessage,
  statusTexts,
  STREAM_URI,
  streamTask,
  taskIdOf,
  traceOf,
} from "./helpers.ts";

const gate = {
  "hooks/gate.sh": hookScript(`case "$in" in
  *'"result":"once-1"'*|*'"result":"always'*) echo '{"reopen_task":"Check the numbers again."}';;
  *) echo '{}';;
esac`),
};
const hooks = [{
  name: "review-gate",
  binding: "on-task-end",
  commit_policy: "reopen-task",
  command: ["./hooks/gate.sh"],
}];
const script = {
  tasks: [
    { match: "once", turns: [{ steps: [{ text: "once-1" }] }, { steps: [{ text: "once-2" }] }] },
    {
      match: "always",
      turns: [
        { steps: [{ text: "always-1" }] },
        { steps: [{ text: "always-2" }] },
        { steps: [{ text: "always-3" }] },
      ],
    },
  ],
};

Deno.test("reopen: boundary status, ordinal only when activated, turns continue, response is the accepted answer; per task fresh; budget exhausted", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "reopen",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
      hooks,
    },
    script,
    files: gate,
  });
  try {
    // Activated connection: the boundary carries metadata[URI].reopen = 1.
    const a = await streamTask(cap, "once please");
    const id = taskIdOf(a);
    assert.deepEqual(
      statusTexts(a),
      ["inference turn 1", "reopened by hook review-gate", "inference turn 2", "task completed"],
    );
    const boundary = a.find((e) => messageOf(e) === "reopened by hook review-gate")!;
    const su = (boundary.data.result as Record<string, Record<string, unknown>>).statusUpdate;
    assert.deepEqual(su.metadata, { [STREAM_URI]: { reopen: 1 } });
    assert.equal((su.status as { state: string }).state, "TASK_STATE_WORKING");
    // Text frames of both attempts were written live; the response is the accepted answer.
    const texts = a.map(frameOf).filter((f) => f?.frame === "text" && f.text).map((f) => f!.text);
    assert.deepEqual(texts, ["once-1", "once-2"]);
    const task = await getTask(cap, id);
    assert.equal((task.status as { state: string }).state, "TASK_STATE_COMPLETED");
    assert.equal(artifactText(task, "response"), "once-2");

    // Plain connection: the same boundary status, without the annotation; per-task count fresh.
    const b = await streamTask(cap, "once again", { activated: false });
    const plainBoundary = b.find((e) => messageOf(e) === "reopened by hook review-gate")!;
    assert.ok(plainBoundary, "a plain connection sees the boundary status too");
    const psu = (plainBoundary.data.result as Record<string, Record<string, unknown>>)
      .statusUpdate;
    assert.equal(psu.metadata, undefined);
    assert.equal(statusTexts(b).at(-1), "task completed");

    // A hook that keeps reopening: max_task_reopens 1 allows one, then the task fails.
    const c = await streamTask(cap, "always");
    const cid = taskIdOf(c);
    const msgs = statusTexts(c);
    assert.deepEqual(msgs.slice(0, 3), [
      "inference turn 1",
      "reopened by hook review-gate",
      "inference turn 2",
    ]);
    const refusal =
      "task reopen budget exhausted: hook review-gate still wanted a reopen after 1 of 1 allowed by lifecycle.max_task_reopens";
    assert.equal(msgs.at(-1), refusal);
    const ct = await getTask(cap, cid);
    assert.equal((ct.status as { state: string }).state, "TASK_STATE_FAILED");
    assert.equal(statusMessage(ct), refusal);
    assert.match(
      await Deno.readTextFile(`${cap.ready.workdir}/out/result.txt`),
      /^error: task reopen budget exhausted/,
    );

    await endCapsule(cap);
    const trace = await traceOf(cap.ready.workdir);
    const reopened = ofType(trace, "task_reopened");
    assert.equal(reopened.length, 3);
    assert.deepEqual(
      reopened.map((r) => [r.hook_name, r.reason, r.reopen_number, r.attempt_context]),
      [
        ["review-gate", "Check the numbers again.", 1, "continued"],
        ["review-gate", "Check the numbers again.", 1, "continued"],
        ["review-gate", "Check the numbers again.", 1, "continued"],
      ],
    );
    const ends = ofType(trace, "task_end");
    assert.deepEqual(
      ends.map((e) => [e.exit_status, e.reopen_count, e.turns]),
      [["ok", 1, 2], ["ok", 1, 2], ["reopen_budget_exhausted", 1, 2]],
    );
    const failed = ofType(trace, "task_failed").find((e) => e.task_id === cid)!;
    assert.equal(failed.cause, "reopen_budget_exhausted");
    assert.equal(failed.turn, undefined);
    // inference turns continue across attempts (0-based in the trace).
    assert.deepEqual(
      ofType(trace, "inference").filter((e) => e.task_id === id).map((e) => e.turn),
      [0, 1],
    );
  } finally {
    await cap.close();
  }
});

Deno.test("reopen: max_task_reopens 0 disables reopening; the turn budget refuses a reopen too", async () => {
  const none = await runLaunch({
    manifest: { name: "r0", version: "0.1.0", lifecycle: { max_task_reopens: 0 }, hooks },
    script,
    files: gate,
    task: "always",
  });
  try {
    assert.equal(none.code, 1);
    assert.equal(
      none.result,
      "error: task reopen budget exhausted: hook review-gate still wanted a reopen after 0 of 0 allowed by lifecycle.max_task_reopens",
    );
    assert.equal(ofType(none.trace, "task_reopened").length, 0);
    assert.equal(ofType(none.trace, "task_end")[0].exit_status, "reopen_budget_exhausted");
    assert.equal(ofType(none.trace, "task_end")[0].reopen_count, 0);
    assert.equal(ofType(none.trace, "session_end")[0].exit_status, "failed");
  } finally {
    await none.cleanup();
  }
  const turns = await runLaunch({
    manifest: {
      name: "r1",
      version: "0.1.0",
      inference: { max_turns: 1 },
      lifecycle: { max_task_reopens: 3 },
      hooks,
    },
    script,
    files: gate,
    task: "always",
  });
  try {
    assert.equal(
      turns.result,
      "error: task turn budget exhausted: hook review-gate still wanted a reopen, but the task has used all 1 turns of inference.max_turns",
    );
    assert.equal(ofType(turns.trace, "task_end")[0].exit_status, "reopen_budget_exhausted");
    assert.equal(ofType(turns.trace, "inference").length, 1);
  } finally {
    await turns.cleanup();
  }
});
