/**
 * Every line `trace.jsonl` holds, keyed by its `event_type`, with its fields (README "Where
 * things are written": the trace). The writer (`src/trace_writer.ts`) takes only these, so a
 * line the runtime writes is a type here first: a new line, or a field renamed, is one edit here
 * that the compiler then walks through every caller.
 *
 * The envelope (`event_type, event_id, parent_id, session_id, timestamp`) is the writer's; these
 * are the fields after it, in the order the callers write them (the order is the file's).
 */

/** A task's start, end and the ways it can end early. */
interface TaskLines {
  a2a_task_received: {
    task_id: string;
    context_id: string;
    message_id: string | null;
    traceparent_from_caller: null;
  };
  task_start: {
    task_id: string;
    context_id: string;
    source: "a2a" | "task_md" | "detached_shell" | "detached_lost";
    origin: "user" | "peer" | "schedule" | "event" | "completion" | "system";
    trust: "trusted" | "untrusted";
    lane: "user" | "peer" | "bg";
    message_parts_bytes: number;
  };
  task_end: {
    task_id: string;
    exit_status: string;
    duration_ms: number;
    turns: number;
    input_tokens: number;
    output_tokens: number;
    tool_calls: number;
    shell_calls: number;
    reopen_count: number;
  };
  /** Why a task failed; `turn` when a turn was running, the harness's fields for a harness. */
  task_failed: {
    task_id: string;
    turn?: number;
    cause: string;
    reason: string;
    error_code?: string;
    harness_failure?: string;
    origin?: "harness" | "runtime";
  };
  task_canceled: {
    task_id: string;
    phase: "queued" | "input" | "turn";
    detached_work_ids: string[];
  };
  task_rejected: {
    task_id: string;
    context_id: string;
    source: string;
    cause: "session_stopped" | "session_ended";
    reason: string;
  };
  task_reopened: {
    task_id: string;
    hook_name: string;
    reason: string;
    reopen_number: number;
    attempt_context: "continued";
    turns_remaining: number;
  };
  done_check: {
    task_id: string;
    command: string;
    exit_code: number | null;
    passed: boolean;
    duration_ms: number;
    output_bytes: number;
    note?: string;
  };
  keep_working: { task_id: string; turn: number; nudge_number: number; limit: number };
  context_seed: {
    task_id: string;
    hook_name: string;
    tokens: number;
    proposed_tokens: number;
    budget_tokens: number;
    outcome: string;
    reason?: string;
    message_ids: string[];
  };
}

/** Model turns, their spend and the conversation's size. */
interface TurnLines {
  /** One closed model action. A canceled turn has no token counts; a failed one its error. */
  inference: {
    turn: number;
    task_id: string;
    input_tokens?: number;
    output_tokens?: number;
    decision: string;
    stop_reason: string;
    tool_name?: string | null;
    model: string;
    error_code?: string;
    error?: string;
  };
  spend_ceiling_reached: {
    turn: number;
    task_id: string;
    limit: "session";
    ceiling: number;
    used: number;
    requested: number;
    origin: "agent";
  };
  compaction: { turn: number; task_id: string; tokens_before: number; tokens_after: number };
  compaction_declined: { turn: number; task_id: string; tokens: number; reason: string };
}

