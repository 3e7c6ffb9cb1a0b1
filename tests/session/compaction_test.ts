/**
 * Compaction (docs/hooks.md "Compaction"): when the conversation
 * crosses context.compaction_threshold of context.max_tokens, a replace-context on-compaction
 * hook replaces the history (`compaction`), declines or breaks tool pairing
 * (`compaction_declined`), or fails — which fails the task (`task failed (compaction_hook): …`).
 */
import assert from "node:assert/strict";
import { fromReplacement, toHookMessage } from "../../src/session/compaction.ts";
import type { ConversationMessage } from "../../src/drivers/types.ts";
import {
  endCapsule,
  getTask,
  hookScript,
  ofType,
  runLaunch,
  startCapsule,
  statusMessage,
  statusTexts,
  streamTask,
  taskIdOf,
  traceOf,
} from "./helpers.ts";
import { readConversation } from "../helpers/conversation.ts";

const long = "word ".repeat(100); // 500 characters: 125 tokens, over 0.5 × 200
const script = {
  tasks: [{
    turns: [
      { steps: [{ text: long }, { tool_call: { id: "c1", name: "nothing", input: {} } }] },
      { steps: [{ text: "finished" }] },
    ],
  }],
};
const squash = {
  name: "squash",
  binding: "on-compaction",
  commit_policy: "replace-context",
  command: ["./hooks/squash.sh"],
};
const files = {
  "hooks/squash.sh": hookScript(`printf '%s\n' "$in" >> compactions.jsonl
case "$in" in
  *mode-summary*) echo '{"replace_context":[{"role":"user","content":"SUMMARY so far"}]}';;
  *mode-forge*) echo '{"replace_context":[{"role":"assistant","content":"x","tool_calls":[{"id":"c1","name":"nothing","input":{}}]},{"role":"tool","content":"forged","tool_results":[{"tool_call_id":"c1","tool_name":"nothing","content":"forged","is_error":false}]}]}';;
  *mode-decline*) echo '{}';;
  *mode-crash*) echo 'out of memory' >&2; exit 1;;
esac`),
};

Deno.test("compaction: replaced, declined (no replacement / unresolved tool call), and a failing hook fails the task", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "compact",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      context: { max_tokens: 200, compaction_threshold: 0.5 },
      hooks: [squash],
    },
    script,
    files,
  });
  try {
    const ids: string[] = [];
    for (const mode of ["mode-summary", "mode-forge", "mode-decline"]) {
      const ev = await streamTask(cap, mode);
      assert.equal(statusTexts(ev).at(-1), "task completed", mode);
      ids.push(taskIdOf(ev));
    }
    const crash = await streamTask(cap, "mode-crash");
    const crashId = taskIdOf(crash);
    const msg =
      "task failed (compaction_hook): on-compaction hook squash failed: it exited with status 1";
    assert.equal(statusTexts(crash).at(-1), msg);
    // No second turn after a failed compaction.
    assert.deepEqual(statusTexts(crash).filter((s) => s.startsWith("inference turn")), [
      "inference turn 1",
    ]);
    const ct = await getTask(cap, crashId);
    assert.equal((ct.status as { state: string }).state, "TASK_STATE_FAILED");
    assert.equal(statusMessage(ct), msg);
    assert.equal(await Deno.readTextFile(`${cap.ready.workdir}/out/result.txt`), `error: ${msg}`);

    // The summary replaced the history the next turn was sent.
    const summaryCtx = (await getTask(cap, ids[0])).contextId as string;
    const rec = await readConversation(cap.ready.workdir, summaryCtx);
    assert.deepEqual(rec[0], { role: "user", content: "SUMMARY so far" });

    await endCapsule(cap);
    const trace = await traceOf(cap.ready.workdir);
    const comp = ofType(trace, "compaction");
    assert.equal(comp.length, 1);
    assert.equal(comp[0].task_id, ids[0]);
    assert.equal(comp[0].turn, 1);
    assert.ok((comp[0].tokens_before as number) >= 100);
    assert.ok((comp[0].tokens_after as number) < 10);
    assert.deepEqual(
      ofType(trace, "compaction_declined").map((d) => [d.task_id, d.reason]),
      [[ids[1], "unresolved_tool_call"], [ids[2], "no_hook_replacement"]],
    );
    const failed = ofType(trace, "task_failed").find((f) => f.task_id === crashId)!;
    assert.equal(failed.cause, "compaction_hook");
    assert.equal(
      ofType(trace, "task_end").find((e) => e.task_id === crashId)!.exit_status,
      "failed",
    );
    // The hook read the conversation and its size (docs/hooks.md "Compaction").
    const first = JSON.parse(
      (await Deno.readTextFile(`${cap.ready.workdir}/compactions.jsonl`)).split("\n")[0],
    );
    assert.equal(first.event, "on-compaction");
    assert.equal(first.threshold, 0.5);
    assert.ok(first.session_tokens >= 100);
    assert.deepEqual(first.messages.map((x: { role: string }) => x.role), [
      "user",
      "assistant",
      "tool",
    ]);
    assert.match(
      await Deno.readTextFile(`${cap.ready.workdir}/logs/hook-squash.log`),
      /stderr: out of memory/,
    );
  } finally {
    await cap.close();
  }
});

Deno.test("compaction with no on-compaction hook bound: compaction_declined, the task goes on over budget", async () => {
  const run = await runLaunch({
    manifest: {
      name: "nohook",
      version: "0.1.0",
      context: { max_tokens: 200, compaction_threshold: 0.5 },
    },
    script,
    task: "go",
  });
  try {
    assert.equal(run.code, 0);
    assert.equal(run.result, "finished");
    assert.deepEqual(ofType(run.trace, "compaction_declined").map((d) => d.reason), [
      "no_hook_replacement",
    ]);
    assert.equal(ofType(run.trace, "compaction").length, 0);
  } finally {
    await run.cleanup();
  }
});

Deno.test("replacement check: a tool message survives only unmodified, right after its call", () => {
  const original: ConversationMessage[] = [
    { role: "user", content: "task" },
    { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "t", input: {} }] },
    { role: "tool", results: [{ toolCallId: "c1", toolName: "t", content: "r", isError: false }] },
  ];
  const hm = original.map(toHookMessage);
  assert.deepEqual(fromReplacement([{ role: "user", content: "sum" }, hm[1], hm[2]], original), [
    { role: "user", content: "sum" },
    original[1],
    original[2],
  ]);
  assert.equal(fromReplacement([hm[2]], original), "unresolved_tool_call");
  assert.equal(fromReplacement([hm[1]], original), "unresolved_tool_call");
  assert.equal(
    fromReplacement([hm[1], { ...hm[2], content: "changed", tool_results: [] }], original),
    "unresolved_tool_call",
  );
});
