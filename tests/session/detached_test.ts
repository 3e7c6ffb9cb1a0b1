/**
 * docs/hooks.md "Detached shells": a command that outruns lifecycle.shell_grace_secs moves to the
 * background with a wrk_ handle and logs/<work id>.log; its end arrives as a completion task in
 * the bg lane under the original contextId (shell_completed); a session that ends first records
 * shell_abandoned once in the trace and once on stderr; a completion task still queued when the
 * session ends is rejected.
 */
import assert from "node:assert/strict";
import { collect, frameOf, streamRequest } from "../helpers/sse.ts";
import {
  endCapsule,
  finishedWithin,
  getTask,
  ofType,
  runLaunch,
  startCapsule,
  statusTexts,
  streamTask,
  taskIdOf,
  traceOf,
  until,
} from "./helpers.ts";
import { readConversation } from "../helpers/conversation.ts";

function killPid(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

async function pidIn(path: string): Promise<number | null> {
  try {
    return Number((await Deno.readTextFile(path)).trim());
  } catch {
    return null;
  }
}

const count = (s: string, needle: string) => s.split(needle).length - 1;

Deno.test("detached shell under queue+sleep: wrk_ handle, log file, completion task in the bg lane under the same context, shell_completed once", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "bg",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", shell_grace_secs: 0.3 },
      capabilities: { shell: { allow: ["sh"] } },
    },
    script: {
      tasks: [
        { match: "background command", turns: [{ steps: [{ text: "got the result" }] }] },
        {
          turns: [
            {
              steps: [{
                tool_call: {
                  id: "long",
                  name: "sh",
                  input: { command: "sleep 1; echo finished-output" },
                },
              }],
            },
            { steps: [{ text: "started it" }] },
          ],
        },
      ],
    },
  });
  try {
    const ev = await streamTask(cap, "run the long thing");
    assert.equal(statusTexts(ev).at(-1), "task completed");
    const first = await getTask(cap, taskIdOf(ev));
    // The completion task appears under the same context and completes.
    const completion = await until(
      async () => {
        const r = await cap.rpc("ListTasks", { contextId: first.contextId });
        const tasks = (r.result as { tasks: Record<string, unknown>[] }).tasks;
        const other = tasks.find((t) => t.id !== first.id);
        const st = (other?.status as { state?: string } | undefined)?.state;
        return st === "TASK_STATE_COMPLETED" ? other : undefined;
      },
      15_000,
      "the completion task",
    );
    const done = await getTask(cap, completion.id as string);
    assert.equal(
      (done.artifacts as { parts: { text: string }[] }[])[0].parts[0].text,
      "got the result",
    );
    const fin = await endCapsule(cap);
    const trace = await traceOf(cap.ready.workdir);
    const det = ofType(trace, "shell_detached");
    assert.equal(det.length, 1);
    const workId = det[0].work_id as string;
    assert.match(workId, /^wrk_[0-9a-f]{32}$/);
    assert.equal(det[0].grace_ms, 300);
    assert.equal(det[0].command, "sleep 1; echo finished-output");
    const comp = ofType(trace, "shell_completed");
    assert.equal(comp.length, 1);
    assert.equal(comp[0].work_id, workId);
    assert.equal(comp[0].exit_code, 0);
    assert.equal(comp[0].status, "ok");
    assert.equal(comp[0].output_path, `logs/${workId}.log`);
    assert.equal(comp[0].completion_task_id, completion.id);
    assert.equal(ofType(trace, "shell_abandoned").length, 0);
    const starts = ofType(trace, "task_start");
    const cs = starts.find((s) => s.task_id === completion.id)!;
    assert.deepEqual([cs.source, cs.origin, cs.lane, cs.context_id], [
      "detached_shell",
      "completion",
      "bg",
      first.contextId,
    ]);
    assert.match(
      await Deno.readTextFile(`${cap.ready.workdir}/logs/${workId}.log`),
      /finished-output/,
    );
    // The completion task carried the exit code and the (fenced) output.
    const rec = await readConversation(cap.ready.workdir, first.contextId);
    const text = rec[0].content as string;
    assert.match(text, new RegExp(`The background command ${workId} has finished`));
    assert.match(text, /Exit code: 0/);
    assert.match(text, /<untrusted-content source=tool:sh>\nfinished-output\n/);
    // Once each on stderr.
    assert.equal(count(fin.stderr, `shell_detached: ${workId}`), 1);
    assert.equal(count(fin.stderr, `shell_completed: ${workId}`), 1);
  } finally {
    await cap.close();
  }
});

