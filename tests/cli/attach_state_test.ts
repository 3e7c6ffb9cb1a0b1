/**
 * What a line typed into `mur attach` does (src/cli/attach_state.ts), and the exact messages the
 * steering commands send (src/cli/steer_messages.ts): the approval decision is the shared wire
 * contract of issue 45 (`taskId` and one data part `{approve, argumentsHash, reason?}`, the hash
 * taken from the pending status's `{kind: "approval", …}` data part).
 */
import assert from "node:assert/strict";
import { AttachState } from "../../src/cli/attach_state.ts";
import {
  answerMessage,
  approvalMessage,
  pendingApproval,
  steerMessage,
  taskMessage,
} from "../../src/cli/steer_messages.ts";
import { steerLine } from "../../src/cli/attach_steer.ts";

const STEER_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1";

const T1 = "tsk_0199c4e2f1b7712a9d3e4f5061728394";
const T2 = "tsk_0199c4e2f1b7712a9d3e4f5061728395";
const C1 = "ctx_0199c4e2f1b7712a9d3e4f50617283a1";

function status(taskId: string, state: string, parts?: unknown[]) {
  return {
    statusUpdate: {
      taskId,
      contextId: C1,
      status: {
        state,
        ...(parts
          ? { message: { messageId: "msg_1", role: "ROLE_AGENT", taskId, contextId: C1, parts } }
          : {}),
      },
    },
  };
}

const APPROVAL = {
  kind: "approval",
  tool: "bash",
  source: "manifest",
  arguments: { command: "git push origin main" },
  argumentsHash: "sha256:4f2a",
  reason: "matches approve: ask for git push",
};

Deno.test("attach: a line answers the newest question, else follows up in the last conversation", () => {
  const s = new AttachState();
  assert.deepEqual(s.line("hello"), { kind: "task", text: "hello" });
  s.see(status(T1, "TASK_STATE_WORKING", [{ text: "inference turn 1" }]));
  assert.deepEqual(s.line("more ж"), { kind: "task", text: "more ж", contextId: C1 });
  const w = s.see(status(T1, "TASK_STATE_INPUT_REQUIRED", [{ text: "Which branch?" }]));
  assert.deepEqual(w, { taskId: T1, contextId: C1, approval: null });
  assert.deepEqual(s.line("main\r"), { kind: "answer", taskId: T1, text: "main" });
  s.see(status(T1, "TASK_STATE_WORKING", [{ text: "resumed" }]));
  assert.equal(s.line("main").kind, "task", "answered: the next line is new work");
  assert.deepEqual(s.line("   "), { kind: "nothing" });
  assert.deepEqual(s.line("/quit"), { kind: "quit" });
  assert.equal(s.line("/nope").kind, "say");
});

Deno.test("attach: /approve and /deny answer the pending approval with its argumentsHash; a plain line does not", () => {
  const s = new AttachState();
  assert.deepEqual(s.line("/approve"), { kind: "say", text: "no call waits for approval" });
  const w = s.see(status(T1, "TASK_STATE_INPUT_REQUIRED", [
    { text: "approve bash: git push origin main?" },
    { data: APPROVAL },
  ]));
  assert.equal(w?.approval?.argumentsHash, "sha256:4f2a");
  assert.deepEqual(s.line("/approve"), {
    kind: "decide",
    taskId: T1,
    approve: true,
    argumentsHash: "sha256:4f2a",
  });
  assert.deepEqual(s.line("/deny  not on a Friday "), {
    kind: "decide",
    taskId: T1,
    approve: false,
    argumentsHash: "sha256:4f2a",
    reason: "not on a Friday",
  });
  assert.deepEqual(s.line("/deny"), {
    kind: "decide",
    taskId: T1,
    approve: false,
    argumentsHash: "sha256:4f2a",
  });
  // An approval is not a question: a plain line is a follow-up, not an answer to it.
  assert.equal(s.line("hello").kind, "task");
  s.see(status(T1, "TASK_STATE_WORKING", [{ text: "resumed" }]));
  assert.equal(s.line("/approve").kind, "say");
});

Deno.test("attach: /cancel takes the newest running task, or the one named; ended tasks are not running", () => {
  const s = new AttachState();
  assert.deepEqual(s.line("/cancel"), { kind: "say", text: "no task is running" });
  s.see(status(T1, "TASK_STATE_WORKING"));
  s.see(status(T2, "TASK_STATE_WORKING"));
  assert.deepEqual(s.line("/cancel"), { kind: "cancel", taskId: T2 });
  assert.deepEqual(s.line("/cancel 728394"), { kind: "cancel", taskId: T1 });
  s.see(status(T2, "TASK_STATE_CANCELED", [{ text: "task canceled" }]));
  assert.deepEqual(s.line("/cancel"), { kind: "cancel", taskId: T1 });
  s.see(status(T1, "TASK_STATE_COMPLETED"));
  assert.equal(s.line("/cancel").kind, "say");
});

