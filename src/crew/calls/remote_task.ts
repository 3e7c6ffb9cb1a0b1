/**
 * One task handed to another capsule's door (docs/crews.md): a `call-member` call
 * (member_call.ts) or a `delegate-task` delegation (delegation.ts), from its first offer to its
 * answer:
 *
 *   offer (SendMessage, returnImmediately) → [busy → wait 1 s, 2 s, 4 s, 8 s … + jitter → offer]*
 *     → held: follow the member's task (member_follow.ts) → answer
 *
 * Every offer carries the same `messageId` (`msg_<call id>`), so a retried send the member
 * already took is answered with the same task (src/door/retries.ts) rather than started twice.
 * `lifecycle.delegation_deadline_secs` bounds the whole call. The answer is always a value: an
 * unreachable, refusing, failing or killed member is an answer too. A call still out when it is
 * stopped (the caller's task canceled or ended, or the deadline) cancels the member's task, so no
 * member work outlives the task that asked for it.
 */
import { stateWord, type TaskState } from "../../a2a/types.ts";
import type { CrewMember } from "./crew_file.ts";
import type { HandedOffWork } from "./handed_off.ts";
import { followMemberTask } from "./member_follow.ts";
import { describeFailure, type DoorAnswer, memberRpc } from "./member_door.ts";
import { abortableSleep as sleep } from "../../abortable_sleep.ts";

export type CallStatus =
  | "completed"
  | "failed"
  | "canceled"
  | "rejected"
  | "timed_out"
  | "unreachable"
  | "abandoned"
  | "no_answer"
  | "crashed";

export interface CallAnswer {
  status: CallStatus;
  /** The member's answer, or why there is none. */
  output: string;
  truncated: boolean;
}

/** What the tool returns at once: the first offer's outcome. */
export type FirstOffer =
  | { kind: "started"; remoteTaskId: string }
  | { kind: "busy" }
  | { kind: "ended"; answer: CallAnswer };

export const BUSY_MESSAGE = "task rejected: capsule is busy";
/** An answer longer than this is cut, with a marker (docs/crews.md "`call-member`"). */
export const OUTPUT_CAP = 64 * 1024;

/** The trace lines a kind of remote task writes (member_call_* or delegation*). */
export interface RemoteLines {
  busy(offer: number, waitedMs: number): void;
  started(remoteTaskId: string): void;
  ended(answer: CallAnswer, remoteTaskId: string | undefined, busyOffers: number): void;
}

export interface RemoteTaskDeps {
  kind: "call" | "delegation";
  trust: "trusted" | "untrusted";
  deadlineSecs: number;
  clock: () => number;
  /** The door to send to (a string: why there is none, the task's `failed` answer). */
  open(signal: AbortSignal): Promise<CrewMember | string>;
  lines: RemoteLines;
  /** The status of a task whose door stopped answering mid-task. */
  lostStatus: CallStatus;
  /** Run once the answer is known, before `done` settles (a delegation ends its child). */
  close?(): Promise<void>;
  /** Told of each request to the door (an `a2a.client` span, docs/opentelemetry.md). */
  observe?: CrewMember["observe"];
}

/** Why a call was stopped before its answer. */
type StopReason = "deadline" | "canceled" | "ended";

export class RemoteTask implements HandedOffWork {
  readonly kind: "call" | "delegation";
  readonly startedAt: number;
  remoteTaskId?: string;
  /** Set once the answer is known. */
  answer?: CallAnswer;
  /** The answer went into the conversation (a continuation, or the tool result itself). */
  delivered = false;
  readonly done: Promise<CallAnswer>;
  #resolve!: (a: CallAnswer) => void;
  readonly #stop = new AbortController();
  #stopReason: StopReason | null = null;
  #address: CrewMember | null = null;
  #offers = 0;
  #busyOffers = 0;
  readonly #deadline: ReturnType<typeof setTimeout>;