Deno.test("detached shell under single/exit: shell_abandoned once in the trace, once on stderr, in bootstrap.log", async () => {
  const run = await runLaunch({
    manifest: {
      name: "abandon",
      version: "0.1.0",
      lifecycle: { shell_grace_secs: 0.2 },
      capabilities: { shell: { allow: ["sh"] } },
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{
              tool_call: {
                id: "c",
                name: "sh",
                input: { command: "echo $$ > bg.pid; exec sleep 20" },
              },
            }],
          },
          { steps: [{ text: "left it running" }] },
        ],
      }],
    },
    task: "go",
  });
  const pid = await pidIn(`${run.workdir}/bg.pid`);
  try {
    assert.equal(run.code, 0);
    const ab = ofType(run.trace, "shell_abandoned");
    assert.equal(ab.length, 1);
    const workId = ab[0].work_id as string;
    assert.equal(ab[0].work_id, ofType(run.trace, "shell_detached")[0].work_id);
    assert.equal(typeof ab[0].running_ms, "number");
    assert.equal("exit_code" in ab[0], false);
    assert.equal(count(run.stderr, `shell_abandoned: ${workId}`), 1);
    assert.match(
      await Deno.readTextFile(`${run.workdir}/logs/bootstrap.log`),
      new RegExp(`shell_abandoned: ${workId}`),
    );
    // Written before session_end.
    const types = run.trace.map((e) => e.event_type);
    assert.ok(types.indexOf("shell_abandoned") < types.indexOf("session_end"));
  } finally {
    if (pid) killPid(pid);
    await run.cleanup();
  }
});

Deno.test("single/exit: a command that ends while its task still runs is shell_completed, and its completion task is rejected when the session ends", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "reject",
      version: "0.1.0",
      lifecycle: { shell_grace_secs: 0.2 },
      capabilities: { shell: { allow: ["sh"] } },
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{ delay_ms: 300 }, {
              tool_call: { id: "c", name: "sh", input: { command: "sleep 0.6" } },
            }],
          },
          { steps: [{ delay_ms: 1500 }, { text: "done waiting" }] },
        ],
      }],
    },
    args: ["--task", "go"],
  });
  try {
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
    const events = await collect(res, () => false, 20_000);
    await finishedWithin(cap);
    const trace = await traceOf(cap.ready.workdir);
    const comp = ofType(trace, "shell_completed")[0];
    assert.ok(comp, "the command ended while the session was open");
    const rejected = ofType(trace, "task_rejected");
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0].task_id, comp.completion_task_id);
    assert.equal(rejected[0].cause, "session_ended");
    assert.equal(rejected[0].reason, "task rejected: the session ended before this task started");
    assert.equal(ofType(trace, "shell_abandoned").length, 0);
    // On the wire: a numbered TASK_STATE_REJECTED statusUpdate with that message.
    const rej = events.find((e) => {
      const su = (e.data.result as Record<string, Record<string, unknown>>).statusUpdate;
      return su?.taskId === comp.completion_task_id;
    })!;
    assert.ok(rej && rej.id !== null);
    const st = ((rej.data.result as Record<string, Record<string, unknown>>).statusUpdate
      .status) as { state: string; message: { parts: { text: string }[] } };
    assert.equal(st.state, "TASK_STATE_REJECTED");
    assert.equal(
      st.message.parts[0].text,
      "task rejected: the session ended before this task started",
    );
  } finally {
    await cap.close();
  }
});

Deno.test("the model is told what becomes of a detached command's result, as the lifecycle decides", async () => {
  const cases: [Record<string, unknown>, RegExp, RegExp][] = [
    [
      {},
      /the result is lost when this task ends, and the command is recorded as abandoned/,
      /arrive as a new task in this conversation/,
    ],
    [
      { task_acceptance: "queue", after_task: "exit" },
      /If it ends while this capsule still has tasks to run, its exit code and output arrive as a new task in this conversation; this capsule exits once it has no task left/,
      /When it ends, its exit code/,
    ],
    [
      { task_acceptance: "queue", after_task: "sleep" },
      /When it ends, its exit code and output arrive as a new task in this conversation/,
      /lost/,
    ],
  ];
  for (const [lifecycle, says, never] of cases) {
    const cap = await startCapsule({
      manifest: {
        name: "promise",
        version: "0.1.0",
        lifecycle: { shell_grace_secs: 0.2, ...lifecycle },
        capabilities: { shell: { allow: ["sh"] } },
      },
      script: {
        tasks: [{
          turns: [
            {
              steps: [{
                tool_call: {
                  id: "c",
                  name: "sh",
                  input: { command: "echo $$ > bg.pid; exec sleep 20" },
                },
              }],
            },
            { steps: [{ text: "left it running" }] },
          ],
        }],
      },
    });
    try {
      const events = await streamTask(cap, "go");
      assert.equal(statusTexts(events).at(-1), "task completed");
      const art = events.map(frameOf).find((f) => f?.frame === "artifact");
      const content = art?.content as string;
      assert.match(content, /moved to the background as wrk_[0-9a-f]{32}/);
      assert.match(content, says, `${JSON.stringify(lifecycle)}: ${content}`);
      assert.doesNotMatch(content, never, `${JSON.stringify(lifecycle)}: ${content}`);
    } finally {
      const pid = await pidIn(`${cap.ready.workdir}/bg.pid`);
      if (pid) killPid(pid);
      await cap.close();
    }
  }
});
