/**
 * Hooks as commands (contract §4): the `Hooks` the session loop calls, implemented by running
 * each bound hook's command per event, in manifest declaration order. Blocking hooks are awaited
 * and their arm committed when their binding and commit policy honour it; async hooks go through
 * a bounded queue per hook with one worker, drained before the session ends.
 *
 * Failures follow runtime-facts §6.5: a failing hook is logged to `logs/hook-<name>.log` (and a
 * stderr line) and the session goes on; a policy (`deny`) hook fails closed; a `replace-context`
 * hook that fails fails the task (the loop does that with the answer `failed`); an arm the
 * binding does not honour is discarded loudly (`hook_dispatch_error`).
 */
import { type ArtifactFrame, artifactFrame } from "../events/frames.ts";
import type { HookBinding, HookConfig } from "../manifest/types.ts";
import { BINDING_POLICY } from "../manifest/schema.ts";
import type {
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
import type { TraceWriter } from "../session/trace.ts";
import { shellEnv } from "../tools/shell.ts";
import { runHookCommand } from "./exec.ts";
import { HookLog } from "./log.ts";
import { type HookArm, parseHookOutput } from "./output.ts";

/** Events an async hook may have waiting; beyond this an event is dropped (`queue-overflow`). */
export const ASYNC_QUEUE_CAPACITY = 64;

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
}

/** What one invocation produced. */
type Outcome =
  | { ok: true; arm: HookArm }
  | { ok: false; kind: "timeout" | "error"; reason: string };

const ARM_POLICY: Partial<Record<HookArm["arm"], string>> = {
  "reopen-task": "reopen-task",
  "seed-context": "seed-context",
  "replace-context": "replace-context",
  "deny": "deny",
};

/** What each policy arm does, for the sentence that says why an answer was not used. */
const ARM_ACTION: Record<string, string> = {
  "reopen-task": "reopen a task",
  "seed-context": "seed the context",
  "replace-context": "replace the context",
  "deny": "refuse a call",
};

/** `an on-tool-call or on-shell` — the bindings that honour `policy`, with their article. */
function bindingsHonouring(policy: string): string {
  const names = Object.entries(BINDING_POLICY).filter(([, p]) => p === policy).map(([b]) => b);
  return `an ${names.join(" or ")}`;
}

/**
 * Why a hook's answer is not used, as the end of a sentence that starts "hook <name> answered
 * <arm> on <binding>, but …": who may give that answer, and what this hook is instead.
 */
export function unhonouredReason(h: HookConfig, arm: HookArm): string {
  if (arm.arm === "artifact") {
    return h.binding === "on-inference"
      ? "an async hook's artifact has no attempt to join"
      : "only a blocking on-inference hook's artifact is used";
  }
  const policy = ARM_POLICY[arm.arm] ?? arm.arm;
  const who = `only ${bindingsHonouring(policy)} hook with commit_policy: ${policy} can ${
    ARM_ACTION[policy] ?? `answer ${arm.arm}`
  }`;
  return BINDING_POLICY[h.binding] === policy
    ? `${who}, and this one's commit_policy is ${h.commitPolicy}`
    : who;
}

interface AsyncQueue {
  items: HookEvent[];
  busy: boolean;
  idle: Promise<void>;
  markIdle: () => void;
}

export class CommandHooks implements Hooks {
  readonly #o: CommandHooksOptions;
  readonly #logs = new Map<string, HookLog>();
  readonly #queues = new Map<string, AsyncQueue>();
  readonly hasCompaction: boolean;

  constructor(o: CommandHooksOptions) {
    this.#o = o;
    for (const h of o.hooks) {
      const logs = o.logsDir ?? `${o.workdirRoot}/logs`;
      this.#logs.set(h.name, new HookLog(`${logs}/hook-${h.name}.log`));
    }
    this.hasCompaction = o.hooks.some((h) =>
      h.binding === "on-compaction" && h.commitPolicy === "replace-context"
    );
  }

