/**
 * One `mur run`: owns the registry, the event log, the trace, the task worker and the lifecycle
 * (docs/running.md). The door talks to it only through the public operations
 * here: submit, reply, cancel, stop, and the registry/log for reads and streams.
 */
import type { SourceError } from "../tools/source_errors.ts";
import { isTerminal } from "../a2a/types.ts";
import { EventLog } from "../events/log.ts";
import type { Manifest } from "../manifest/types.ts";
import { type Histories, TaskLoop } from "./loop.ts";
import { Registry, type UserMessage } from "./registry.ts";
import { journalPath, TaskJournal } from "./task_journal.ts";
import type { ResidueItem, TaskRecord } from "./task_record.ts";
import { TraceWriter } from "../trace_writer.ts";
import type { TraceFieldsOf } from "../trace_events.ts";
import { bootstrapLog, type Workdir, writeResult } from "./workdir.ts";
import { DetachedDelivery } from "./detached_delivery.ts";
import { SpendMeter } from "./spend.ts";
import { MurError, warningLine } from "../errors.ts";
import { IdSource } from "../ids.ts";
import { hasRoom } from "./admission.ts";
import { cancelTask } from "./cancel.ts";
import {
  BUSY,
  CLOSING,
  type SessionOptions,
  type SubmitRequest,
  type SubmitResult,
} from "./session_api.ts";
import { Faults } from "./faults.ts";
import { endEveryTask, rejectQueued, SessionTotals } from "./session_end.ts";
import { decides, type SessionStatus, sessionStatusOf, Verdict } from "./session_status.ts";
import { sessionStartEvent, sessionStartFields } from "./session_start.ts";
import { Wakeup } from "./wakeup.ts";
import { next, takesTasks } from "./lifecycle.ts";

export type { SessionStatus };

export type { SessionOptions, SubmitRequest, SubmitResult };
export { BUSY, CLOSING };

export class Session {
  readonly id: string;
  readonly manifest: Manifest;
  readonly log = new EventLog();
  readonly registry: Registry;
  readonly trace: TraceWriter;
  readonly workdir: Workdir;
  readonly #opts: SessionOptions;
  readonly #loop: TaskLoop;
  /** `inference.max_session_tokens`: what the session's driver calls have used. */
  readonly spend: SpendMeter;
  readonly #detached: DetachedDelivery;
  readonly #histories: Histories = new Map();
  readonly #clock: () => number;
  #sessionEvt = "";
  #started = 0;
  #closing = false;
  #stopped = false;
  #acceptedAny = false;
  #running: TaskRecord | null = null;
  readonly #verdict = new Verdict();
  readonly #wakeup = new Wakeup();
  #ended: Promise<SessionStatus> | null = null;
  #endWritten = false;
  readonly #faults: Faults;
  readonly #totals = new SessionTotals();

