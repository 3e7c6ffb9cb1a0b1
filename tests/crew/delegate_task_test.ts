/**
 * `delegate-task` on real processes (docs/crews.md): the parent starts a child capsule from
 * `capabilities.spawn.allow` for one task, waits on it with seed 000's status, continues with
 * its outcome fenced `delegation:<capsule>`, and the child is ended; a child killed mid-task is
 * `crashed`.
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import { readConversation } from "../helpers/conversation.ts";
import { until } from "../helpers/until.ts";
import { closeAll, follow, traceOf } from "./helpers.ts";

const gate = "until [ -e release ]; do sleep 0.05; done";

/** A parent that may start `helper`, its script delegating once. */
function parent(answer: Record<string, unknown>): Promise<Capsule> {
  return startCapsule({
    manifest: {
      name: "parent",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { spawn: { allow: ["helper"] } },
    },
    script: {
      tasks: [{
        match: "delegate",
        turns: [
          {
            steps: [{
              tool_call: {
                name: "delegate-task",
                input: { capsule: "helper", task: "summarise the notes" },
              },
            }],
          },
          { steps: [{ text: "waiting for helper" }] },
          { steps: [{ text: "Parent: done." }] },
        ],
      }],
    },
    files: {
      "helper/murmur.yaml": stringify({
        name: "helper",
        version: "0.1.0",
        capabilities: { shell: { allow: ["bash"] } },
        exports: { peer_tasks: { accept: true } },
        inference: { transport: "http", driver: "scripted", script: "script.yaml" },
      }),
      "helper/script.yaml": stringify({
        tasks: [{
          match: "^summarise",
          turns: [
            { steps: [{ tool_call: { name: "bash", input: { command: gate } } }] },
            { steps: [answer] },
          ],
        }],
      }),
    },
  });
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

// deno-lint-ignore no-explicit-any
type Line = Record<string, any>;

Deno.test("delegate-task: a child capsule runs the task, its outcome is fenced delegation:helper, the child ends", async () => {
  let p: Capsule | undefined;
  let childPid = 0;
  try {
    p = await parent({ text: "HELPER summary" });
    const f = follow(p, "delegate this");
    await until(
      "the delegation outstanding",
      () =>
        f.seen.statuses.includes("waiting on delegate-task: 1 delegation(s) outstanding") ||
        undefined,
      60_000,
    );
    const start = ((await traceOf(p)) as Line[]).find((l) => l.event_type === "delegation_start")!;
    childPid = start.child_pid;
    assert.equal(start.capsule, "helper");
    assert.match(start.delegation_id, /^dlg_[0-9a-f]{32}$/);
    assert.equal(start.child_workdir, `delegations/${start.delegation_id}`);
    const childRoot = `${p.ready.workdir}/${start.child_workdir}`;
    await Deno.writeTextFile(`${childRoot}/release`, "");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    assert.ok(f.seen.statuses.includes("continuing with 1 delegation outcome(s)"));

    const lines = (await traceOf(p)) as Line[];
    const end = lines.find((l) => l.event_type === "delegation")!;
    assert.equal(end.outcome, "completed", JSON.stringify(end));
    assert.equal(end.output, "HELPER summary");
    assert.equal(end.child_task_id, start.child_task_id);
    const cont = lines.find((l) => l.event_type === "task_continued")!;
    assert.deepEqual(cont.delegations, [start.delegation_id]);

    const msgs = await readConversation(p.ready.workdir, f.seen.contextId);
    const round = msgs.filter((m) =>
      m.role === "user" && JSON.stringify(m).includes("delegation:helper")
    );
    assert.equal(round.length, 1);
    assert.match(
      JSON.stringify(round[0]),
      /\[delegate-task\] delegation dlg_[0-9a-f]{32} to helper ended completed:\\n<untrusted-content source=delegation:helper>\\nHELPER summary\\n/,
    );
    // The child ran in its own session under the parent's workdir, and has ended.
    const childTrace = await Deno.readTextFile(
      `${childRoot}/.murmur/${start.child_session_id}/trace.jsonl`,
    ).catch(() => "");
    assert.match(childTrace, /"event_type":"session_end"/);
    await until("the child process gone", () => !alive(childPid) || undefined);
  } finally {
    if (childPid && alive(childPid)) Deno.kill(childPid, "SIGKILL");
    await closeAll([p]);
  }
});

Deno.test("delegate-task: a child killed mid-task is an outcome (crashed), not a hang", async () => {
  let p: Capsule | undefined;
  let childPid = 0;
  try {
    p = await parent({ text: "never" });
    const f = follow(p, "delegate this");
    await until(
      "the delegation outstanding",
      () =>
        f.seen.statuses.includes("waiting on delegate-task: 1 delegation(s) outstanding") ||
        undefined,
      60_000,
    );
    const start = ((await traceOf(p)) as Line[]).find((l) => l.event_type === "delegation_start")!;
    childPid = start.child_pid;
    Deno.kill(childPid, "SIGKILL");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const end = ((await traceOf(p)) as Line[]).find((l) => l.event_type === "delegation")!;
    assert.equal(end.outcome, "crashed");
    const msgs = await readConversation(p.ready.workdir, f.seen.contextId);
    assert.match(
      JSON.stringify(msgs.find((m) => JSON.stringify(m).includes("delegation:helper"))),
      /ended crashed, with no answer from helper/,
    );
  } finally {
    if (childPid && alive(childPid)) Deno.kill(childPid, "SIGKILL");
    await closeAll([p]);
  }
});

Deno.test("delegate-task: cancelling the parent's task cancels the child's task and ends the child", async () => {
  let p: Capsule | undefined;
  let childPid = 0;
  try {
    p = await parent({ text: "never" });
    const f = follow(p, "delegate this");
    await until(
      "the delegation outstanding",
      () =>
        f.seen.statuses.includes("waiting on delegate-task: 1 delegation(s) outstanding") ||
        undefined,
      60_000,
    );
    const start = ((await traceOf(p)) as Line[]).find((l) => l.event_type === "delegation_start")!;
    childPid = start.child_pid;
    await p.rpc("CancelTask", { id: f.seen.taskId });
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_CANCELED");
    await until("the child process gone", () => !alive(childPid) || undefined);
    const end = await until(
      "the delegation recorded",
      async () => ((await traceOf(p!)) as Line[]).find((l) => l.event_type === "delegation"),
    );
    assert.equal(end.outcome, "abandoned");
    const childTrace = await Deno.readTextFile(
      `${p.ready.workdir}/${start.child_workdir}/.murmur/${start.child_session_id}/trace.jsonl`,
    );
    const taskEnd = childTrace.split("\n").filter((l) => l.includes('"event_type":"task_end"'))
      .map((l) => JSON.parse(l));
    assert.equal(taskEnd[0].exit_status, "canceled");
  } finally {
    if (childPid && alive(childPid)) Deno.kill(childPid, "SIGKILL");
    await closeAll([p]);
  }
});