  #bound(binding: HookBinding): HookConfig[] {
    return this.#o.hooks.filter((h) => h.binding === binding);
  }

  async sessionStart(ev: SessionStartEvent): Promise<void> {
    await this.#observe("on-session-start", ev);
  }

  async taskStart(
    ev: TaskStartEvent,
  ): Promise<{ hook: string; messages: HookMessage[] } | undefined> {
    let seed: { hook: string; messages: HookMessage[] } | undefined;
    for (const h of this.#bound("on-task-start")) {
      if (h.executionMode === "async") {
        this.#enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      if (!out.ok) {
        this.#failed(h, out.reason, "the task starts without its seed");
        continue;
      }
      if (out.arm.arm !== "seed-context" || !this.#honoured(h, out.arm)) continue;
      if (seed) {
        this.#log(h).line(
          `on-task-start: seed ignored: hook ${seed.hook}, declared earlier, already seeded`,
        );
        continue;
      }
      seed = { hook: h.name, messages: out.arm.messages };
    }
    return seed;
  }

  async inference(ev: InferenceEvent): Promise<ArtifactFrame[]> {
    const frames: ArtifactFrame[] = [];
    for (const h of this.#bound("on-inference")) {
      if (h.executionMode === "async") {
        this.#enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      if (!out.ok) {
        this.#failed(h, out.reason, "the turn goes on");
        continue;
      }
      if (out.arm.arm === "artifact" && this.#honoured(h, out.arm)) {
        frames.push(artifactFrame({
          toolName: h.name,
          content: JSON.stringify(out.arm.json),
          fenceSource: null,
          toolCallId: null,
          isError: false,
          durationMs: null,
          exitCode: null,
          truncated: false,
          attachments: [],
        }));
      }
    }
    return frames;
  }

  /**
   * Policy hooks (`deny`) before the call: only a clean `none` lets it run (fail closed).
   * Observers are called after the call returns (toolResult).
   */
  async toolCall(ev: ToolCallEvent, shell: boolean): Promise<ToolCallDecision> {
    const binding = shell ? "on-shell" : "on-tool-call";
    for (const h of this.#bound(binding)) {
      if (h.commitPolicy !== "deny") continue;
      const out = await this.#call(h, ev);
      if (!out.ok) {
        this.#failed(h, out.reason, "the call is refused (a policy hook fails closed)");
        return { deny: { hook: h.name, reason: `the policy hook failed: ${out.reason}` } };
      }
      if (out.arm.arm === "none") continue;
      if (out.arm.arm === "deny") {
        const reason = out.arm.reason.trim();
        if (reason === "") {
          this.#log(h).line(`${binding}: deny with an empty reason; the call is refused`);
          return { deny: { hook: h.name, reason: "the policy hook gave no reason" } };
        }
        return { deny: { hook: h.name, reason } };
      }
      this.#unhonoured(h, out.arm, "the call is refused (a policy hook fails closed)");
      return {
        deny: {
          hook: h.name,
          reason: `the policy hook answered ${out.arm.arm}, which is neither none nor deny`,
        },
      };
    }
    return {};
  }

  async toolResult(ev: ToolResultEvent, shell: boolean): Promise<void> {
    const binding = shell ? "on-shell" : "on-tool-call";
    for (const h of this.#bound(binding)) {
      if (h.commitPolicy === "deny") continue;
      if (h.executionMode === "async") {
        this.#enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      if (!out.ok) this.#failed(h, out.reason, "the task goes on");
      else this.#honoured(h, out.arm);
    }
  }

  async compaction(ev: CompactionEvent): Promise<CompactionAnswer> {
    let answer: CompactionAnswer = { declined: "no_hook_replacement" };
    for (const h of this.#bound("on-compaction")) {
      if (h.executionMode === "async") {
        this.#enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      if (!out.ok) {
        if (h.commitPolicy === "replace-context" && !("replaced" in answer)) {
          this.#failed(h, out.reason, "the compaction fails");
          return { failed: out.reason, hook: h.name };
        }
        this.#failed(h, out.reason, "the task goes on");
        continue;
      }
      if (out.arm.arm !== "replace-context" || !this.#honoured(h, out.arm)) continue;
      if ("replaced" in answer) {
        this.#log(h).line(
          `on-compaction: replacement ignored: hook ${answer.hook} already answered`,
        );
        continue;
      }
      answer = { replaced: out.arm.messages, hook: h.name };
    }
    return answer;
  }

  async taskEnd(ev: TaskEndEvent): Promise<TaskEndDecision> {
    let decision: TaskEndDecision = {};
    for (const h of this.#bound("on-task-end")) {
      if (h.executionMode === "async") {
        this.#enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      if (!out.ok) {
        this.#failed(h, out.reason, "the task is not reopened by it");
        continue;
      }
      if (out.arm.arm !== "reopen-task" || !this.#honoured(h, out.arm)) continue;
      if (decision.reopen) {
        this.#log(h).line(
          `on-task-end: reopen ignored: hook ${decision.reopen.hook}, declared earlier, already reopened`,
        );
        continue;
      }
      decision = { reopen: { hook: h.name, feedback: out.arm.feedback } };
    }
    return decision;
  }

  async sessionEnd(ev: SessionEndEvent): Promise<void> {
    await this.#observe("on-session-end", ev);
  }

  /** Waits until every async queue is empty, within the drain budget; drops what is left. */
  async drain(): Promise<void> {
    const budget = this.#o.drainBudgetMs ?? this.#o.timeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = Promise.all([...this.#queues.values()].map((q) => q.idle));
    const inTime = await Promise.race([
      idle.then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), budget))),
    ]);
    clearTimeout(timer);
    if (inTime) return;
    for (const [name, q] of this.#queues) {
      if (q.items.length === 0 && !q.busy) continue;
      const dropped = q.items.length;
      q.items.length = 0;
      const h = this.#o.hooks.find((x) => x.name === name)!;
      this.#dispatchError(h, "drain", "timeout");
      this.#log(h).line(
        `drain: the session is ending; ${dropped} queued event(s) dropped after ${budget} ms`,
      );
    }
  }

  // ---- internals

  /** Fires hooks whose arms can only be `none` (session start/end). */
  async #observe(binding: HookBinding, ev: HookEvent): Promise<void> {
    for (const h of this.#bound(binding)) {
      if (h.executionMode === "async") {
        this.#enqueue(h, ev);
        continue;
      }
      const out = await this.#call(h, ev);
      if (!out.ok) this.#failed(h, out.reason, "the session goes on");
      else this.#honoured(h, out.arm);
    }
  }

  #log(h: HookConfig): HookLog {
    return this.#logs.get(h.name)!;
  }

  /** Runs the command once; logs the call and its stderr. */
  async #call(h: HookConfig, ev: HookEvent): Promise<Outcome> {
    const input = { event: h.binding, session_id: this.#o.sessionId, ...ev };
    const run = await runHookCommand(h.command, input, {
      cwd: this.#o.workdirRoot,
      timeoutMs: this.#o.timeoutMs,
      env: {
        ...shellEnv(),
        MURMUR_SESSION_ID: this.#o.sessionId,
        MURMUR_HOOK_NAME: h.name,
        MURMUR_WORKDIR: this.#o.workdirRoot,
      },
    });
    const log = this.#log(h);
    let out: Outcome;
    switch (run.kind) {
      case "spawn_failed":
        out = { ok: false, kind: "error", reason: run.message };
        break;
      case "timeout":
        out = {
          ok: false,
          kind: "timeout",
          reason: `it did not answer within ${this.#o.timeoutMs} ms and was killed`,
        };
        break;
      case "exited": {
        if (run.code !== 0) {
          out = { ok: false, kind: "error", reason: `it exited with status ${run.code}` };
          break;
        }
        const arm = parseHookOutput(run.stdout);
        out = "unreadable" in arm
          ? { ok: false, kind: "error", reason: arm.unreadable }
          : { ok: true, arm };
      }
    }
    log.line(
      `${h.binding} (${h.executionMode}) ${run.durationMs} ms: ${
        out.ok ? `answered ${out.arm.arm}` : `failed: ${out.reason}`
      }`,
    );
    if (run.kind !== "spawn_failed" && run.stderr.trim() !== "") log.block("stderr", run.stderr);
    return out;
  }

  /** Whether this hook's binding and policy honour the arm; a loud discard when not. */
  #honoured(h: HookConfig, arm: HookArm): boolean {
    if (arm.arm === "none") return true;
    if (arm.arm === "artifact") {
      if (h.binding === "on-inference" && h.executionMode === "blocking") return true;
      this.#unhonoured(h, arm, "the artifact is discarded");
      return false;
    }
    const policy = ARM_POLICY[arm.arm];
    if (h.commitPolicy === policy && BINDING_POLICY[h.binding] === policy) return true;
    this.#unhonoured(h, arm, "the answer is discarded");
    return false;
  }

  #unhonoured(h: HookConfig, arm: HookArm, consequence: string): void {
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

  #failed(h: HookConfig, reason: string, consequence: string): void {
    this.#o.warn(
      `[murmur] hook ${h.name} failed on ${h.binding}: ${reason}; ${consequence} (${
        this.#logName(h)
      })`,
    );
  }

  #dispatchError(h: HookConfig, event: string, arm: string): void {
    const trace = this.#o.trace();
    trace?.write("hook_dispatch_error", this.#o.sessionEventId(), {
      hook_name: h.name,
      event,
      arm,
    });
  }

  #enqueue(h: HookConfig, ev: HookEvent): void {
    let q = this.#queues.get(h.name);
    if (!q) {
      let markIdle!: () => void;
      const idle = new Promise<void>((r) => (markIdle = r));
      q = { items: [], busy: false, idle, markIdle };
      q.markIdle();
      this.#queues.set(h.name, q);
    }
    if (q.items.length >= (this.#o.queueCapacity ?? ASYNC_QUEUE_CAPACITY)) {
      this.#log(h).line(`${h.binding}: queue full; event dropped (on_overflow: drop)`);
      this.#dispatchError(h, h.binding, "queue-overflow");
      return;
    }
    q.items.push(ev);
    if (!q.busy) this.#work(h, q);
  }

  async #work(h: HookConfig, q: AsyncQueue): Promise<void> {
    q.busy = true;
    q.idle = new Promise<void>((r) => (q.markIdle = r));
    try {
      for (let ev = q.items.shift(); ev; ev = q.items.shift()) {
        const out = await this.#call(h, ev);
        if (!out.ok) {
          this.#failed(h, out.reason, "the session goes on");
          this.#dispatchError(h, h.binding, out.kind === "timeout" ? "timeout" : "error");
        } else if (out.arm.arm !== "none") {
          // An async hook commits nothing: any arm but none is discarded loudly.
          this.#unhonoured(h, out.arm, "the answer is discarded (an async hook commits nothing)");
        }
      }
    } finally {
      q.busy = false;
      q.markIdle();
    }
  }
}
