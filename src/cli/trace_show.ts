/**
 * `mur trace show`: a summary of one session's trace, in sections. A section with nothing to say
 * is left out, except Session, Turns and Tokens. Turns are numbered from 1, as the stream says
 * them; when the session ran more than one task, every per-call row names its task
 * (`tsk a1b2c3`, as `mur watch` labels it) and the turn limit is said to be per task.
 */
import { duration, num, short, str, taskTag, type TraceEvent, turnNumber } from "./trace_read.ts";
import { approvalRows, steerRows } from "./trace_approvals.ts";

const ISO = (ms: number | undefined) => (ms === undefined ? "?" : new Date(ms).toISOString());

function section(title: string, rows: string[], always = false): string[] {
  if (rows.length === 0 && !always) return [];
  return [title, ...(rows.length ? rows : ["none"]).map((r) => `  ${r}`)];
}

/** What every section reads: the trace by event type, and how rows name their task and turn. */
interface View {
  of(t: string): TraceEvent[];
  start: TraceEvent;
  end: TraceEvent | undefined;
  taskStarts: TraceEvent[];
  taskEnds: TraceEvent[];
  agentTurns: TraceEvent[];
  /** The session ran more than one task: rows name theirs. */
  several: boolean;
  maxTurns: number | undefined;
  /** A row's task, when the session ran several: `tsk a1b2c3  `. */
  whose(e: TraceEvent): string;
  turnOf(e: TraceEvent): string;
}

function viewOf(events: TraceEvent[]): View {
  const of = (t: string) => events.filter((e) => e.event_type === t);
  const start = of("session_start")[0];
  const taskStarts = of("task_start");
  const several = new Set(taskStarts.map((e) => str(e, "task_id"))).size > 1;
  return {
    of,
    start,
    end: of("session_end").at(-1),
    taskStarts,
    taskEnds: of("task_end"),
    agentTurns: of("inference").filter((e) => e.origin === undefined || e.origin === null),
    several,
    maxTurns: num(start, "max_turns"),
    whose: (e) => (several ? `${taskTag(str(e, "task_id"))}  ` : ""),
    turnOf: (e) => `turn ${turnNumber(e)}`,
  };
}

export function showTrace(events: TraceEvent[]): string[] {
  const v = viewOf(events);
  const skills = skillRows(v);
  return [
    ...section("Session", sessionRows(v), true),
    ...section("Hook failures", hookRows(v)),
    ...section("Context", contextRows(v)),
    ...section("Turns", turnRows(v), true),
    ...section("Tokens", tokenRows(v), true),
    ...section("Tool calls", toolRows(v)),
    ...section("Skill calls", skills.length ? [`count: ${skills.length}`, ...skills] : []),
    ...section("Shell calls", shellRows(v)),
    ...section("Published", publishRows(v)),
    ...section("Compaction", compactionRows(v)),
    ...section("Cancelled", canceledRows(v)),
    ...section("Rejected", rejectedRows(v)),
    ...section("Failed", failedRows(v)),
    ...section("Reopens", reopenRows(v)),
    ...section("Tasks", taskRows(v)),
    ...section("Denied calls", deniedRows(v)),
    ...section("Approvals", approvalRows(v.of, v.whose, v.turnOf)),
    ...section("Steers", steerRows(v.of, v.whose)),
    ...section("Tool sources", sourceRows(v)),
    ...section("OpenTelemetry", otelRows(v)),
  ];
}

function sessionRows({ start, end }: View): string[] {
  const rows = [
    `session:   ${start.session_id}`,
    `capsule:   ${str(start, "capsule_name") ?? "?"}@${str(start, "capsule_version") ?? "?"}`,
  ];
  const model = str(start, "model");
  if (model) rows.push(`model:     ${model}`);
  rows.push(`started:   ${ISO(start.timestamp)}`);
  if (end) {
    rows.push(
      `duration:  ${duration(num(end, "duration_ms") ?? end.timestamp - start.timestamp)}`,
    );
    rows.push(`status:    ${str(end, "exit_status") ?? "?"}`);
  } else {
    rows.push("status:    — no session_end: the session is still running, or was killed");
  }
  const resumed = str(start, "resumed_from");
  if (resumed) rows.push(`resumed:   from ${resumed}`);
  return rows;
}