/** Tool calls and the refusals before them. */
interface ToolLines {
  tool_call: {
    turn: number;
    task_id: string;
    tool_name: string;
    tool_call_id: string;
    input: unknown;
    input_bytes: number;
    output_bytes: number;
    duration_ms: number;
    status: "ok" | "error";
    /** Present (true) only when the output the model was shown was cut (docs/tools.md). */
    truncated?: true;
    /** The MCP server whose tool it was (docs/mcp.md). */
    server?: string;
  };
  /** An MCP tool's `notifications/progress`, at most one per call per 250 ms (docs/mcp.md). */
  tool_progress: {
    turn: number;
    task_id: string;
    tool_name: string;
    tool_call_id: string;
    server: string;
    progress: number;
    total?: number;
    message?: string;
  };
  /**
   * A tool source (an MCP server) could not be started, listed, or went away (docs/mcp.md): the
   * model goes without its tools; `phase` is `launch` or `session`.
   */
  source_error: {
    kind: "mcp" | "openapi";
    source: string;
    message: string;
    phase: "launch" | "session";
  };
  /**
   * A call that read a skill (docs/manifest.md "artifacts"), in place of its `tool_call`; not counted in the
   * tool totals of `task_end` and `session_end`.
   */
  skill_call: {
    turn: number;
    task_id: string;
    skill_name: string;
    output_bytes: number;
    duration_ms: number;
    status: "ok" | "error";
    origin: "operator" | "runtime";
    trust: "trusted" | "untrusted";
  };
  tool_input_refused: {
    turn: number;
    tool_name: string;
    tool_call_id: string;
    missing: string[];
    reason: string;
  };
  protected_path_denied: {
    turn: number;
    call: string;
    target: string;
    path: string;
    rule: string;
    signal: string;
    reason: string;
  };
  /** A call waits for a person's approval (docs/approvals.md). */
  approval_requested: {
    turn: number;
    task_id: string;
    tool_name: string;
    tool_call_id: string;
    arguments_hash: string;
    reason: string;
    timeout_secs: number;
  };
  /** How the wait ended: `by` is the credential that answered (absent: no one did). */
  approval_resolved: {
    turn: number;
    task_id: string;
    tool_name: string;
    tool_call_id: string;
    outcome: "approved" | "denied" | "expired" | "canceled";
    by?: string;
    reason?: string;
    waited_ms: number;
  };
  /** A steer message was read by the running task (docs/approvals.md "Steering"). */
  steer_taken: {
    task_id: string;
    message_id: string;
    turn: number;
    text_bytes: number;
  };
  call_denied: {
    turn: number;
    event: "on-shell" | "on-tool-call";
    hook_name: string;
    target: string;
    reason: string;
  };
  shell: {
    turn: number;
    task_id: string;
    binary: string;
    command: string;
    exit_code: number | null;
    stdout_bytes: number;
    stderr_bytes: number;
    duration_ms: number;
  };
  shell_detached: {
    turn: number;
    task_id: string;
    work_id: string;
    binary: string;
    command: string;
    grace_ms: number;
  };
  shell_completed: {
    work_id: string;
    binary: string;
    command: string;
    exit_code: number | null;
    duration_ms: number;
    output_path: string;
    output_bytes: number;
    resource_limit: null;
    status: "ok" | "error";
    completion_task_id: string;
  };
  /** Written by a resume into the old session's trace, one per command it reports lost. */
  shell_lost: {
    work_id: string;
    binary: string;
    command: string;
    detached_at_ms: number;
    reconciled_by_session: string;
    reconciled_task_id: string;
  };
  shell_abandoned: {
    work_id: string;
    binary: string;
    command: string;
    running_ms: number;
    exit_code?: number | null;
    output_path?: string;
    output_bytes?: number;
  };
}

/** The session's own lines. */
interface SessionLines {
  session_start: {
    capsule_name: string;
    capsule_version: string;
    model: string;
    max_turns: number;
    max_session_tokens: number | null;
    capabilities: string[];
    tools_declared: string[];
    resumed_from: string | null;
    context_id: string | null;
    system_prompt_source: string;
    /**
     * SHA-256 (lowercase hex) of the resolved system prompt (inline, file or bound skill) before
     * the `[Capsule]` block is prepended (src/drivers/capsule_block.ts); null without a prompt.
     */
    system_prompt_sha256: string | null;
    /** What the staging phase staged (docs/manifest.md "The staging phase"), in staging order. */
    runtime_artifacts: RuntimeArtifactField[];
    /** The floor the manifest or `--containment` asked for (docs/containment.md); null: none. */
    containment_declared: string | null;
    /** The class every process of the session runs under. */
    containment_achieved: string;
  };
  session_end: {
    total_turns: number;
    total_input_tokens: number;
    total_output_tokens: number;
    total_tool_calls: number;
    total_shell_calls: number;
    duration_ms: number;
    exit_status: string;
  };
  /** A hook that could not be honoured (`arm`: which answer or failure). */
  hook_dispatch_error: { hook_name: string; event: string; arm: string };
  /**
   * The OpenTelemetry export's count (src/otel/), just before `session_end`: spans made, accepted
   * by the collector, and dropped (queue full, collector unreachable, refused or too slow).
   */
  otel_export: { endpoint: string; spans: number; exported: number; dropped: number };
  /**
   * Publishing to the cluster's Redis (src/cluster/publisher.ts; docs/edge.md):
   * `down` once when it stops taking events (the session goes on), `up` when it takes them again,
   * with the events that could not be published (edges serve them as `gap` / `lagged`).
   */
  cluster_publish: {
    redis: string;
    state: "down" | "up";
    error: string | null;
    lost_events: number;
  };
  /**
   * The lifeline closed (src/crew/calls/lifeline.ts): whoever started this session (a formation's
   * launcher, a delegating session) ended, and the session winds down. A delegated child has no
   * formation (both null).
   */
  lifeline_closed: { formation_id: string | null; formation_member: string | null };
}

/**
 * Work a task handed off to other capsules (docs/crews.md; src/crew/). Every line names the
 * calling task; a call's lines name the member's task too (`member_task_id`), whose own trace has
 * `a2a_task_received.message_id` = `msg_<call_id>`, so the two traces join both ways.
 */
