/**
 * trace.jsonl (docs/running.md "Files"; src/trace_events.ts): the envelope `event_type, event_id, parent_id,
 * session_id, timestamp` first and in that order on every line; one session_start / session_end
 * pair framing everything; one task_start / task_end pair per task; session totals equal the sums
 * of the tasks; the session → task → turn tree (tool_call under its turn's inference line).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { manifest, ofType, readTrace, rpc, spawnRun, type TraceLine } from "./helpers.ts";

const ENVELOPE = ["event_type", "event_id", "parent_id", "session_id", "timestamp"];

const SCRIPT = {
  tasks: [
    {
      match: "^second",
      turns: [
        {
          steps: [
            { tool_call: { id: "b1", name: "bash", input: { command: "echo one" } } },
            { tool_call: { id: "b2", name: "bash", input: { command: "exit 3" } } },
          ],
        },
        { steps: [{ tool_call: { id: "b3", name: "nosuchtool", input: {} } }] },
        { steps: [{ text: "second done" }, { usage: { input_tokens: 70, output_tokens: 7 } }] },
      ],
    },
    {
      turns: [
        {
          steps: [
            { thinking: "hm" },
            { text: "first " },
            { tool_call: { id: "a1", name: "bash", input: { command: "echo a" }, chunks: 3 } },
            { usage: { input_tokens: 100, output_tokens: 10 } },
          ],
        },
        // Long enough for the test to queue its second task while this one runs.
        { steps: [{ delay_ms: 1200 }, { text: "first done" }] },
      ],
    },
  ],
};

let shared: ReturnType<typeof runTwoTasks> | null = null;

/** One two-task session, run once and read by every test of this file. */
function twoTaskTrace(): ReturnType<typeof runTwoTasks> {
  shared ??= runTwoTasks();
  return shared;
}

/** A session of two tasks: the launch task and one sent over A2A while it runs. */
async function runTwoTasks(): Promise<
  { trace: TraceLine[]; sessionId: string; code: number }
