/**
 * `mur trace show` / `mur trace steps` over a trace.jsonl written as docs/running.md "Files" and
 * src/trace_events.ts describe.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { runMur } from "./helpers.ts";

const SID = "ses_019f01a940ce7761854e768ecbe3d399";
const OLDER = "ses_019f01a940ce7761854e768ecbe30001";
const TA = "tsk_019f01a940ce7761854e768ecbe3aaaa";
const TB = "tsk_019f01a940ce7761854e768ecbe3bbbb";
const TC = "tsk_019f01a940ce7761854e768ecbe3cccc";

let n = 0;
function ev(type: string, parent: string | null, fields: Record<string, unknown>) {
  const id = `evt_${String(++n).padStart(32, "0")}`;
  return {
    event_type: type,
    event_id: id,
    parent_id: parent,
    session_id: SID,
    timestamp: 1_790_000_000_000 + n,
    ...fields,
  };
}

function sampleTrace() {
  const s = ev("session_start", null, {
    capsule_name: "hello",
    capsule_version: "0.1.0",
    model: "scripted",
    max_turns: 10,
  });
  const recv = ev("a2a_task_received", s.event_id, {
    task_id: TA,
    context_id: "ctx_1",
    message_id: "m1",
  });
  const ta = ev("task_start", s.event_id, {
    task_id: TA,
    context_id: "ctx_1",
    source: "a2a",
    origin: "user",
    trust: "trusted",
    lane: "user",
  });
  const i0 = ev("inference", ta.event_id, {
    turn: 0,
    task_id: TA,
    input_tokens: 100,
    output_tokens: 20,
    decision: "tool_call",
    stop_reason: "tool_use",
    tool_name: "bash",
  });
  const tc = ev("tool_call", i0.event_id, {
    turn: 0,
    task_id: TA,
    tool_name: "bash",
    tool_call_id: "toolu_01",
    input: { command: "echo hi" },
    duration_ms: 12,
    status: "ok",
  });
  const sh = ev("shell", i0.event_id, {
    turn: 0,
    task_id: TA,
    binary: "/usr/bin/bash",
    command: "echo hi",
    exit_code: 0,
    duration_ms: 11,
  });
  const i1 = ev("inference", ta.event_id, {
    turn: 1,
    task_id: TA,
    input_tokens: 150,
    output_tokens: 30,
    decision: "end_turn",
    stop_reason: "end_turn",
  });
  const ea = ev("task_end", ta.event_id, {
    task_id: TA,
    exit_status: "ok",
    duration_ms: 1500,
    turns: 2,
    input_tokens: 250,
    output_tokens: 50,
    tool_calls: 1,
    shell_calls: 1,
    reopen_count: 0,
  });
  const tb = ev("task_start", s.event_id, {
    task_id: TB,
    context_id: "ctx_2",
    source: "a2a",
    origin: "user",
    trust: "trusted",
    lane: "user",
  });
  const j0 = ev("inference", tb.event_id, {
    turn: 0,
    task_id: TB,
    decision: "error",
    stop_reason: "error",
    error: "provider overloaded",
  });
  const fb = ev("task_failed", tb.event_id, {
    task_id: TB,
    turn: 0,
    cause: "driver_error",
    reason: "provider overloaded",
  });
  const eb = ev("task_end", tb.event_id, {
    task_id: TB,
    exit_status: "failed",
    duration_ms: 20,
    turns: 0,
    input_tokens: 0,
    output_tokens: 0,
  });
  const rc = ev("task_rejected", s.event_id, {
    task_id: TC,
    context_id: "ctx_3",
    source: "a2a",
    cause: "session_stopped",
    reason: "task rejected: the session was stopped before this task started",
  });
  const se = ev("session_end", s.event_id, {
    total_turns: 2,
    total_input_tokens: 250,
    total_output_tokens: 50,
    total_tool_calls: 1,
    total_shell_calls: 1,
    duration_ms: 2345,
    exit_status: "failed",
  });
  return [s, recv, ta, i0, tc, sh, i1, ea, tb, j0, fb, eb, rc, se];
}

async function workdirWith(trace: unknown[]): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "mur-trace-" });
  await Deno.mkdir(`${root}/workdir/${SID}`, { recursive: true });
  await Deno.mkdir(`${root}/workdir/${OLDER}`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/workdir/${SID}/trace.jsonl`,
    trace.map((e) => JSON.stringify(e)).join("\n") + "\n",
  );
  return root;
}

Deno.test("mur trace steps: session → task → turn tree from parent_id", async () => {
  const root = await workdirWith(sampleTrace());
  try {
    const r = await runMur(["trace", "steps", "--workdir", `${root}/workdir`]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(
      r.stdout,
      [
        `session ${SID}  hello@0.1.0`,
        `  task ${TA}  ctx_1  (a2a, user/trusted, lane user)`,
        "    turn 1  tool_call bash  in 100 out 20",
        '      tool_call bash  ok  12ms  {"command":"echo hi"}',
        "      shell /usr/bin/bash echo hi  exit 0  11ms",
        "    turn 2  end_turn  in 150 out 30",
        "    task_end  ok  2 turns  1.5s",
        `  task ${TB}  ctx_2  (a2a, user/trusted, lane user)`,
        "    turn 1  error  provider overloaded",
        "    task_failed  driver_error  provider overloaded",
        "    task_end  failed  0 turns  20ms",
        `  task_rejected ${TC}  session_stopped  task rejected: the session was stopped before this task started`,
        "  session_end  failed  2 turns  2.345s",
        "",
      ].join("\n"),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("mur trace show: the summary sections", async () => {
  const root = await workdirWith(sampleTrace());
  try {
    const r = await runMur(["trace", "show", SID.slice(-4), "--workdir", `${root}/workdir`]);
    assertEquals(r.code, 0, r.stderr);
    const out = r.stdout;
    for (
      const line of [
        "Session",
        `  session:   ${SID}`,
        "  capsule:   hello@0.1.0",
        "  model:     scripted",
        "  duration:  2.345s",
        "  status:    failed",
        // Two tasks: the session's turns against a per-task limit, said as such.
        "Turns",
        "  count: 2 in 2 tasks (max: 10 per task)",
        "Tokens",
        "  input: 250  output: 50",
        // Turns numbered from 1 as the stream says them; each call names its task.
        "Tool calls",
        '  tsk e3aaaa  turn 1  bash  ok  12ms  {"command":"echo hi"}',
        "Shell calls",
        "  tsk e3aaaa  turn 1  /usr/bin/bash echo hi  exit 0  11ms",
        "Rejected",
        `  ${TC}  session_stopped  task rejected: the session was stopped before this task started`,
        "Failed",
        `  ${TB}  turn 1  driver_error  provider overloaded`,
        "Tasks",
        `  tsk e3aaaa  ${TA}  turns: 2 of 10  in: 250  out: 50  ok  1.5s`,
        `  tsk e3bbbb  ${TB}  turns: 0 of 10  in: 0  out: 0  failed  20ms`,
      ]
    ) assert(out.split("\n").includes(line), `missing ${JSON.stringify(line)} in\n${out}`);
    assert(!out.includes("Reopens"), "an empty section is left out");
    assert(!out.includes("count: 2 (max: 10)"), out);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("mur trace show of a one-task session: the task's turns against its limit, rows unlabelled", async () => {
  const one = sampleTrace().filter((e) => {
    const task = (e as Record<string, unknown>).task_id;
    return task !== TB && task !== TC && e.event_type !== "session_end";
  });
  const root = await workdirWith(one);
  try {
    const r = await runMur(["trace", "show", "--workdir", `${root}/workdir`]);
    assertEquals(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert(lines.includes("  count: 2 (max: 10)"), r.stdout);
    assert(lines.includes('  turn 1  bash  ok  12ms  {"command":"echo hi"}'), r.stdout);
    assert(!r.stdout.includes("Tasks"), r.stdout);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("mur trace: path form, a running session without session_end, and the errors", async () => {
  const trace = sampleTrace().filter((e) => e.event_type !== "session_end");
  const root = await workdirWith(trace);
  try {
    const byPath = await runMur(["trace", "show", `${root}/workdir/${SID}`]);
    assertEquals(byPath.code, 0, byPath.stderr);
    assert(byPath.stdout.includes("status:    — no session_end"), byPath.stdout);

    const older = await runMur(["trace", "show", "@2", "--workdir", `${root}/workdir`]);
    assertEquals(older.code, 1);
    assert(
      older.stderr.startsWith("error[E-TRC-001]: ") && older.stderr.includes(OLDER),
      older.stderr,
    );

    const none = await runMur(["trace", "show", "@3", "--workdir", `${root}/workdir`]);
    assertEquals(none.code, 1);
    assert(none.stderr.startsWith("error[E-TRC-002]: no session in"), none.stderr);

    await Deno.writeTextFile(
      `${root}/workdir/${SID}/trace.jsonl`,
      "{broken\n" + JSON.stringify(trace[0]) + "\n",
    );
    const bad = await runMur(["trace", "steps", SID, "--workdir", `${root}/workdir`]);
    assertEquals(bad.code, 1);
    assert(
      bad.stderr.startsWith(
        `error[E-TRC-001]: ${root}/workdir/${SID}/trace.jsonl:1: the line is not JSON`,
      ),
      bad.stderr,
    );

    const usage = await runMur(["trace", "diff"]);
    assertEquals(usage.code, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
