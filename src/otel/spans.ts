/**
 * A session's OpenTelemetry spans, built from its trace lines as they are written (README
 * "OpenTelemetry" lists the spans and attributes). The trace is the record and the spans a view
 * of it: each span is opened and closed with the timestamps of the lines it comes from, so the
 * spans say what the trace says, and nothing in the session loop knows about OpenTelemetry.
 *
 * The tree is the trace's own (`parent_id`): a span's parent is the span of the nearest line
 * above it that has one (a tool call's is the inference turn that asked for it, a shell's is its
 * tool call), else its task's, else the session's.
 *
 * Timing, from what the lines hold: a task runs from `task_start` to `task_end`; a tool call and
 * a shell command end at their line and started `duration_ms` before; an inference turn has no
 * duration on its line, so it starts at the task's previous line (the task's start, the previous
 * turn's last tool call, a reopen) and ends at its own. Compaction is a moment (a zero-length
 * span); what a hook's answer did (a reopen, a denial, a seed) is an event on the span above its
 * line. Hook calls themselves are not trace lines: they come from the hook runner (`hookCall`).
 */
import {
  type Attributes,
  type Context,
  context as otelContext,
  type Span,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";
import {
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_PROCESS_EXECUTABLE_NAME,
  ATTR_PROCESS_EXIT_CODE,
} from "@opentelemetry/semantic-conventions/incubating";
import type { HookCallRecord } from "../hooks/call.ts";
import type { A2aCallRecord } from "../a2a/call_record.ts";
import { a2aSpan } from "./a2a_spans.ts";
import {
  basename,
  compactionAttributes,
  detachedShellAttributes,
  doneCheckAttributes,
  harnessAttributes,
  inferenceAttributes,
  sessionAttributes,
  shellAttributes,
  taskAttributes,
  taskEndAttributes,
  toolCallAttributes,
  type TraceLine,
} from "./span_attributes.ts";

export type { TraceLine };

type EventType = TraceLine["event_type"];
/** The line of one event type (or of a few). */
type LineOf<T extends EventType> = Extract<TraceLine, { event_type: T }>;

/** The span names (docs/opentelemetry.md). */
export const SPAN = {
  session: "capsule.session",
  task: "capsule.task",
  inference: "capsule.inference",
  toolCall: "capsule.tool_call",
  shell: "capsule.shell",
  hook: "capsule.hook",
  compaction: "capsule.compaction",
  doneCheck: "capsule.done_check",
  harness: "capsule.harness",
} as const;

/** Text a task was given and gave back, for spans that carry content (`otel_content`). */
export interface TaskContent {
  input(taskId: string): string | undefined;
  output(taskId: string): string | undefined;
}

interface OpenTask {
  span: Span;
  ctx: Context;
  /** The timestamp of the task's latest line: where its next inference turn starts. */
  lastTs: number;
  /** Lines of this task that children may name as their parent (forgotten at task_end). */
  ids: string[];
  failed: boolean;
}

const FAILED_EXITS = new Set(["failed", "error", "reopen_budget_exhausted"]);

export class TraceSpans {
  #session: { span: Span; ctx: Context } | null = null;
  readonly #tasks = new Map<string, OpenTask>();
  /** The context a line's children open under, by event_id (span lines only). */
  readonly #ctxOf = new Map<string, Context>();
  readonly #harness = new Map<string, Span>();
  #count = 0;

  constructor(
    private readonly tracer: Tracer,
    private readonly opts: { content: boolean; taskContent?: TaskContent; capsule: string },
  ) {}

  /** Spans started so far (each is handed to the exporter when it ends). */
  get started(): number {
    return this.#count;
  }

  /** The session span's context (the W3C traceparent a harness joins), once it exists. */
  taskContext(taskId: string): Context | undefined {
    return this.#tasks.get(taskId)?.ctx ?? this.#session?.ctx;
  }

  #start(name: string, startTime: number, parent: Context, attributes: Attributes): Span {
    this.#count++;
    return this.tracer.startSpan(name, { startTime, attributes }, parent);
  }

  #parentOf(line: TraceLine, taskId?: string): Context {
    const byLine = line.parent_id ? this.#ctxOf.get(line.parent_id) : undefined;
    if (byLine) return byLine;
    const task = taskId ? this.#tasks.get(taskId) : undefined;
    return task?.ctx ?? this.#session?.ctx ?? otelContext.active();
  }

  /** Remembers a span line as a parent for the lines below it. */
  #keep(line: TraceLine, span: Span, taskId?: string): void {
    const ctx = trace.setSpan(otelContext.active(), span);
    this.#ctxOf.set(line.event_id, ctx);
    if (taskId) this.#tasks.get(taskId)?.ids.push(line.event_id);
  }

  /** A zero-length span at the line: something that happened at a moment. */
  #moment(line: TraceLine, name: string, taskId: string | undefined, attrs: Attributes): Span {
    const span = this.#start(name, line.timestamp, this.#parentOf(line, taskId), attrs);
    return span;
  }

  /** A trace line that is a moment in a span's life: an event on the span above it. */
  #eventOn(line: TraceLine, taskId: string | undefined, attrs: Attributes): void {
    trace.getSpan(this.#parentOf(line, taskId))?.addEvent(line.event_type, attrs, line.timestamp);
  }

  /**
   * One A2A request (src/a2a/call_record.ts): an `a2a.client` / `a2a.server` span under the task
   * it belongs to while that task runs (the calling task of a crew call), else the session.
   */
  a2a(r: A2aCallRecord, taskId: string | undefined): void {
    const parent = (taskId ? this.#tasks.get(taskId)?.ctx : undefined) ?? this.#session?.ctx;
    if (!parent) return;
    this.#count++;
    a2aSpan(this.tracer, r, parent);
  }

  /**
   * One finished hook call (src/hooks/call.ts): a `capsule.hook` span under the task the event
   * named, else the session, ending when the call did.
   */
  hookCall(c: HookCallRecord): void {
    const task = c.taskId ? this.#tasks.get(c.taskId) : undefined;
    const parent = task?.ctx ?? this.#session?.ctx;
    if (!parent) return;
    const span = this.#start(SPAN.hook, c.endedAt - c.durationMs, parent, {
      "mur.hook.name": c.hook,
      "mur.hook.binding": c.binding,
      "mur.hook.mode": c.mode,
      "mur.hook.duration_ms": c.durationMs,
      ...(c.answer !== undefined && { "mur.hook.answer": c.answer }),
    });
    if (c.failure !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, "hook_failed");
      span.setStatus({ code: SpanStatusCode.ERROR, message: c.failure });
    }
    span.end(c.endedAt);
  }

  /** Builds or closes what this trace line means. Never throws into the writer. */
  line(line: TraceLine): void {
    const taskId = "task_id" in line ? line.task_id : undefined;
    this.#on(line);
    const task = taskId ? this.#tasks.get(taskId) : undefined;
    if (task) task.lastTs = line.timestamp;
  }

  /**
   * What each trace line means for the spans, keyed by its event type (a line of a type not here
   * means nothing to them). Each handler builds, annotates or closes spans; none throws into the
   * writer.
   */
  readonly #handlers: { [T in EventType]?: (line: LineOf<T>) => void } = {
    session_start: (line: LineOf<"session_start">) => {
      const span = this.#start(
        SPAN.session,
        line.timestamp,
        otelContext.active(),
        sessionAttributes(line),
      );
      this.#session = { span, ctx: trace.setSpan(otelContext.active(), span) };
      this.#ctxOf.set(line.event_id, this.#session.ctx);
    },
    task_start: (line: LineOf<"task_start">) => {
      const content = this.opts.content;
      const span = this.#start(
        SPAN.task,
        line.timestamp,
        this.#parentOf(line),
        taskAttributes(line, this.opts.capsule),
      );
      const input = content ? this.opts.taskContent?.input(line.task_id) : undefined;
      if (input !== undefined) {
        span.setAttribute(
          "gen_ai.input.messages",
          JSON.stringify([{ role: "user", parts: [{ type: "text", content: input }] }]),
        );
      }
      const ctx = trace.setSpan(otelContext.active(), span);
      this.#tasks.set(line.task_id, {
        span,
        ctx,
        lastTs: line.timestamp,
        ids: [line.event_id],
        failed: false,
      });
      this.#ctxOf.set(line.event_id, ctx);
    },
    inference: (line: LineOf<"inference">) => {
      const start = this.#tasks.get(line.task_id)?.lastTs ?? line.timestamp;
      const span = this.#start(
        SPAN.inference,
        start,
        this.#parentOf(line, line.task_id),
        inferenceAttributes(line),
      );
      if (line.error_code || line.error) {
        span.setAttribute(ATTR_ERROR_TYPE, line.error_code ?? "error");
        span.setStatus({ code: SpanStatusCode.ERROR, message: line.error ?? line.error_code });
      }
      this.#keep(line, span, line.task_id);
      span.end(line.timestamp);
    },
    tool_call: (line: LineOf<"tool_call">) => {
      const content = this.opts.content;
      const span = this.#start(
        SPAN.toolCall,
        line.timestamp - line.duration_ms,
        this.#parentOf(line, line.task_id),
        toolCallAttributes(line, content),
      );
      if (line.status === "error") {
        span.setAttribute(ATTR_ERROR_TYPE, "tool_error");
        span.setStatus({ code: SpanStatusCode.ERROR, message: `${line.tool_name} failed` });
      }
      this.#keep(line, span, line.task_id);
      span.end(line.timestamp);
    },
    shell: (line: LineOf<"shell">) => {
      const content = this.opts.content;
      const span = this.#start(
        SPAN.shell,
        line.timestamp - line.duration_ms,
        this.#parentOf(line, line.task_id),
        shellAttributes(line, content),
      );
      if (line.exit_code !== 0) {
        span.setAttribute(ATTR_ERROR_TYPE, line.exit_code === null ? "killed" : "exit_code");
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: line.exit_code === null ? "killed" : `exit code ${line.exit_code}`,
        });
      }
      span.end(line.timestamp);
    },
    shell_completed: (line: LineOf<"shell_completed">) => {
      const content = this.opts.content;
      // A detached command, reported after the task that started it.
      const span = this.#start(
        SPAN.shell,
        line.timestamp - line.duration_ms,
        this.#parentOf(line),
        detachedShellAttributes(line, content),
      );
      if (line.status === "error") span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(line.timestamp);
    },
    shell_detached: (line: LineOf<"shell_detached">) => {
      this.#tasks.get(line.task_id)?.span.addEvent("shell_detached", {
        "mur.shell.work_id": line.work_id,
        [ATTR_PROCESS_EXECUTABLE_NAME]: basename(line.binary),
      }, line.timestamp);
    },
    task_reopened: (line: LineOf<"task_reopened">) => {
      const content = this.opts.content;
      this.#eventOn(line, line.task_id, {
        "mur.hook.name": line.hook_name,
        "mur.task.reopen_number": line.reopen_number,
        ...(content && { "mur.hook.reason": line.reason }),
      });
    },
    tool_progress: (line: LineOf<"tool_progress">) => {
      this.#eventOn(line, line.task_id, {
        "mur.mcp.server": line.server,
        [ATTR_GEN_AI_TOOL_NAME]: line.tool_name,
        "mur.tool.progress": line.progress,
        ...(line.total !== undefined && { "mur.tool.progress_total": line.total }),
      });
    },
    source_error: (line: LineOf<"source_error">) => {
      this.#eventOn(line, undefined, {
        "mur.source.kind": line.kind,
        "mur.source.name": line.source,
        "mur.source.phase": line.phase,
        "mur.source.message": line.message,
      });
    },
    call_denied: (line: LineOf<"call_denied">) => {
      const content = this.opts.content;
      this.#eventOn(line, undefined, {
        "mur.hook.name": line.hook_name,
        "mur.hook.binding": line.event,
        "mur.turn": line.turn,
        ...(content && { "mur.hook.reason": line.reason, "mur.hook.target": line.target }),
      });
    },
    context_seed: (line: LineOf<"context_seed">) => {
      this.#eventOn(line, line.task_id, {
        "mur.hook.name": line.hook_name,
        "mur.seed.outcome": line.outcome,
        "mur.seed.tokens": line.tokens,
      });
    },
    hook_dispatch_error: (line: LineOf<"hook_dispatch_error">) => {
      this.#eventOn(line, undefined, {
        "mur.hook.name": line.hook_name,
        "mur.hook.binding": line.event,
        "mur.hook.arm": line.arm,
      });
    },
    compaction: (line) => this.#compaction(line),
    compaction_declined: (line) => this.#compaction(line),
    done_check: (line: LineOf<"done_check">) => {
      const content = this.opts.content;
      const span = this.#start(
        SPAN.doneCheck,
        line.timestamp - line.duration_ms,
        this.#parentOf(line, line.task_id),
        doneCheckAttributes(line, content),
      );
      span.end(line.timestamp);
    },
    harness_start: (line: LineOf<"harness_start">) => {
      const span = this.#start(
        SPAN.harness,
        line.timestamp,
        this.#parentOf(line, line.task_id),
        harnessAttributes(line),
      );
      this.#harness.get(line.task_id)?.end(line.timestamp);
      this.#harness.set(line.task_id, span);
    },
    harness_exit: (line: LineOf<"harness_exit">) => {
      const span = this.#harness.get(line.task_id);
      if (!span) return;
      this.#harness.delete(line.task_id);
      if (line.code !== null) span.setAttribute(ATTR_PROCESS_EXIT_CODE, line.code);
      span.setAttribute("mur.harness.cause", line.cause);
      span.end(line.timestamp);
    },
    task_failed: (line: LineOf<"task_failed">) => {
      const task = this.#tasks.get(line.task_id);
      if (!task) return;
      task.failed = true;
      task.span.setAttribute(ATTR_ERROR_TYPE, line.error_code ?? line.cause);
      task.span.setStatus({ code: SpanStatusCode.ERROR, message: line.reason });
    },
    task_canceled: (line) => this.#taskEvent(line),
    keep_working: (line) => this.#taskEvent(line),
    task_end: (line: LineOf<"task_end">) => {
      const content = this.opts.content;
      const task = this.#tasks.get(line.task_id);
      if (!task) return;
      task.span.setAttributes(taskEndAttributes(line));
      const output = content ? this.opts.taskContent?.output(line.task_id) : undefined;
      if (output !== undefined) {
        task.span.setAttribute(
          "gen_ai.output.messages",
          JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: output }] }]),
        );
      }
      if (!task.failed && FAILED_EXITS.has(line.exit_status)) {
        task.span.setAttribute(ATTR_ERROR_TYPE, line.exit_status);
        task.span.setStatus({ code: SpanStatusCode.ERROR, message: line.exit_status });
      }
      this.#harness.get(line.task_id)?.end(line.timestamp);
      this.#harness.delete(line.task_id);
      task.span.end(line.timestamp);
      for (const id of task.ids) this.#ctxOf.delete(id);
      this.#tasks.delete(line.task_id);
    },
    session_end: (line: LineOf<"session_end">) => {
      this.endAll(line.timestamp, line.exit_status);
    },
  };

  #compaction(line: LineOf<"compaction" | "compaction_declined">): void {
    this.#moment(line, SPAN.compaction, line.task_id, compactionAttributes(line)).end(
      line.timestamp,
    );
  }

  /** A moment in a task's life: an event on its span. */
  #taskEvent(line: LineOf<"task_canceled" | "keep_working">): void {
    this.#tasks.get(line.task_id)?.span.addEvent(line.event_type, {}, line.timestamp);
  }

  #on(line: TraceLine): void {
    // The compiler cannot pair a line with its own handler through the key: the table's type does.
    const handler = this.#handlers[line.event_type] as ((l: TraceLine) => void) | undefined;
    handler?.(line);
  }

  /**
   * Ends every span still open (tasks a teardown cut short, then the session), at `at`. The
   * session span ends here before the last flush, so it is exported with the rest.
   */
  endAll(at: number, exitStatus?: string): void {
    for (const span of this.#harness.values()) span.end(at);
    this.#harness.clear();
    for (const task of this.#tasks.values()) {
      task.span.setAttribute("mur.task.ended_by_session", true);
      task.span.end(at);
    }
    this.#tasks.clear();
    this.#ctxOf.clear();
    if (!this.#session) return;
    if (exitStatus !== undefined) {
      this.#session.span.setAttribute("mur.session.exit_status", exitStatus);
      if (exitStatus !== "ok" && exitStatus !== "canceled") {
        this.#session.span.setStatus({ code: SpanStatusCode.ERROR, message: exitStatus });
      }
    }
    this.#session.span.end(at);
    this.#session = null;
  }
}
