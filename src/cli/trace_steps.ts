/**
 * `mur trace steps`: the session → task → turn tree, built from each event's `parent_id`.
 * A turn's node is its agent-loop `inference` event. Event types this reader does not know are
 * skipped (their children, if any, are lifted to the nearest shown ancestor).
 */
import { duration, num, short, str, type TraceEvent, turnNumber } from "./trace_read.ts";
import { APPROVAL_STEPS } from "./trace_approvals.ts";

type Row = (e: TraceEvent) => string;

const ROWS: Record<string, Row> = {
  ...APPROVAL_STEPS,
  session_start: (e) =>
    `session ${e.session_id}  ${str(e, "capsule_name") ?? "?"}@${str(e, "capsule_version") ?? "?"}`,
  task_start: (e) =>
    `task ${str(e, "task_id") ?? "?"}  ${str(e, "context_id") ?? "?"}  (${
      str(e, "source") ?? "?"
    }, ${str(e, "origin") ?? "?"}/${str(e, "trust") ?? "?"}, lane ${str(e, "lane") ?? "?"})`,
  inference: (e) => {
    const hook = str(e, "origin");
    // Numbered from 1, as the stream's `inference turn <n>` (trace.jsonl counts from 0).
    const head = hook ? `inference ${hook}` : `turn ${turnNumber(e)}`;
    const tool = str(e, "tool_name");
    const decision = str(e, "decision") ?? "?";
    const tokens = num(e, "input_tokens") !== undefined || num(e, "output_tokens") !== undefined
      ? `  in ${num(e, "input_tokens") ?? "?"} out ${num(e, "output_tokens") ?? "?"}`
      : "";
    const err = str(e, "error") ? `  ${short(str(e, "error"), 120)}` : "";
    return `${head}  ${decision}${tool ? ` ${tool}` : ""}${tokens}${err}`;
  },
  tool_call: (e) =>
    `tool_call ${str(e, "tool_name") ?? "?"}  ${str(e, "status") ?? "?"}  ${
      duration(num(e, "duration_ms"))
    }  ${short(e.input ?? "")}`,
  skill_call: (e) =>
    `skill_call ${str(e, "skill_name") ?? "?"}  ${str(e, "status") ?? "?"}  ${
      duration(num(e, "duration_ms"))
    }`,
  shell: (e) =>
    `shell ${str(e, "binary") ?? "?"} ${short(e.command ?? "", 80)}  exit ${
      num(e, "exit_code") ?? "?"
    }  ${duration(num(e, "duration_ms"))}`,
  shell_detached: (e) =>
    `shell_detached ${str(e, "binary") ?? "?"} ${short(e.command ?? "", 80)}  as ${
      str(e, "work_id") ?? "?"
    }`,
  shell_completed: (e) =>
    `shell_completed ${str(e, "work_id") ?? "?"}  exit ${num(e, "exit_code") ?? "?"}`,
  shell_abandoned: (e) => `shell_abandoned ${str(e, "work_id") ?? "?"}`,
  context_seed: (e) =>
    `context_seed ${str(e, "hook_name") ?? "?"}  ${str(e, "outcome") ?? "?"}  ${
      num(e, "tokens") ?? "?"
    } tokens`,
  compaction: (e) =>
    `compaction  ${num(e, "tokens_before") ?? "?"} → ${num(e, "tokens_after") ?? "?"} tokens`,
  call_denied: (e) =>
    `call_denied ${str(e, "event") ?? "?"}  by ${str(e, "hook_name") ?? "?"}  ${
      str(e, "reason") ?? ""
    }`.trimEnd(),
  tool_input_refused: (e) =>
    `tool_input_refused ${str(e, "tool_name") ?? "?"}  missing ${short(e.missing ?? [], 60)}`,
  task_failed: (e) =>
    `task_failed  ${str(e, "cause") ?? "?"}  ${short(str(e, "reason") ?? "", 160)}`,
  task_canceled: (e) => `task_canceled  phase ${str(e, "phase") ?? "?"}`,
  task_rejected: (e) =>
    `task_rejected ${str(e, "task_id") ?? "?"}  ${str(e, "cause") ?? "?"}  ${
      str(e, "reason") ?? ""
    }`.trimEnd(),
  task_reopened: (e) =>
    `task_reopened ${num(e, "reopen_number") ?? "?"}  by ${str(e, "hook_name") ?? "?"}  ${
      str(e, "attempt_context") ?? "?"
    }  “${short(str(e, "reason") ?? "", 80)}”`,
  task_continued: (e) =>
    `task_continued  ${list(e, "member_calls").length} member answer(s), ${
      list(e, "delegations").length
    } delegation outcome(s)  waited ${duration(num(e, "waited_ms"))}`,
  // Crews (docs/crews.md): the caller's side names the member's task, the member's side
  // (a2a_task_received of a `msg_<call id>` message) names the call.
  a2a_task_received: (e) =>
    `called by ${(str(e, "message_id") ?? "").slice("msg_".length)}  task ${
      str(e, "task_id") ?? "?"
    }`,
  member_call_busy: (e) =>
    `member_call_busy ${str(e, "call_id") ?? "?"}  ${str(e, "member") ?? "?"}  offer ${
      num(e, "offer") ?? "?"
    }`,
  member_call_start: (e) =>
    `member_call_start ${str(e, "call_id") ?? "?"}  → ${str(e, "member") ?? "?"} task ${
      str(e, "member_task_id") ?? "?"
    }`,
  member_call: (e) =>
    `member_call ${str(e, "call_id") ?? "?"}  ${str(e, "member") ?? "?"}  ${
      str(e, "status") ?? "?"
    }  ${duration(num(e, "duration_ms"))}`,
  delegation_start: (e) =>
    `delegation_start ${str(e, "delegation_id") ?? "?"}  → ${str(e, "capsule") ?? "?"} session ${
      str(e, "child_session_id") ?? "?"
    } task ${str(e, "child_task_id") ?? "?"}`,
  delegation: (e) =>
    `delegation ${str(e, "delegation_id") ?? "?"}  ${str(e, "capsule") ?? "?"}  ${
      str(e, "outcome") ?? "?"
    }  ${duration(num(e, "duration_ms"))}`,
  no_answer: (e) => `no_answer  “${short(str(e, "reason") ?? "", 80)}”`,
  task_end: (e) =>
    `task_end  ${str(e, "exit_status") ?? "?"}  ${num(e, "turns") ?? "?"} turns  ${
      duration(num(e, "duration_ms"))
    }`,
  spend_ceiling_reached: (e) => `spend_ceiling_reached ${str(e, "limit") ?? "?"}`,
  hook_dispatch_error: (e) =>
    `hook_dispatch_error ${str(e, "hook_name") ?? "?"}  ${str(e, "event") ?? "?"}  ${
      str(e, "arm") ?? "?"
    }`,
  otel_export: (e) =>
    `otel_export  ${num(e, "spans") ?? "?"} spans, ${num(e, "exported") ?? "?"} exported, ${
      num(e, "dropped") ?? "?"
    } dropped`,
  session_end: (e) =>
    `session_end  ${str(e, "exit_status") ?? "?"}  ${num(e, "total_turns") ?? "?"} turns  ${
      duration(num(e, "duration_ms"))
    }`,
};