function turnRows({ of, end, agentTurns, several, taskStarts, maxTurns }: View): string[] {
  // A failed agent call is not a turn; session_end's total is the runtime's own count.
  const turns = num(end, "total_turns") ?? agentTurns.filter((e) => e.decision !== "error").length;
  // inference.max_turns bounds each task, not the session: with several tasks, say so.
  const rows = [
    several
      ? `count: ${turns} in ${taskStarts.length} tasks${
        maxTurns !== undefined ? ` (max: ${maxTurns} per task)` : ""
      }`
      : `count: ${turns}${maxTurns !== undefined ? ` (max: ${maxTurns})` : ""}`,
  ];
  const continued = of("task_continued").length;
  if (continued) rows.push(`continued: ${continued}`);
  return rows;
}

function tokenRows({ end, agentTurns }: View): string[] {
  const sum = (k: string) => agentTurns.reduce((n, e) => n + (num(e, k) ?? 0), 0);
  return [
    `input: ${num(end, "total_input_tokens") ?? sum("input_tokens")}  output: ${
      num(end, "total_output_tokens") ?? sum("output_tokens")
    }`,
  ];
}

function toolRows({ of, whose, turnOf }: View): string[] {
  return of("tool_call").map((e) =>
    `${whose(e)}${turnOf(e)}  ${str(e, "tool_name") ?? "?"}  ${str(e, "status") ?? "?"}  ${
      duration(num(e, "duration_ms"))
    }  ${short(e.input ?? "")}`
  );
}

// Skill calls are apart from tool calls (docs/manifest.md "artifacts"): a skill_call line is not a tool_call.
function skillRows({ of, whose, turnOf }: View): string[] {
  return of("skill_call").map((e) =>
    `${whose(e)}${turnOf(e)}  ${str(e, "skill_name") ?? "?"}  ${str(e, "origin") ?? "?"}/${
      str(e, "trust") ?? "?"
    }  ${str(e, "status") ?? "?"}  ${num(e, "output_bytes") ?? "?"} bytes  ${
      duration(num(e, "duration_ms"))
    }`
  );
}

// Files handed back with `publish` (docs/protocol.md "Files and data"): the path, and whether
// it became an artifact (`ok`) or was refused (`error`, the code is in the tool's result).
function publishRows({ of, whose, turnOf }: View): string[] {
  return of("tool_call").filter((e) => e.tool_name === "publish").map((e) => {
    const input = e.input as { path?: unknown } | undefined;
    return `${whose(e)}${turnOf(e)}  ${short(String(input?.path ?? "?"), 120)}  ${
      str(e, "status") === "ok" ? "published" : "refused"
    }`;
  });
}

function shellRows({ of, whose, turnOf }: View): string[] {
  return [
    ...of("shell").map((e) =>
      `${whose(e)}${turnOf(e)}  ${str(e, "binary") ?? "?"} ${short(e.command ?? "", 80)}  exit ${
        num(e, "exit_code") ?? "?"
      }  ${duration(num(e, "duration_ms"))}`
    ),
    ...of("shell_detached").map((e) =>
      `${whose(e)}${turnOf(e)}  ${str(e, "binary") ?? "?"} ${
        short(e.command ?? "", 80)
      }  detached as ${str(e, "work_id") ?? "?"}`
    ),
    ...of("shell_completed").map((e) =>
      `${str(e, "work_id") ?? "?"}  completed  exit ${num(e, "exit_code") ?? "?"}  ${
        duration(num(e, "duration_ms"))
      }`
    ),
    ...of("shell_abandoned").map((e) => `${str(e, "work_id") ?? "?"}  abandoned at session end`),
  ];
}

function canceledRows({ of, turnOf }: View): string[] {
  return of("task_canceled").map((e) =>
    `${str(e, "task_id") ?? "?"}  phase ${str(e, "phase") ?? "?"}${
      num(e, "turn") !== undefined ? `  ${turnOf(e)}` : ""
    }`
  );
}