  constructor(opts: SessionOptions) {
    this.#opts = opts;
    this.id = opts.id;
    this.manifest = opts.manifest;
    this.workdir = opts.workdir;
    this.#clock = opts.clock ?? Date.now;
    this.#faults = new Faults(opts.workdir, opts.warn);
    // One id source on the session's clock: task, message and trace ids ascend together.
    const ids = new IdSource(this.#clock);
    this.registry = new Registry(this.log, this.#clock, ids, opts.manifest.lifecycle.historyLimit);
    // Each task's record, kept for a later `--resume`; the resumed session's tasks first.
    this.registry.journal = new TaskJournal(journalPath(opts.workdir.session));
    if (opts.resume?.tasks) this.registry.adoptPast(opts.resume.tasks);
    this.trace = new TraceWriter(
      opts.workdir.trace,
      opts.id,
      (e) => this.#traceFailed(e),
      this.#clock,
      ids,
    );
    const otel = opts.otel;
    if (otel) {
      this.trace.observe(
        (line) => otel.line(line),
        (e) => bootstrapLog(opts.workdir, `the OpenTelemetry export stopped: ${e}`),
      );
    }
    this.spend = new SpendMeter(opts.manifest.inference.maxSessionTokens);
    this.#detached = new DetachedDelivery({
      trace: this.trace,
      sessionEventId: () => this.#sessionEvt,
      workdirRoot: opts.workdir.root,
      open: () => !this.#closing,
      enqueue: (text, contextId) =>
        this.enqueueInternal({
          text,
          contextId,
          origin: "completion",
          trusted: true,
          source: "detached_shell",
        }),
      warn: opts.warn,
      bootstrap: (line) => bootstrapLog(opts.workdir, line),
      clock: this.#clock,
    });
    this.#loop = new TaskLoop({
      manifest: opts.manifest,
      registry: this.registry,
      trace: this.trace,
      sessionEventId: () => this.#sessionEvt,
      driver: opts.driver,
      tools: opts.tools,
      sessionTools: opts.sessionTools,
      hooks: opts.hooks,
      workdir: opts.workdir,
      histories: this.#histories,
      warn: opts.warn,
      clock: this.#clock,
      ids,
      spend: this.spend,
      onDetached: (task, shell) => this.#detached.started(task, shell),
      resumedContext: opts.resume?.contextId,
      containment: opts.containment?.policy,
    });
    if (opts.resume) this.#histories.set(opts.resume.contextId, opts.resume.history);
  }

  /** Model-visible tool names, as the card and MURMUR.md list them. */
  toolNames(): string[] {
    return this.#opts.tools.specs().map((t) => t.name);
  }

  /** Tool sources that are down now (docs/mcp.md): the live page names them. */
  sourceErrors(): SourceError[] {
    const tools = this.#opts.tools;
    return tools.sourceErrors?.(tools.sourceErrorMark?.() ?? []) ?? [];
  }

  get conversationMode(): "stateless" | "threaded" {
    return this.manifest.lifecycle.conversation;
  }

  get closing(): boolean {
    return this.#closing;
  }

  get status(): SessionStatus {
    return this.#verdict.status;
  }

  /** The deciding task that set the status, once it is not ok (E-RUN-040 names it). */
  get decidedBy(): TaskRecord | null {
    return this.#verdict.decidedBy;
  }

  /**
   * The ms the session waited for a first task that never came (no `--task`, no task.md, nothing
   * sent to the door in time), or null: `mur run` says so on stderr (W-RUN-004).
   */
  get waitedForNoTask(): number | null {
    return this.#waitedForNoTask;
  }
  #waitedForNoTask: number | null = null;

  /** Writes session_start and runs on-session-start hooks. */
  async begin(fields: Partial<TraceFieldsOf["session_start"]> = {}): Promise<void> {
    this.#started = this.#clock();
    const start = await sessionStartFields(this.#opts);
    this.#sessionEvt = this.trace.write("session_start", null, {
      ...start,
      ...fields,
    });
    await this.#opts.hooks.sessionStart(sessionStartEvent(this.#opts));
  }

  get sessionEventId(): string {
    return this.#sessionEvt;
  }

  /** The launch task (`--task` or `task.md`): registered before the door is announced. */
  launch(text: string): TaskRecord {
    this.#acceptedAny = true;
    return this.registry.create({
      text,
      contextId: this.#opts.contextId,
      origin: "user",
      source: "task_md",
      trusted: true,
    });
  }

  /** A task the session generated for itself (completion, resume report): no capacity check. */
  enqueueInternal(req: SubmitRequest): TaskRecord {
    const task = this.registry.create({ ...req, source: req.source ?? "detached_shell" });
    this.#kick();
    return task;
  }

  /** Does the door take new tasks at all (lifecycle.ts `takesTasks`)? */
  get acceptsTasks(): boolean {
    return takesTasks(this.manifest.lifecycle);
  }

  /** A new task from the door: accepted, or rejected as busy / closing (not kept). */
  submit(req: SubmitRequest): SubmitResult {
    const init = { ...req, source: req.source ?? "a2a" as const };
    if (this.#closing) {
      return { kind: "rejected", task: this.registry.rejectedAtDoor(init, CLOSING) };
    }
    if (!this.#hasRoom()) {
      return { kind: "rejected", task: this.registry.rejectedAtDoor(init, BUSY) };
    }
    this.#acceptedAny = true;
    const task = this.registry.create(init);
    this.trace.write("a2a_task_received", this.#sessionEvt, {
      task_id: task.id,
      context_id: task.contextId,
      message_id: req.messageId ?? null,
      traceparent_from_caller: null,
    });
    this.#kick();
    return { kind: "accepted", task };
  }

  #hasRoom(): boolean {
    return hasRoom(this.manifest.lifecycle, this.registry, {
      acceptedAny: this.#acceptedAny,
      running: this.#running,
      stopped: this.#stopped,
      closing: this.#closing,
    });
  }

  /** The answer to a task waiting in TASK_STATE_INPUT_REQUIRED. False when no wait is open. */
  reply(task: TaskRecord, text: string, message?: UserMessage): boolean {
    const waiter = task.inputWaiter;
    if (!waiter || task.state !== "TASK_STATE_INPUT_REQUIRED") return false;
    task.inputWaiter = undefined;
    if (message) this.registry.userMessage(task, message);
    // The reply is answered at once: GetTask and the reply's own stream open in WORKING.
    this.registry.status(task, "TASK_STATE_WORKING", "resumed");
    waiter(text);
    return true;
  }

  /**
   * CancelTask: recorded CANCELED at once, without waiting for the loop. A queued task never
   * starts; a running one has its attempt aborted. Returns false for an ended task.
   */
  cancel(task: TaskRecord): boolean {
    const canceled = cancelTask(task, {
      registry: this.registry,
      trace: this.trace,
      sessionEvt: this.#sessionEvt,
      running: this.#running,
      residue: () => this.residue(),
      holdCancelStatus: this.#opts.holdCancelStatus === true,
    });
    // A queued task that will never start frees the worker's next pick.
    if (canceled === "queued") this.#kick();
    return canceled !== null;
  }

  residue(): ResidueItem[] {
    return this.#opts.residue?.() ?? [];
  }

  /**
   * murmur.StopSession: every held task through the cancel path, and nothing starts afterwards.
   * A task accepted later waits until the session ends and is then rejected as stopped; a
   * capsule that does not sleep ends once its running task has ended.
   */
  stop(): { sessionId: string; canceled: string[]; residue: ResidueItem[] } {
    this.#stopped = true;
    const canceled: string[] = [];
    for (const t of this.registry.all()) {
      if (this.cancel(t)) canceled.push(t.id);
    }
    canceled.sort();
    this.#kick();
    return { sessionId: this.id, canceled, residue: this.residue() };
  }

  /** Runs tasks until the lifecycle says the session is over; resolves with the status. */
  run(): Promise<SessionStatus> {
    this.#ended ??= this.#work();
    return this.#ended;
  }

  /** SIGTERM / SIGINT: cancel what runs, start nothing new, end cleanly. */
  shutdown(): void {
    if (this.#closing) return;
    this.#closing = true;
    const running = this.#running;
    if (running) {
      // The canceled task decides only if it is a deciding task (the launch task, or an A2A task
      // of a capsule that does not sleep): a sleeping capsule's A2A tasks never decide.
      this.#decide("canceled", this.#decides(running), running);
      this.cancel(running);
    }
    this.#kick();
  }

  #kick(): void {
    this.#wakeup.kick();
  }

  async #work(): Promise<SessionStatus> {
    const lifecycle = this.manifest.lifecycle;
    let ranAny = false;
    let waitedInVain = false;
    for (;;) {
      const queued = this.#stopped ? undefined : this.registry.nextQueued();
      const step = next({
        lifecycle,
        closing: this.#closing,
        stopped: this.#stopped,
        ranAny,
        hasNext: queued !== undefined,
        waitedInVain,
      });
      waitedInVain = false;
      if (step === "end") break;
      if (step === "run" && queued) {
        ranAny = true;
        await this.#runTask(queued);
      } else if (step === "sleep") {
        await this.#wakeup.idle(null);
      } else if (step === "wait") {
        const before = this.registry.all().length;
        await this.#wakeup.idle(this.#opts.idleTimeoutMs);
        waitedInVain = this.registry.all().length === before && !this.registry.nextQueued();
        // A wait cut short by a stop (mur stop, a signal, a closed lifeline) did not wait in vain.
        if (waitedInVain && !ranAny && before === 0 && !this.#stopped && !this.#closing) {
          this.#waitedForNoTask = this.#opts.idleTimeoutMs;
        }
      }
    }
    this.#closing = true;
    // Generated tasks (resume reports) are delivered whatever task_acceptance says.
    for (;;) {
      const next = this.registry.queued().find((t) => t.source === "detached_lost");
      if (!next || this.#stopped) break;
      await this.#runTask(next);
    }
    return await this.#end();
  }

  async #runTask(task: TaskRecord): Promise<void> {
    this.#running = task;
    try {
      const out = await this.#loop.run(task);
      if (task.state === "TASK_STATE_FAILED" && out.exitStatus === "canceled") {
        // A runtime error the session recorded (#failAndEnd) ended the task; the loop saw only
        // its attempt stopped and wrote the result as a cancel.
        const text = task.status.message?.parts[0];
        const threaded = this.manifest.lifecycle.conversation === "threaded";
        writeResult(
          this.workdir,
          `error: ${text && "text" in text ? text.text : "task failed"}`,
          threaded ? task.id : undefined,
        );
      }
      this.#totals.add(out);
      this.#decide(sessionStatusOf(out.exitStatus), this.#decides(task), task);
    } catch (e) {
      // A runtime error must still end the task in one final status.
      const message = e instanceof MurError ? `error[${e.code}]: ${e.message}` : String(e);
      this.#opts.warn(`error[E-RUN-007]: the agent loop failed: ${message}`);
      this.registry.finish(task, "TASK_STATE_FAILED", message);
      this.#decide("failed", true, task);
    } finally {
      this.#running = null;
    }
  }

  /** Does this task's ending decide the status (session_status.ts)? */
  #decides(task: TaskRecord): boolean {
    return decides(task, this.manifest.lifecycle, {
      closing: this.#closing,
      stopped: this.#stopped,
      queueEmpty: () => this.registry.nextQueued() === undefined,
    });
  }

  #decide(status: SessionStatus, deciding: boolean, task: TaskRecord | null = null): void {
    this.#verdict.decide(status, deciding, task);
  }

  #traceFailed(e: MurError): void {
    this.#opts.warn(e.format());
    this.#failAndEnd(e);
  }

  /**
   * A runtime error ends the session: the running task ends in it (docs/protocol.md "One final
   * status": TASK_STATE_FAILED with `error[<code>]: <message>`), not as canceled: nobody canceled
   * it. shutdown() then starts nothing new and ends the session.
   */
  #failAndEnd(e: MurError): void {
    this.#decide("failed", true);
    const running = this.#running;
    if (running && !isTerminal(running.state)) {
      const reason = `error[${e.code}]: ${e.message}`;
      this.registry.finish(running, "TASK_STATE_FAILED", reason);
      this.trace.write("task_failed", this.#sessionEvt, {
        task_id: running.id,
        cause: "runtime_error",
        reason: reason.slice(0, 2000),
      });
      running.abort.abort();
    }
    this.shutdown();
  }

  /** Set by the first `fault()`: `mur run` ends failed whenever it came. */
  get faulted(): boolean {
    return this.#faults.count > 0;
  }

  /**
   * An error nobody caught, anywhere in `mur run` (an uncaught exception or an unhandled
   * rejection: run.ts reports them here). It is a bug in mur, so the session does not go on: the
   * running task ends FAILED with `error[E-RUN-050]: …`, and the session ends the way every other
   * way out does (queued tasks rejected, hooks, `session_end`, status `failed`). The stack goes to
   * logs/bootstrap.log; stderr gets the coded line (the first few faults, then a count).
   */
  fault(e: unknown): void {
    const err = this.#faults.report(e);
    if (!err) return;
    // A fault decides the status whatever the tasks did: the session did not end as it should.
    this.#verdict.status = "failed";
    this.#failAndEnd(err);
  }

  /**
   * The end when the session could not end by itself after a fault (the task loop never came
   * back): every task not ended is failed or rejected, `session_end` is written and the trace
   * closed, here and now, without hooks. Does nothing once `session_end` is written.
   */
  endNow(): SessionStatus {
    if (this.#endWritten) return this.status;
    this.#verdict.status = "failed";
    endEveryTask(this.registry, this.#running);
    this.#writeEnd();
    return this.status;
  }

  async #end(): Promise<SessionStatus> {
    rejectQueued(this.registry, this.trace, this.#sessionEvt, this.#stopped);
    const durationMs = this.#clock() - this.#started;
    await this.#opts.hooks.sessionEnd(this.#totals.record(durationMs, this.status));
    await this.#opts.hooks.drain();
    await this.#opts.push?.finish();
    if (this.#opts.otel) {
      // The last spans go out (bounded wait) and their count is in the trace before session_end.
      const report = await this.#opts.otel.finish(this.#clock(), this.status);
      if (!this.#endWritten) this.trace.write("otel_export", this.#sessionEvt, report);
      // As push does for what it could not deliver (W-PUSH-001): one line, not only the trace.
      if (report.dropped > 0) {
        this.#opts.warn(warningLine(
          "W-OTEL-002",
          `${report.dropped} of ${report.spans} OpenTelemetry spans were not exported to ${report.endpoint} (collector unreachable, refused or too slow); the trace's otel_export line counts them`,
        ));
      }
    }
    this.#writeEnd(durationMs);
    return this.status;
  }

  /**
   * A second SIGTERM / SIGINT (src/cli/run_endings.ts): no hooks, no waiting. The trace gets its one
   * session_end now, unless the teardown already wrote it; the caller kills what the session
   * started and exits.
   */
  abortNow(): SessionStatus {
    this.#writeEnd();
    return this.status;
  }

  #writeEnd(durationMs = this.#clock() - this.#started): void {
    if (this.#endWritten) return;
    this.#endWritten = true;
    this.#detached.abandonAll();
    this.trace.write("session_end", this.#sessionEvt, this.#totals.record(durationMs, this.status));
    this.trace.close();
  }
}