Deno.test("attach: /steer goes to the newest working task, or the one named; a waiting or ended task takes none", () => {
  const s = new AttachState();
  assert.deepEqual(s.line("/steer use staging"), {
    kind: "say",
    text: "no task is working: a steer goes to a working task",
  });
  s.see(status(T1, "TASK_STATE_WORKING"));
  s.see(status(T2, "TASK_STATE_WORKING"));
  assert.deepEqual(s.line("/steer  use staging ✓ "), {
    kind: "steer",
    taskId: T2,
    text: "use staging ✓",
  });
  assert.deepEqual(s.line("/steer 728394 use staging"), {
    kind: "steer",
    taskId: T1,
    text: "use staging",
  });
  // A first word naming no working task is part of the text.
  assert.deepEqual(s.line("/steer staging please"), {
    kind: "steer",
    taskId: T2,
    text: "staging please",
  });
  assert.deepEqual(s.line("/steer"), { kind: "say", text: "usage: /steer [task] text" });
  // A task that waits for input is not working: the steer goes to the other.
  s.see(status(T2, "TASK_STATE_INPUT_REQUIRED", [{ text: "Which branch?" }]));
  assert.deepEqual(s.line("/steer hurry"), { kind: "steer", taskId: T1, text: "hurry" });
  s.see(status(T1, "TASK_STATE_COMPLETED"));
  assert.equal(s.line("/steer hurry").kind, "say");
});

Deno.test("steer message: taskId, the text, the extension's URI as a metadata key; the answer told", () => {
  const m = steerMessage(T1, "use the staging branch, not main");
  assert.match(m.messageId, /^msg-cli-[0-9a-f-]{36}$/);
  assert.deepEqual({ ...m, messageId: "x" }, {
    messageId: "x",
    role: "ROLE_USER",
    taskId: T1,
    parts: [{ text: "use the staging branch, not main" }],
    metadata: { [STEER_URI]: {} },
  });
  const answer = (data: Record<string, unknown>) => ({
    message: { role: "ROLE_AGENT", parts: [{ text: "…" }, { data }] },
  });
  assert.equal(
    steerLine(T1, answer({ steer: "taken", turn: 2, messageId: "m" })),
    "[murmur] steer taken: tsk 728394 read it before turn 2",
  );
  assert.equal(
    steerLine(T1, answer({ steer: "not_taken", reason: "the task ended before its next turn" })),
    "[murmur] steer not taken by tsk 728394: the task ended before its next turn",
  );
  assert.equal(
    steerLine(T1, answer({ steer: "queued" })),
    "[murmur] steer queued: tsk 728394 reads it at its next turn",
  );
  assert.match(steerLine(T1, {}), /without saying how it was taken/);
});

Deno.test("steer messages: the exact wire shape of a task, a follow-up, an answer and an approval decision", () => {
  const t = taskMessage("Summarise README.md");
  assert.match(t.messageId, /^msg-cli-[0-9a-f-]{36}$/);
  assert.deepEqual({ ...t, messageId: "x" }, {
    messageId: "x",
    role: "ROLE_USER",
    parts: [{ text: "Summarise README.md" }],
  });
  assert.equal(taskMessage("more", C1).contextId, C1);
  assert.notEqual(taskMessage("a").messageId, taskMessage("a").messageId, "a fresh id each time");
  assert.deepEqual({ ...answerMessage(T1, "main"), messageId: "x" }, {
    messageId: "x",
    role: "ROLE_USER",
    taskId: T1,
    parts: [{ text: "main" }],
  });
  assert.deepEqual({ ...approvalMessage(T1, true, "sha256:4f2a"), messageId: "x" }, {
    messageId: "x",
    role: "ROLE_USER",
    taskId: T1,
    parts: [{ data: { approve: true, argumentsHash: "sha256:4f2a" } }],
  });
  assert.deepEqual(approvalMessage(T1, false, "h", "too risky").parts, [
    { data: { approve: false, argumentsHash: "h", reason: "too risky" } },
  ]);
  // The pending approval is read from the status message's data part of kind "approval" only.
  assert.deepEqual(pendingApproval({ parts: [{ text: "x" }, { data: APPROVAL }] }), {
    tool: "bash",
    argumentsHash: "sha256:4f2a",
    source: "manifest",
    arguments: { command: "git push origin main" },
    reason: "matches approve: ask for git push",
  });
  assert.equal(pendingApproval({ parts: [{ data: { kind: "other", argumentsHash: "h" } }] }), null);
  assert.equal(pendingApproval({ parts: [{ data: { kind: "approval", tool: "bash" } }] }), null);
  assert.equal(pendingApproval(undefined), null);
});
