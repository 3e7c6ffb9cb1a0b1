/**
 * request-input end to end (docs/protocol.md "One final status"; docs/hooks.md "Asking the person:
 * request-input"): a wait that times out ends the attempt, and the terminal TASK_STATE_FAILED
 * `input-timeout` follows once the on-task-end hooks have run — unless a hook reopens the task; a
 * cancel during the wait is `task_canceled` phase `input`.
 */
import assert from "node:assert/strict";
import { collect, streamRequest } from "../helpers/sse.ts";
import {
  artifactText,
  endCapsule,
  getTask,
  hookScript,
  isTerminalEvent,
  ofType,
  startCapsule,
  statusMessage,
  statusTexts,
  streamTask,
  taskIdOf,
  traceOf,
} from "./helpers.ts";

const ask = (id: string) => ({
  steps: [{ tool_call: { id, name: "request-input", input: { prompt: "Which city?" } } }],
});

Deno.test("request-input: timeout fails the task with input-timeout after the hooks ran; a hook may reopen it; cancel during the wait", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "hitl",
      version: "0.1.0",
      lifecycle: {
        task_acceptance: "queue",
        after_task: "sleep",
        input_timeout_secs: 1,
        max_task_reopens: 1,
      },
      tools: [{ builtin: "request-input" }],
      hooks: [{
        name: "gate",
        binding: "on-task-end",
        commit_policy: "reopen-task",
        command: ["./hooks/gate.sh"],
      }],
    },
    script: {
      tasks: [
        { match: "plain", turns: [ask("a1"), { steps: [{ text: "never" }] }] },
        { match: "reopen", turns: [ask("b1"), { steps: [{ text: "answered without it" }] }] },
        { match: "cancel", turns: [ask("c1")] },
      ],
    },
    files: {
      "hooks/gate.sh": hookScript(`printf '%s\\n' "$in" >> ends.jsonl
if [ -f reopen-on ] && [ ! -f reopened ]; then touch reopened; echo '{"reopen_task":"Go on without the answer."}'; else echo '{}'; fi`),
    },
  });
  try {
    const wd = cap.ready.workdir;
    // 1. The wait times out: the stream ended at the wait; a subscription sees the end.
    const a = await streamTask(cap, "plain");
    const aid = taskIdOf(a);
    assert.equal(statusTexts(a).at(-1), "Which city?");
    const waiting = await getTask(cap, aid);
    assert.equal(artifactText(waiting, "prompt"), "Which city?");
    const sub = await streamRequest(cap.base, "SubscribeToTask", { id: aid });
    const rest = await collect(sub, (e) => isTerminalEvent(e), 10_000);
    // When the terminal status is written, the on-task-end hook has already run.
    const ends = (await Deno.readTextFile(`${wd}/ends.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.deepEqual([ends[0].task_id, ends[0].exit_status, ends[0].result], [
      aid,
      "failed",
      "input-timeout",
    ]);
    assert.equal(statusTexts(rest).at(-1), "input-timeout");
    const ta = await getTask(cap, aid);
    assert.equal((ta.status as { state: string }).state, "TASK_STATE_FAILED");
    assert.equal(statusMessage(ta), "input-timeout");
    assert.equal(await Deno.readTextFile(`${wd}/out/result.txt`), "error: input-timeout");

    // 2. The same timeout, but the hook reopens: the task goes on and completes.
    await Deno.writeTextFile(`${wd}/reopen-on`, "");
    const b = await streamTask(cap, "reopen");
    const bid = taskIdOf(b);
    const sb = await streamRequest(cap.base, "SubscribeToTask", { id: bid });
    const restB = await collect(sb, (e) => isTerminalEvent(e), 10_000);
    assert.deepEqual(statusTexts(restB).slice(-3), [
      "reopened by hook gate",
      "inference turn 2",
      "task completed",
    ]);
    assert.equal(artifactText(await getTask(cap, bid), "response"), "answered without it");

    // 3. Cancel during the wait.
    const c = await streamTask(cap, "cancel");
    const cid = taskIdOf(c);
    const canceled = await cap.rpc("CancelTask", { id: cid });
    assert.equal(
      ((canceled.result as Record<string, unknown>).status as { state: string }).state,
      "TASK_STATE_CANCELED",
    );

    await endCapsule(cap);
    const trace = await traceOf(wd);
    const fa = ofType(trace, "task_failed").filter((f) => f.cause === "input_timeout");
    assert.deepEqual(fa.map((f) => f.task_id), [aid, bid]);
    assert.deepEqual(
      ofType(trace, "task_end").map((e) => [e.task_id, e.exit_status, e.reopen_count]),
      [[aid, "failed", 0], [bid, "ok", 1], [cid, "canceled", 0]],
    );
    const tc = ofType(trace, "task_canceled").find((e) => e.task_id === cid)!;
    assert.equal(tc.phase, "input");
  } finally {
    await cap.close();
  }
});