function rejectedRows({ of }: View): string[] {
  return of("task_rejected").map((e) =>
    `${str(e, "task_id") ?? "?"}  ${str(e, "cause") ?? "?"}  ${str(e, "reason") ?? ""}`.trimEnd()
  );
}

function failedRows({ of, turnOf }: View): string[] {
  return of("task_failed").map((e) =>
    `${str(e, "task_id") ?? "?"}${num(e, "turn") !== undefined ? `  ${turnOf(e)}` : ""}  ${
      str(e, "cause") ?? "?"
    }  ${short(str(e, "reason") ?? "", 200)}`
  );
}

function reopenRows({ of }: View): string[] {
  return of("task_reopened").map((e) =>
    `reopen ${num(e, "reopen_number") ?? "?"}  by ${str(e, "hook_name") ?? "?"}  ${
      str(e, "attempt_context") ?? "?"
    }, ${num(e, "turns_remaining") ?? "?"} turns left  “${short(str(e, "reason") ?? "", 100)}”`
  );
}

function hookRows({ of }: View): string[] {
  return of("hook_dispatch_error").map((e) =>
    `${str(e, "hook_name") ?? "?"}  ${str(e, "event") ?? "?"}  ${str(e, "arm") ?? "?"}`
  );
}

function deniedRows({ of, whose, turnOf }: View): string[] {
  return of("call_denied").map((e) =>
    `${whose(e)}${turnOf(e)}  ${str(e, "event") ?? "?"}  by ${str(e, "hook_name") ?? "?"}  ${
      short(e.target ?? "", 60)
    }  ${str(e, "reason") ?? ""}`.trimEnd()
  );
}

function compactionRows({ of, whose, turnOf }: View): string[] {
  return [
    ...of("compaction").map((e) =>
      `${whose(e)}${turnOf(e)}  ${num(e, "tokens_before") ?? "?"} → ${
        num(e, "tokens_after") ?? "?"
      } tokens`
    ),
    ...of("compaction_declined").map((e) =>
      `declined: ${whose(e)}${turnOf(e)}  ${num(e, "tokens") ?? "?"} tokens  ${
        str(e, "reason") ?? "?"
      }`
    ),
  ];
}

function contextRows({ of }: View): string[] {
  return of("context_seed").map((e) =>
    `${str(e, "hook_name") ?? "?"}  ${str(e, "outcome") ?? "?"}  ${num(e, "tokens") ?? "?"} tokens${
      str(e, "reason") ? `  ${str(e, "reason")}` : ""
    }`
  );
}

/** MCP servers and OpenAPI services that failed (docs/mcp.md), the harness's included. */
function sourceRows({ of, whose }: View): string[] {
  return [...of("source_error"), ...of("harness_source_error")].map((e) =>
    `${e.task_id ? whose(e) : ""}${str(e, "kind") ?? "?"} ${str(e, "source") ?? "?"}${
      str(e, "phase") ? ` (${str(e, "phase")})` : ""
    }: ${short(str(e, "message") ?? "", 200)}`
  );
}

function otelRows({ of }: View): string[] {
  return of("otel_export").map((e) =>
    `${num(e, "spans") ?? "?"} spans to ${str(e, "endpoint") ?? "?"}: ${
      num(e, "exported") ?? "?"
    } exported, ${num(e, "dropped") ?? "?"} dropped`
  );
}

function taskRows({ several, taskStarts, taskEnds, maxTurns }: View): string[] {
  return several
    ? taskStarts.map((s) => {
      const id = str(s, "task_id") ?? "?";
      const e = taskEnds.find((t) => t.task_id === id);
      const turnsOf = `${num(e, "turns") ?? "?"}${maxTurns !== undefined ? ` of ${maxTurns}` : ""}`;
      return `${taskTag(id)}  ${id}  turns: ${turnsOf}  in: ${
        num(e, "input_tokens") ?? "?"
      }  out: ${num(e, "output_tokens") ?? "?"}  ${str(e, "exit_status") ?? "running"}  ${
        e ? duration(num(e, "duration_ms")) : ""
      }`
        .trimEnd();
    })
    : [];
}
