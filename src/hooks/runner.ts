/**
 * Hooks as commands (docs/hooks.md): the `Hooks` the session loop calls, implemented by running
 * each bound hook's command per event, in manifest declaration order. Blocking hooks are awaited
 * and their arm committed when their binding and commit policy honour it; async hooks go through
 * a bounded queue per hook with one worker, drained before the session ends (async_queue.ts).
 * Every binding runs through one dispatch (`#each`); what differs is what its answers do.
 *
 * Failures (docs/hooks.md "When a hook fails"): a failing hook is logged to `logs/hook-<name>.log`
 * (and a stderr line) and the session goes on; a policy (`deny`) hook fails closed; a
 * `replace-context` hook that fails fails the task (the loop does that with the answer `failed`);
 * an arm the binding does not honour is discarded loudly (`hook_dispatch_error`).
 */
import type { ContainmentPolicy } from "../containment/policy.ts";
import { type ArtifactFrame, artifactFrame } from "../events/frames.ts";
import { type BoundHook, firesAt, type HookBinding, type HookConfig } from "../manifest/types.ts";
import type {
  ApprovalEvent,
  CompactionAnswer,
  CompactionEvent,
  HookEvent,
  HookMessage,
  Hooks,
  InferenceEvent,
  SessionEndEvent,
  SessionStartEvent,
  TaskEndDecision,
  TaskEndEvent,
  TaskStartEvent,
  ToolCallDecision,
  ToolCallEvent,
  ToolResultEvent,
} from "../session/hooks_api.ts";
import type { TraceWriter } from "../trace_writer.ts";
import { ASYNC_QUEUE_CAPACITY, AsyncQueues } from "./async_queue.ts";
import { callHook, type HookCallRecord } from "./call.ts";
import { honours, unhonouredReason } from "./honour.ts";
import { HookLog } from "./log.ts";
import type { HookArm } from "./output.ts";

export { ASYNC_QUEUE_CAPACITY };

export interface CommandHooksOptions {
  hooks: HookConfig[];
  /** The session workdir: each hook's cwd (and `MURMUR_WORKDIR`). */
  workdirRoot: string;
  /** Where `hook-<name>.log` goes: the session folder's logs (default `<workdirRoot>/logs`). */
  logsDir?: string;
  sessionId: string;
  /** The session's trace, once it exists (hook_dispatch_error). */
  trace: () => TraceWriter | null;
  /** `event_id` of session_start: the parent of hook_dispatch_error. */
  sessionEventId: () => string | null;
  /** A diagnostic line for stderr. */
  warn(line: string): void;
  /** Per-call deadline (30 s; `MURMUR_HOOK_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Total time the session-end drain may take (default: the per-call deadline). */
  drainBudgetMs?: number;
  queueCapacity?: number;
  /** Hears every finished call (the OpenTelemetry export's hook spans). */
  onCall?: (call: HookCallRecord) => void;
  /**
   * Publishes an `output: data` hook's answer as a data artifact of the task (the session's
   * registry, src/session/registry.ts `publish`); absent: such answers are logged and dropped.
   */
  publishData?: (taskId: string, hook: string, value: Record<string, unknown>) => void;
  /** What every hook process runs under (src/containment/); absent: advisory. */
  containment?: ContainmentPolicy;
}

/** What one binding does with its hooks' calls; true from either stops the dispatch. */
interface BindingRule {
  /** Which of the bound hooks take part (default: all). */
  only?: (h: BoundHook) => boolean;
  /** Whether an async hook is queued (default); policy hooks are always awaited. */
  queue?: boolean;
  failed(h: BoundHook, reason: string): boolean | void;
  answered(h: BoundHook, arm: HookArm): boolean | void;
}

export class CommandHooks implements Hooks {
  readonly #o: CommandHooksOptions;
  readonly #logs = new Map<string, HookLog>();
  readonly #queues: AsyncQueues;
  readonly hasCompaction: boolean;