function list(e: TraceEvent, key: string): unknown[] {
  const v = (e as Record<string, unknown>)[key];
  return Array.isArray(v) ? v : [];
}

/** Shown: a type with a row; `a2a_task_received` only for a crew call's message. */
function shown(e: TraceEvent): boolean {
  if (!ROWS[e.event_type]) return false;
  if (e.event_type !== "a2a_task_received") return true;
  return /^msg_(mcl|dlg)_/.test(str(e, "message_id") ?? "");
}

/** The tree as indented lines (two spaces per level), children in file order. */
export function stepsTree(events: TraceEvent[]): string[] {
  const byId = new Map(events.map((e) => [e.event_id, e]));
  const children = new Map<string | null, TraceEvent[]>();
  const root = events.find((e) => e.event_type === "session_start")!;
  // The nearest ancestor that is shown; an orphan (its parent is not in the file) hangs off the root.
  const shownParent = (e: TraceEvent): string | null => {
    let p = e.parent_id;
    const seen = new Set<string>();
    while (p !== null && byId.has(p) && !seen.has(p)) {
      seen.add(p);
      const pe = byId.get(p)!;
      if (shown(pe)) return p;
      p = pe.parent_id;
    }
    return e === root ? null : root.event_id;
  };
  for (const e of events) {
    if (e === root || !shown(e)) continue;
    const p = shownParent(e);
    const list = children.get(p) ?? [];
    list.push(e);
    children.set(p, list);
  }
  const out: string[] = [];
  const walk = (e: TraceEvent, depth: number) => {
    out.push("  ".repeat(depth) + ROWS[e.event_type](e));
    for (const c of children.get(e.event_id) ?? []) walk(c, depth + 1);
  };
  walk(root, 0);
  return out;
}
