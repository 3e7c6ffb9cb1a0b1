/**
 * lifecycle.keep_working and lifecycle.done_check (docs/hooks.md "keep_working and done_check";
 * docs/protocol.md "Task states and status messages": "Working status messages"): `keep working <n>
 * of <limit>` after a turn end, `done check failed, reopened <n> of <limit>` when the check's
 * command fails and the task reopens.
 */
import assert from "node:assert/strict";
import {
  endCapsule,
  getTask,
  ofType,
  runLaunch,
  startCapsule,
  statusTexts,
  STREAM_URI,
  streamTask,
  taskIdOf,
  traceOf,
} from "./helpers.ts";
import { artifactText, messageOf } from "./helpers.ts";
import { readConversation } from "../helpers/conversation.ts";

Deno.test("keep_working: nudges after a turn end up to its limit, stops once the reply holds `until`", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "nudge",
      version: "0.1.0",
      lifecycle: {
        task_acceptance: "queue",
        after_task: "sleep",
        keep_working: { limit: 2, message: "Keep going until it is fully done.", until: "DONE" },
      },
    },
    script: {
      tasks: [
        {
          match: "early",
          turns: [{ steps: [{ text: "half" }] }, { steps: [{ text: "DONE early" }] }],
        },
        {
          turns: [
            { steps: [{ text: "one" }] },
            { steps: [{ text: "two" }] },
            { steps: [{ text: "three" }] },
            { steps: [{ text: "four" }] },
          ],
        },
      ],
    },
  });
  try {
    const a = await streamTask(cap, "early");
    assert.deepEqual(statusTexts(a), [
      "inference turn 1",
      "keep working 1 of 2",
      "inference turn 2",
      "task completed",
    ]);
    assert.equal(artifactText(await getTask(cap, taskIdOf(a)), "response"), "DONE early");
    const b = await streamTask(cap, "never says it");
    assert.deepEqual(statusTexts(b), [
      "inference turn 1",
      "keep working 1 of 2",
      "inference turn 2",
      "keep working 2 of 2",
      "inference turn 3",
      "task completed",
    ]);
    assert.equal(artifactText(await getTask(cap, taskIdOf(b)), "response"), "three");
    // The nudge reached the model as a user message.
    const ctx = (await getTask(cap, taskIdOf(b))).contextId;
    const rec = await readConversation(cap.ready.workdir, ctx);
    assert.equal(
      rec.filter((x: { content?: string }) => x.content === "Keep going until it is fully done.")
        .length,
      2,
    );
    await endCapsule(cap);
    const trace = await traceOf(cap.ready.workdir);
    assert.deepEqual(
      ofType(trace, "keep_working").map((k) => [k.nudge_number, k.limit, k.turn]),
      [[1, 2, 0], [1, 2, 0], [2, 2, 1]],
    );
    assert.deepEqual(ofType(trace, "task_end").map((e) => [e.exit_status, e.turns]), [
      ["ok", 2],
      ["ok", 3],
    ]);
  } finally {
    await cap.close();
  }
});

Deno.test("keep_working never takes a turn the task does not have", async () => {
  const run = await runLaunch({
    manifest: {
      name: "nudge2",
      version: "0.1.0",
      inference: { max_turns: 1 },
      lifecycle: { keep_working: { limit: 3, message: "more" } },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "only" }] }] }] },
    task: "go",
  });
  try {
    assert.equal(run.code, 0);
    assert.equal(run.result, "only");
    assert.equal(ofType(run.trace, "keep_working").length, 0);
  } finally {
    await run.cleanup();
  }
});

Deno.test("done_check: a failing command reopens the task with its output; passing completes it; the boundary carries the reopen ordinal", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "check",
      version: "0.1.0",
      lifecycle: {
        task_acceptance: "queue",
        after_task: "sleep",
        done_check: {
          command: "test -f fixed.txt || { echo 'fixed.txt is missing'; exit 4; }",
          limit: 2,
        },
      },
      capabilities: { shell: { allow: ["sh"] } },
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ text: "I think it's done" }] },
          {
            steps: [{
              tool_call: { id: "fix", name: "sh", input: { command: "touch fixed.txt" } },
            }],
          },
          { steps: [{ text: "now it is" }] },
        ],
      }],
    },
  });
  try {
    const ev = await streamTask(cap, "fix it");
    assert.deepEqual(statusTexts(ev), [
      "inference turn 1",
      "done check failed, reopened 1 of 2",
      "inference turn 2",
      "inference turn 3",
      "task completed",
    ]);
    const boundary = ev.find((e) => messageOf(e) === "done check failed, reopened 1 of 2")!;
    const su = (boundary.data.result as Record<string, Record<string, unknown>>).statusUpdate;
    assert.deepEqual(su.metadata, { [STREAM_URI]: { reopen: 1 } });
    const t = await getTask(cap, taskIdOf(ev));
    assert.equal(artifactText(t, "response"), "now it is");
    const rec = await readConversation(cap.ready.workdir, t.contextId);
    const feedback = rec.find((x: { content?: string }) =>
      x.content?.startsWith("Reopen 1 — the done check failed")
    );
    assert.match(feedback.content, /fixed\.txt is missing/);
    assert.match(feedback.content, /exited with status 4/);
    await endCapsule(cap);
    const trace = await traceOf(cap.ready.workdir);
    assert.deepEqual(ofType(trace, "done_check").map((d) => [d.passed, d.exit_code]), [
      [false, 4],
      [true, 0],
    ]);
    const re = ofType(trace, "task_reopened")[0];
    assert.equal(re.hook_name, "done_check");
    assert.equal(re.reopen_number, 1);
    assert.deepEqual(ofType(trace, "task_end").map((e) => [e.exit_status, e.reopen_count]), [
      ["ok", 1],
    ]);
  } finally {
    await cap.close();
  }
});

Deno.test("done_check: a check still failing after its limit fails the task", async () => {
  const run = await runLaunch({
    manifest: {
      name: "check2",
      version: "0.1.0",
      lifecycle: { done_check: { command: "exit 1", limit: 1 } },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "a" }] }, { steps: [{ text: "b" }] }] }] },
    task: "go",
  });
  try {
    assert.equal(run.code, 1);
    const msg =
      "done check failed: `exit 1` it exited with status 1, after 1 of 1 reopen(s) allowed by lifecycle.done_check.limit";
    assert.equal(run.result, `error: ${msg}`);
    assert.match(run.stderr, /E-RUN-040/);
    assert.equal(ofType(run.trace, "task_end")[0].exit_status, "failed");
    assert.equal(ofType(run.trace, "task_failed")[0].cause, "done_check");
    assert.equal(ofType(run.trace, "done_check").length, 2);
  } finally {
    await run.cleanup();
  }
});