> {
  const run = await spawnRun({
    manifest: manifest({
      lifecycle: { task_acceptance: "queue", queue_depth: 1, after_task: "exit" },
      capabilities: { shell: { allow: ["bash"] } },
    }),
    script: SCRIPT,
    args: ["--task", "first task", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const sent = await rpc(ready.url, "SendMessage", {
      message: { messageId: "m-second", role: "ROLE_USER", parts: [{ text: "second task" }] },
      configuration: { returnImmediately: true },
    });
    assert.ok(sent.result, JSON.stringify(sent));
    const end = await run.end();
    return {
      trace: await readTrace(`${ready.workdir}/trace.jsonl`),
      sessionId: ready.session_id,
      code: end.code,
    };
  } finally {
    await run.close();
  }
}

Deno.test("trace: envelope first and in order on every line; ids, parents and timestamps", async () => {
  const { trace, sessionId, code } = await twoTaskTrace();
  assertEquals(code, 0);
  const seen = new Set<string>();
  let lastTs = 0;
  for (const line of trace) {
    const where = `${line.event_type} ${line.event_id}`;
    assertEquals(Object.keys(line).slice(0, 5), ENVELOPE, where);
    assert.match(line.event_id, /^evt_[0-9a-f]{32}$/, where);
    assert.ok(!seen.has(line.event_id), `duplicate event_id ${where}`);
    assertEquals(line.session_id, sessionId, where);
    assert.ok(Number.isInteger(line.timestamp) && line.timestamp >= lastTs, where);
    assert.ok(Math.abs(line.timestamp - Date.now()) < 120_000, `${where}: unix ms`);
    lastTs = line.timestamp;
    if (line.event_type === "session_start") assertEquals(line.parent_id, null);
    else {
      assert.ok(line.parent_id !== null, `${where}: only session_start has no parent`);
      assert.ok(
        seen.has(line.parent_id),
        `${where}: parent ${line.parent_id} is not an earlier line`,
      );
    }
    seen.add(line.event_id);
  }
});

Deno.test("trace: one session pair framing one task pair per task; session totals are the sums", async () => {
  const { trace } = await twoTaskTrace();
  assertEquals(trace[0].event_type, "session_start");
  assertEquals(trace.at(-1)!.event_type, "session_end");
  assertEquals(ofType(trace, "session_start").length, 1);
  assertEquals(ofType(trace, "session_end").length, 1);
  const start = trace[0];
  assertEquals([start.capsule_name, start.capsule_version, start.model], [
    "runtest",
    "0.3.0",
    "scripted",
  ]);

  const starts = ofType(trace, "task_start");
  const ends = ofType(trace, "task_end");
  assertEquals(starts.length, 2);
  assertEquals(ends.length, 2);
  assertEquals(ends.map((e) => e.task_id), starts.map((s) => s.task_id));
  assertEquals(starts.map((s) => s.source), ["task_md", "a2a"]);
  const received = ofType(trace, "a2a_task_received");
  assertEquals(received.map((r) => r.task_id), [starts[1].task_id]);

  for (const s of starts) {
    const e = ends.find((x) => x.task_id === s.task_id)!;
    assertEquals(s.parent_id, start.event_id, "task_start is a child of the session");
    assertEquals(e.parent_id, s.event_id, "task_end is a child of its task_start");
    // Every line of the task lies between its start and its end (its a2a_task_received, a
    // session-level line, comes before).
    const i0 = trace.indexOf(s);
    const i1 = trace.indexOf(e);
    for (const l of trace) {
      if (l.task_id === s.task_id && l.event_type !== "a2a_task_received") {
        const i = trace.indexOf(l);
        assert.ok(i >= i0 && i <= i1, `${l.event_type} outside its task`);
      }
    }
    // The task's counters count its own lines.
    const mine = (t: string) => ofType(trace, t).filter((l) => l.task_id === s.task_id);
    assertEquals(e.turns, mine("inference").length);
    assertEquals(e.tool_calls, mine("tool_call").length);
    assertEquals(e.shell_calls, mine("shell").length + mine("shell_detached").length);
    assertEquals(e.input_tokens, mine("inference").reduce((n, l) => n + Number(l.input_tokens), 0));
    assertEquals(
      e.output_tokens,
      mine("inference").reduce((n, l) => n + Number(l.output_tokens), 0),
    );
    assertEquals(e.reopen_count, 0);
    assertEquals(e.exit_status, "ok");
  }
  // The scripted usage steps are what the turns report.
  assertEquals(ofType(trace, "inference")[0].input_tokens, 100);

  const end = trace.at(-1)!;
  const sum = (k: string) => ends.reduce((n, e) => n + Number(e[k]), 0);
  assertEquals(end.parent_id, start.event_id);
  assertEquals(end.total_turns, sum("turns"));
  assertEquals(end.total_input_tokens, sum("input_tokens"));
  assertEquals(end.total_output_tokens, sum("output_tokens"));
  assertEquals(end.total_tool_calls, sum("tool_calls"));
  assertEquals(end.total_shell_calls, sum("shell_calls"));
  assertEquals(end.total_turns, ofType(trace, "inference").length);
  assertEquals(end.total_tool_calls, ofType(trace, "tool_call").length);
  assertEquals([end.total_turns, end.total_tool_calls, end.total_shell_calls], [5, 4, 3]);
  assertEquals(end.exit_status, "ok");
  assert.ok(Number(end.duration_ms) >= 1200);
});

Deno.test("trace: session → task → turn tree; tool_call under its turn's inference line, shell under its tool_call", async () => {
  const { trace } = await twoTaskTrace();
  const byId = new Map(trace.map((l) => [l.event_id, l]));
  for (const inf of ofType(trace, "inference")) {
    const parent = byId.get(inf.parent_id!)!;
    assertEquals(parent.event_type, "task_start");
    assertEquals(parent.task_id, inf.task_id);
  }
  const calls = ofType(trace, "tool_call");
  assertEquals(calls.map((c) => c.tool_call_id), ["a1", "b1", "b2", "b3"]);
  for (const call of calls) {
    const turn = byId.get(call.parent_id!)!;
    assertEquals(turn.event_type, "inference", `${call.tool_call_id}'s parent`);
    assertEquals([turn.task_id, turn.turn], [call.task_id, call.turn], String(call.tool_call_id));
    assertEquals(turn.decision, "tool_call");
  }
  // Both calls of one turn hang under the same inference line.
  assertEquals(calls[1].parent_id, calls[2].parent_id);
  assert.notEqual(calls[2].parent_id, calls[3].parent_id);
  // A non-zero exit is data (status ok); an undeclared tool is an error result.
  assertEquals(calls.map((c) => c.status), ["ok", "ok", "ok", "error"]);
  const shells = ofType(trace, "shell");
  assertEquals(shells.map((s) => s.exit_code), [0, 0, 3]);
  for (const sh of shells) {
    const call = byId.get(sh.parent_id!)!;
    assertEquals(call.event_type, "tool_call");
    assertEquals([call.turn, call.task_id], [sh.turn, sh.task_id]);
  }
  assertEquals(shells.map((s) => s.command), ["echo a", "echo one", "exit 3"]);
  // Turns count from 0 within each task.
  const turnsOf = (i: number) =>
    ofType(trace, "inference").filter((l) => l.task_id === ofType(trace, "task_start")[i].task_id)
      .map((l) => l.turn);
  assertEquals(turnsOf(0), [0, 1]);
  assertEquals(turnsOf(1), [0, 1, 2]);
});