  constructor(o: CommandHooksOptions) {
    this.#o = o;
    for (const h of o.hooks) {
      const logs = o.logsDir ?? `${o.workdirRoot}/logs`;
      this.#logs.set(h.name, new HookLog(`${logs}/hook-${h.name}.log`));
    }
    this.hasCompaction = o.hooks.some((h) =>
      firesAt(h, "on-compaction") && h.commitPolicy === "replace-context"
    );
    this.#queues = new AsyncQueues({
      run: async (h, ev) => {
        const out = await this.#call(h, ev);
        if (!out.ok) {
          this.#failed(h, out.reason, "the session goes on");
          this.#dispatchError(h, h.binding, out.kind === "timeout" ? "timeout" : "error");
        } else if (out.arm.arm !== "none") {
          // An async hook commits nothing: any arm but none is discarded loudly.
          this.#unhonoured(h, out.arm, "the answer is discarded (an async hook commits nothing)");
        }
      },
      overflow: (h) => {
        this.#log(h).line(`${h.binding}: queue full; event dropped (on_overflow: drop)`);
        this.#dispatchError(h, h.binding, "queue-overflow");
      },
      dropped: (h, dropped, budget) => {
        this.#dispatchError(h, "drain", "timeout");
        this.#log(h).line(
          `drain: the session is ending; ${dropped} queued event(s) dropped after ${budget} ms`,
        );
      },
    }, o.queueCapacity ?? ASYNC_QUEUE_CAPACITY);
  }

  async sessionStart(ev: SessionStartEvent): Promise<void> {
    await this.#observe("on-session-start", ev);
  }

  async taskStart(
    ev: TaskStartEvent,
  ): Promise<{ hook: string; messages: HookMessage[] } | undefined> {
    let seed: { hook: string; messages: HookMessage[] } | undefined;
    await this.#each("on-task-start", ev, {
      failed: (h, reason) => this.#failed(h, reason, "the task starts without its seed"),
      answered: (h, arm) => {
        if (arm.arm !== "seed-context" || !this.#honoured(h, arm)) return;
        if (seed) {
          this.#log(h).line(
            `on-task-start: seed ignored: hook ${seed.hook}, declared earlier, already seeded`,
          );
          return;
        }
        seed = { hook: h.name, messages: arm.messages };
      },
    });
    return seed;
  }

  async inference(ev: InferenceEvent): Promise<ArtifactFrame[]> {
    const frames: ArtifactFrame[] = [];
    await this.#each("on-inference", ev, {
      failed: (h, reason) => this.#failed(h, reason, "the turn goes on"),
      answered: (h, arm) => {
        if (arm.arm !== "artifact" || !this.#honoured(h, arm)) return;
        if (h.output === "data") {
          // docs/hooks.md "Data artifacts": the task's artifact, not a frame of the turn.
          if (this.#o.publishData && ev.task_id) {
            this.#o.publishData(ev.task_id, h.name, arm.json);
          } else this.#log(h).line("on-inference: a data artifact with no task to publish it to");
          return;
        }
        frames.push(artifactFrame({
          toolName: h.name,
          content: JSON.stringify(arm.json),
          fenceSource: null,
          toolCallId: null,
          isError: false,
          durationMs: null,
          exitCode: null,
          truncated: false,
          attachments: [],
        }));
      },
    });
    return frames;
  }

  /**
   * Policy hooks (`deny`) before the call: only a clean `none` lets it run (fail closed).
   * Observers are called after the call returns (toolResult).
   */
  async toolCall(ev: ToolCallEvent, shell: boolean): Promise<ToolCallDecision> {
    const binding = shell ? "on-shell" : "on-tool-call";
    let decision: ToolCallDecision = {};
    const deny = (h: BoundHook, reason: string) => {
      decision = { deny: { hook: h.name, reason } };
      return true;
    };
    await this.#each(binding, ev, {
      only: (h) => h.commitPolicy === "deny",
      queue: false,
      failed: (h, reason) => {
        this.#failed(h, reason, "the call is refused (a policy hook fails closed)");
        return deny(h, `the policy hook failed: ${reason}`);
      },
      answered: (h, arm) => {
        if (arm.arm === "none") return;
        if (arm.arm === "deny") {
          const reason = arm.reason.trim();
          if (reason !== "") return deny(h, reason);
          this.#log(h).line(`${binding}: deny with an empty reason; the call is refused`);
          return deny(h, "the policy hook gave no reason");
        }
        this.#unhonoured(h, arm, "the call is refused (a policy hook fails closed)");
        return deny(h, `the policy hook answered ${arm.arm}, which is neither none nor deny`);
      },
    });
    return decision;
  }

  async toolResult(ev: ToolResultEvent, shell: boolean): Promise<void> {
    await this.#each(shell ? "on-shell" : "on-tool-call", ev, {
      only: (h) => h.commitPolicy !== "deny",
      failed: (h, reason) => this.#failed(h, reason, "the task goes on"),
      answered: (h, arm) => void this.#honoured(h, arm),
    });
  }

  async compaction(ev: CompactionEvent): Promise<CompactionAnswer> {
    let answer: CompactionAnswer = { declined: "no_hook_replacement" };
    await this.#each("on-compaction", ev, {
      failed: (h, reason) => {
        if (h.commitPolicy === "replace-context" && !("replaced" in answer)) {
          this.#failed(h, reason, "the compaction fails");
          answer = { failed: reason, hook: h.name };
          return true;
        }
        this.#failed(h, reason, "the task goes on");
      },
      answered: (h, arm) => {
        if (arm.arm !== "replace-context" || !this.#honoured(h, arm)) return;
        if ("replaced" in answer) {
          this.#log(h).line(
            `on-compaction: replacement ignored: hook ${answer.hook} already answered`,
          );
          return;
        }
        answer = { replaced: arm.messages, hook: h.name };
      },
    });
    return answer;
  }

  async taskEnd(ev: TaskEndEvent): Promise<TaskEndDecision> {
    let decision: TaskEndDecision = {};
    await this.#each("on-task-end", ev, {
      failed: (h, reason) => this.#failed(h, reason, "the task is not reopened by it"),
      answered: (h, arm) => {
        if (arm.arm !== "reopen-task" || !this.#honoured(h, arm)) return;
        if (decision.reopen) {
          this.#log(h).line(
            `on-task-end: reopen ignored: hook ${decision.reopen.hook}, declared earlier, already reopened`,
          );
          return;
        }
        decision = { reopen: { hook: h.name, feedback: arm.feedback } };
      },
    });
    return decision;
  }

  async sessionEnd(ev: SessionEndEvent): Promise<void> {
    await this.#observe("on-session-end", ev);
  }

  async approval(ev: ApprovalEvent): Promise<void> {
    await this.#observe("on-approval", ev);
  }

  /** Waits until every async queue is empty, within the drain budget; drops what is left. */
  async drain(): Promise<void> {
    await this.#queues.drain(this.#o.drainBudgetMs ?? this.#o.timeoutMs);
  }

  // ---- internals

  /**
   * The one dispatch every binding shares: the hooks bound to `binding` (those `rule.only`
   * keeps), in declaration order; an async one is queued, a blocking one called, and its failure
   * or answer handed to the rule, which may stop the dispatch.
   */
  async #each(binding: HookBinding, ev: HookEvent, rule: BindingRule): Promise<void> {
    for (const declared of this.#o.hooks) {
      if (!firesAt(declared, binding)) continue;
      const h: BoundHook = { ...declared, binding };
      if (rule.only && !rule.only(h)) continue;
      if (rule.queue !== false && h.executionMode === "async") {
        this.#queues.enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      const stop = out.ok ? rule.answered(h, out.arm) : rule.failed(h, out.reason);
      if (stop === true) return;
    }
  }

  /** Fires hooks whose arms can only be `none` (session start/end). */
  async #observe(binding: HookBinding, ev: HookEvent): Promise<void> {
    await this.#each(binding, ev, {
      failed: (h, reason) => this.#failed(h, reason, "the session goes on"),
      answered: (h, arm) => void this.#honoured(h, arm),
    });
  }

  #log(h: HookConfig | BoundHook): HookLog {
    return this.#logs.get(h.name)!;
  }

  #call(h: BoundHook, ev: HookEvent) {
    return callHook(h, ev, this.#o, this.#log(h));
  }

  /** Whether this hook's binding and policy honour the arm; a loud discard when not. */
  #honoured(h: BoundHook, arm: HookArm): boolean {
    if (honours(h, arm)) return true;
    this.#unhonoured(
      h,
      arm,
      arm.arm === "artifact" ? "the artifact is discarded" : "the answer is discarded",
    );
    return false;
  }

  #unhonoured(h: BoundHook, arm: HookArm, consequence: string): void {
    const why = unhonouredReason(h, arm);
    this.#log(h).line(`${h.binding}: answered ${arm.arm}, but ${why}; ${consequence}`);
    this.#o.warn(
      `[murmur] hook ${h.name} answered ${arm.arm} on ${h.binding}, but ${why}; ${consequence} (${
        this.#logName(h)
      })`,
    );
    this.#dispatchError(h, h.binding, arm.arm);
  }

  /** The hook's log as stderr names it: relative to the workdir when it is inside it. */
  #logName(h: HookConfig): string {
    const logs = this.#o.logsDir ?? `${this.#o.workdirRoot}/logs`;
    const path = `${logs}/hook-${h.name}.log`;
    const root = `${this.#o.workdirRoot}/`;
    return path.startsWith(root) ? path.slice(root.length) : path;
  }

  #failed(h: BoundHook, reason: string, consequence: string): void {
    this.#o.warn(
      `[murmur] hook ${h.name} failed on ${h.binding}: ${reason}; ${consequence} (${
        this.#logName(h)
      })`,
    );
  }

  #dispatchError(h: BoundHook, event: string, arm: string): void {
    const trace = this.#o.trace();
    trace?.write("hook_dispatch_error", this.#o.sessionEventId(), {
      hook_name: h.name,
      event,
      arm,
    });
  }
}