  constructor(
    readonly id: string,
    /** The member called, or the capsule delegated to. */
    readonly name: string,
    readonly task: string,
    private readonly d: RemoteTaskDeps,
  ) {
    this.kind = d.kind;
    this.startedAt = d.clock();
    this.done = new Promise((r) => (this.#resolve = r));
    this.#deadline = setTimeout(() => this.stop("deadline"), d.deadlineSecs * 1000);
  }

  get messageId(): string {
    return `msg_${this.id}`;
  }

  /** Still waiting for its answer. */
  get outstanding(): boolean {
    return this.answer === undefined;
  }

  /**
   * The first offer; a busy or held call then goes on by itself until `done`. The tool call
   * returns this at once.
   */
  async begin(): Promise<FirstOffer> {
    const addr = await this.d.open(this.#stop.signal);
    if (typeof addr === "string") return { kind: "ended", answer: this.#end("failed", addr) };
    this.#address = this.d.observe ? { ...addr, observe: this.d.observe } : addr;
    const first = await this.#offer();
    if (first.kind === "started") void this.#follow();
    else if (first.kind === "busy") void this.#keepOffering();
    return first;
  }

  /** Stops a call still out: the deadline, or the calling task canceled / ended. */
  stop(reason: StopReason): void {
    if (this.answer !== undefined || this.#stopReason !== null) return;
    this.#stopReason = reason;
    this.#stop.abort();
  }

  /** One SendMessage; `busy` when the member's queue is full. */
  async #offer(): Promise<FirstOffer> {
    const m = this.#address!;
    this.#offers++;
    const rpcId = this.#offers === 1 ? this.id : `${this.id}-${this.#offers}`;
    const a = await memberRpc(m, this.d.trust, rpcId, "SendMessage", {
      message: {
        messageId: this.messageId,
        role: "ROLE_USER",
        parts: [{ text: this.task }],
      },
      configuration: { returnImmediately: true },
    });
    if (a.kind !== "result") return this.#offerFailed(a);
    const task = (a.result.task ?? {}) as {
      id?: string;
      status?: { state?: TaskState; message?: { parts?: { text?: string }[] } };
    };
    const state = task.status?.state;
    const said = task.status?.message?.parts?.[0]?.text ?? "";
    if (state === "TASK_STATE_REJECTED") {
      if (said === BUSY_MESSAGE) return this.#busy();
      const why = said.replace(/^task rejected: /, "");
      return {
        kind: "ended",
        answer: this.#end(
          "rejected",
          why ? `${this.name} did not take the task: ${why}` : `${this.name} did not take the task`,
        ),
      };
    }
    if (typeof task.id !== "string" || !state) {
      return {
        kind: "ended",
        answer: this.#end("failed", `${this.name}'s door answered SendMessage without a task`),
      };
    }
    this.remoteTaskId = task.id;
    this.d.lines.started(task.id);
    // A member that ended the task within the send (it answers fast) is read when followed:
    // SubscribeToTask refuses an ended task and the follower reads it with GetTask.
    return { kind: "started", remoteTaskId: task.id };
  }

  #offerFailed(a: Exclude<DoorAnswer, { kind: "result" }>): FirstOffer {
    const status: CallStatus = a.kind === "unreachable" ? "unreachable" : "failed";
    return { kind: "ended", answer: this.#end(status, describeFailure(this.name, a)) };
  }

  #busy(): FirstOffer {
    this.#busyOffers++;
    this.d.lines.busy(this.#offers, this.d.clock() - this.startedAt);
    return { kind: "busy" };
  }

  /** Offers again after each busy answer: 1 s, doubling to 8 s, plus 0–250 ms of jitter. */
  async #keepOffering(): Promise<void> {
    for (let wait = 1000;; wait = Math.min(wait * 2, 8000)) {
      await sleep(wait + jitter(this.id, this.#offers), this.#stop.signal);
      if (this.#stop.signal.aborted) return this.#stopped();
      const next = await this.#offer();
      if (next.kind === "started") return this.#follow();
      if (next.kind === "ended") return;
      if (this.#stop.signal.aborted) return this.#stopped();
    }
  }

  async #follow(): Promise<void> {
    const followed = await followMemberTask(
      this.#address!,
      this.d.trust,
      this.remoteTaskId!,
      this.#stop.signal,
    );
    if (followed.kind === "stopped") return this.#stopped();
    if (followed.kind === "lost") {
      this.#end(this.d.lostStatus, followed.why);
      return;
    }
    const t = followed.task as {
      status?: { state?: TaskState; message?: { parts?: { text?: string }[] } };
      artifacts?: { name?: string; parts?: { text?: string }[] }[];
      metadata?: { murmur?: { noAnswer?: boolean } };
    };
    const state = t.status?.state ?? "TASK_STATE_FAILED";
    const said = t.status?.message?.parts?.[0]?.text ?? "";
    if (state === "TASK_STATE_COMPLETED") {
      const response = t.artifacts?.find((a) => a.name === "response")?.parts?.[0]?.text ?? said;
      this.#end("completed", response);
      return;
    }
    if (t.metadata?.murmur?.noAnswer === true) {
      this.#end("no_answer", `${this.name} gave no answer: ${said}`);
      return;
    }
    const status: CallStatus = state === "TASK_STATE_CANCELED"
      ? "canceled"
      : state === "TASK_STATE_REJECTED"
      ? "rejected"
      : "failed";
    this.#end(status, said || `${this.name}'s task ended ${stateWord(state)}`);
  }

  /** The call was stopped before its answer: cancel the member's task if it holds one. */
  async #stopped(): Promise<void> {
    if (this.answer !== undefined) return;
    const secs = this.d.deadlineSecs;
    const held = this.remoteTaskId !== undefined;
    let canceled = "";
    if (held) {
      const a = await memberRpc(
        this.#address!,
        this.d.trust,
        `${this.id}-cancel`,
        "CancelTask",
        { id: this.remoteTaskId },
      );
      canceled = a.kind === "result"
        ? "its task was canceled"
        : `a cancel was sent to its task and not taken (${describeFailure(this.name, a)})`;
    }
    if (this.#stopReason === "deadline") {
      if (held) {
        this.#end("timed_out", `${this.name} did not answer within ${secs}s; ${canceled}`);
      } else {
        this.#end(
          "rejected",
          `${this.name} stayed busy with other work for the whole ${secs}s this call may wait and never took the task; it was offered the task ${this.#offers} times. Nothing was done on it.`,
        );
      }
      return;
    }
    this.#end(
      "abandoned",
      held
        ? `the calling task ended before ${this.name} answered; ${canceled}`
        : `the calling task ended before ${this.name} took the task; ${this.name} was busy and was never handed it`,
    );
  }

  #end(status: CallStatus, output: string): CallAnswer {
    if (this.answer !== undefined) return this.answer;
    clearTimeout(this.#deadline);
    const truncated = output.length > OUTPUT_CAP;
    // Cut between characters: a cut inside a surrogate pair would put half an emoji, a lone
    // surrogate, into the caller's conversation (tests/crew/call_member_test.ts "64 KiB").
    const cut = /[\uD800-\uDBFF]/.test(output[OUTPUT_CAP - 1] ?? "") ? OUTPUT_CAP - 1 : OUTPUT_CAP;
    const text = truncated
      ? `${output.slice(0, cut)}\n[answer cut at ${OUTPUT_CAP} characters]`
      : output;
    const answer: CallAnswer = { status, output: text, truncated };
    this.answer = answer;
    this.d.lines.ended(answer, this.remoteTaskId, this.#busyOffers);
    const close = this.d.close?.() ?? Promise.resolve();
    void close.catch(() => {}).then(() => this.#resolve(answer));
    return answer;
  }
}

/** 0–250 ms, a deterministic hash of the call id and offer number (docs/crews.md "`call-member`"). */
export function jitter(callId: string, offer: number): number {
  let h = 2166136261;
  for (const ch of `${callId}#${offer}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return (h >>> 0) % 251;
}