interface CrewLines {
  /** The member's queue was full: offered again later. */
  member_call_busy: {
    task_id: string;
    call_id: string;
    member: string;
    offer: number;
    waited_ms: number;
    message: string;
  };
  /** The member took the task. */
  member_call_start: { task_id: string; call_id: string; member: string; member_task_id: string };
  /** The call's answer: once per call. */
  member_call: {
    task_id: string;
    call_id: string;
    member: string;
    member_task_id?: string;
    status: string;
    duration_ms: number;
    output: string;
    truncated: boolean;
    busy_offers: number;
  };
  /** A child capsule runs the delegated task. */
  delegation_start: {
    task_id: string;
    delegation_id: string;
    capsule: string;
    child_session_id: string;
    child_pid: number;
    child_workdir: string;
    child_task_id: string;
  };
  /** The delegation's outcome: once per delegation. */
  delegation: {
    task_id: string;
    delegation_id: string;
    capsule: string;
    child_session_id: string | null;
    child_task_id?: string;
    duration_ms: number;
    outcome: string;
    output: string;
    truncated: boolean;
  };
  /** The task goes on with the answers that arrived (one round). */
  task_continued: {
    task_id: string;
    member_calls: string[];
    delegations: string[];
    waited_ms: number;
    turns_remaining: number;
  };
  /** `end-without-answer` was accepted. */
  no_answer: { task_id: string; reason: string };
}

/**
 * The `harness_*` lines of the process transport, as the harness runner yields them (a
 * `trace` part, src/drivers/harness.ts); the session adds `task_id` when it writes them.
 */
export interface HarnessTraceFields {
  harness_start: {
    driver: string;
    harness: string;
    binary: string;
    binary_source: string;
    pid: number;
    harness_version: string | null;
    version_tested: boolean;
    harness_session_id: string | null;
    session_mode: string;
    args_count: number;
    env_names: string[];
    files: string[];
    bridge_tools: string[];
    stdin_bytes: number;
    keep_stdin_open: boolean;
  };
  harness_session: { harness_session_id: string; auth: string; model: string | null };
  harness_warning: { code: string; message: string };
  harness_retry: { attempt: number; reason: string };
  harness_note: { text: string };
  /** An MCP server the harness was handed and could not connect (docs/mcp.md). */
  harness_source_error: { kind: "mcp"; source: string; message: string };
  harness_interrupt: { method: string; delivered: boolean; grace_ms: number };
  harness_exit: {
    code: number | null;
    signal: string | null;
    cause: string;
    killed: boolean;
    duration_ms: number;
  };
  harness_failed: { kind: string; message: string; source: "harness" | "runtime" };
}

type HarnessLines = {
  [K in keyof HarnessTraceFields]: { task_id: string } & HarnessTraceFields[K];
};

/** A harness line with its session fields (`harness_session_forgotten` is the session's own). */
interface HarnessSessionLines {
  harness_session_forgotten: {
    task_id: string;
    context_id: string;
    harness_session_id: string | null;
  };
}

/** Push notifications (src/push/, docs/push.md). */
interface PushLines {
  /** A push config made (or replaced: same caller, task and id) or deleted; `url` is its origin. */
  push_config: {
    task_id: string;
    config_id: string;
    action: "created" | "replaced" | "deleted";
    url: string;
    activated: boolean;
  };
  /** A config's queue was full: its oldest waiting events were dropped, never sent. */
  push_dropped: {
    task_id: string;
    config_id: string;
    dropped: number;
    first_event_id: number;
    last_event_id: number;
    queue_depth: number;
  };
  /** One event was not delivered: its attempts ran out, or the answer said not to retry. */
  push_gave_up: {
    task_id: string;
    config_id: string;
    event_id: number;
    attempts: number;
    error: string;
  };
  /**
   * A config's deliveries are over (the session ended, the config was deleted or replaced): what it
   * delivered, gave up, dropped, and the ids of the events it never sent.
   */
  push_end: {
    task_id: string;
    config_id: string;
    url: string;
    how: "drained" | "deleted" | "replaced" | "session_ended";
    delivered: number;
    gave_up: number;
    dropped: number;
    undelivered: number;
    undelivered_event_ids: number[];
  };
}

/**
 * One artifact the staging phase staged (`session_start.runtime_artifacts`): an operator's from
 * `artifacts:` (a prompt-bound skill too), or a tool or skill that appeared under
 * `workdir/tools/` during staging (origin `runtime`; its version `runtime`).
 */
export interface RuntimeArtifactField {
  name: string;
  version: string;
  runtime: "tool" | "hook" | "skill";
  origin: "operator" | "runtime";
}

/** Every trace line's fields, by `event_type`. */
export interface TraceFieldsOf
  extends
    TaskLines,
    TurnLines,
    ToolLines,
    SessionLines,
    HarnessLines,
    HarnessSessionLines,
    PushLines,
    CrewLines {}

export type TraceEventType = keyof TraceFieldsOf;

/** One trace line without its envelope: `event_type` and that type's fields. */
export type TraceEvent = {
  [K in TraceEventType]: { event_type: K } & TraceFieldsOf[K];
}[TraceEventType];

/** A `harness_*` trace part: which line and its fields, before the session adds `task_id`. */
export type HarnessTrace = {
  [K in keyof HarnessTraceFields]: { eventType: K; fields: HarnessTraceFields[K] };
}[keyof HarnessTraceFields];
