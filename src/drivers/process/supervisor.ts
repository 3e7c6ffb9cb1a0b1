/**
 * The running harness's keeper: one queue of what happens (a stdout line, EOF, the exit, a
 * cancel, a timer) consumed in order, so the run's state changes in one place. It feeds lines
 * through the dialect's parser into the turn tracker and yields the parts, and it enforces the
 * limits (docs/process-transport.md):
 *
 * - inactivity: no stdout line and no bridge request for `inactivityMs` kills at once (paused
 *   while a bridge call runs, since a request-input wait may last long);
 * - cancel: the dialect's interrupt, then `interruptGraceMs` before the kill;
 * - after a terminal event stdin is closed and the harness gets `exitGraceMs` to exit (it may
 *   still print a suggestion meanwhile); stray children holding stdout open are reaped.
 */
import { EventQueue, Timers } from "./event_queue.ts";
import type { ExitStatus, HarnessProcess } from "./harness_process.ts";
import { failed } from "./outcome.ts";
import { trace, type TurnTracker } from "./turn_tracker.ts";
import type {
  AttemptOutcome,
  HarnessParser,
  HarnessPart,
  InterruptMethod,
  LaunchPlan,
} from "./types.ts";

export interface HarnessLimits {
  /** Default 600 000 (600 s). */
  inactivityMs: number;
  /** Default 10 000. */
  interruptGraceMs: number;
  /** Default 3 000. */
  exitGraceMs: number;
  /** tool-call-progress rate per call. Default 250. */
  progressIntervalMs: number;
}

export const DEFAULT_LIMITS: HarnessLimits = {
  inactivityMs: 600_000,
  interruptGraceMs: 10_000,
  exitGraceMs: 3_000,
  progressIntervalMs: 250,
};

type QueueItem =
  | { t: "line"; line: string }
  | { t: "eof" }
  | { t: "exit" }
  | { t: "abort" }
  | { t: "timer"; name: TimerName };
type TimerName = "inactivity" | "interrupt-grace" | "exit-grace";

export type ExitCause =
  | "terminal"
  | "eof"
  | "max_turns"
  | "inactivity"
  | "canceled"
  | "driver_error";

/** What the supervision saw, for the outcome and the `harness_exit` line. */
export interface Supervised {
  stopped: AttemptOutcome | null;
  interrupted: boolean;
  killedOnCancel: boolean;
  exitCause: ExitCause;
  status: ExitStatus;
  stderrTail: string;
}

export class Supervisor {
  readonly #queue = new EventQueue<QueueItem>();
  readonly #timers = new Timers<TimerName>((name) => this.#queue.push({ t: "timer", name }));
  readonly #onAbort = () => this.#queue.push({ t: "abort" });
  #inFlight = 0;

  constructor(private readonly limits: HarnessLimits, private readonly signal: AbortSignal) {}

  /** Any sign of life (a line, a bridge request) restarts the inactivity clock. */
  activity(): void {
    if (this.#inFlight === 0) this.#timers.set("inactivity", this.limits.inactivityMs);
  }

  /** A bridge call began (+1) or ended (-1): inactivity does not count while one runs. */
  inFlight(delta: number): void {
    this.#inFlight += delta;
    if (this.#inFlight > 0) this.#timers.clear("inactivity");
    else this.activity();
  }

  /** Stops listening; safe to call more than once. */
  release(): void {
    this.signal.removeEventListener("abort", this.#onAbort);
    this.#timers.clearAll();
  }

  /** Supervises `p` until it has exited and its stdout ended, or the runtime stopped it. */
  // Why long: the one loop over the supervisor's queue (lines, exit, cancel, timers); its state
  // (silence, interrupt grace, kill) is the loop's, and each event's reaction is a few lines.
  async *run(
    p: HarnessProcess,
    parser: HarnessParser,
    tracker: TurnTracker,
    interrupt: { method: InterruptMethod; plan: LaunchPlan },
    remember: (id: string) => Promise<void>,
    /** A tool call's announcement went out as parts (the bridge may now run it: call_order.ts). */
    announced: (id: string, name: string) => void = () => {},
    announcesBy: "tool-call" | "tool-call-started" = "tool-call",
  ): AsyncGenerator<HarnessPart, Supervised> {
    const { limits } = this;
    const queue = this.#queue;
    const timers = this.#timers;
    (async () => {
      try {
        for await (const line of p.lines()) queue.push({ t: "line", line });
      } catch {
        // stdout errors when the process is killed: same as EOF.
      }
      queue.push({ t: "eof" });
    })();
    p.status.then(() => queue.push({ t: "exit" }));
    this.signal.addEventListener("abort", this.#onAbort, { once: true });
    if (this.signal.aborted) queue.push({ t: "abort" });
    this.activity();

    let stopped: AttemptOutcome | null = null;
    let killedOnCancel = false;
    let exitCause: ExitCause = "eof";
    let eof = false;
    let exited = false;
    while (!(eof && exited) && !stopped) {
      const item = await queue.next();
      if (item.t === "line") {
        if (!tracker.interrupted) this.activity();
        for (const ev of parser.parse(item.line)) {
          const wasTerminal = tracker.terminal !== null;
          yield* tracker.handle(ev);
          // The consumer has taken every part of `ev` by now: a generator resumes on next().
          if (ev.kind === announcesBy) announced(ev.id, ev.name);
          const id = tracker.takeRemember();
          if (id) await remember(id);
          if (tracker.stopped) {
            p.kill();
            exitCause = "max_turns";
            stopped = tracker.stopped;
            break;
          }
          if (!wasTerminal && tracker.terminal) {
            exitCause = tracker.interrupted ? "canceled" : "terminal";
            // Closing stdin lets the harness exit; it may still print a suggestion meanwhile.
            await p.closeStdin();
            timers.set("exit-grace", limits.exitGraceMs);
          }
        }
      } else if (item.t === "eof") {
        eof = true;
        if (!tracker.terminal) timers.set("exit-grace", limits.exitGraceMs);
      } else if (item.t === "exit") {
        exited = true;
        if (!eof) timers.set("exit-grace", limits.exitGraceMs);
      } else if (item.t === "abort") {
        if (tracker.terminal || tracker.interrupted) continue;
        tracker.interrupted = true;
        exitCause = "canceled";
        timers.clear("inactivity");
        let delivered = false;
        let method = interrupt.method;
        if (method === "stdin-message" && interrupt.plan.interruptStdin && p.stdinOpen) {
          delivered = await p.write(interrupt.plan.interruptStdin);
        } else if (method === "signal-int") {
          delivered = p.interrupt();
        } else {
          method = "unsupported";
        }
        yield trace("harness_interrupt", {
          method,
          delivered,
          grace_ms: delivered ? limits.interruptGraceMs : 0,
        });
        if (!delivered) {
          yield trace("harness_note", { text: "the interrupt could not be delivered; killed" });
          p.kill();
          killedOnCancel = true;
        } else {
          timers.set("interrupt-grace", limits.interruptGraceMs);
        }
      } else if (item.name === "inactivity") {
        if (tracker.terminal || tracker.interrupted || this.#inFlight > 0) continue;
        p.kill();
        exitCause = "inactivity";
        const secs = Math.round(limits.inactivityMs / 1000);
        stopped = failed(
          "E-RUN-035",
          "inactive",
          "runtime",
          `the harness produced neither a line of output nor a tool call for ${secs}s and was killed`,
        );
      } else if (item.name === "interrupt-grace") {
        if (!exited) {
          p.kill();
          killedOnCancel = true;
        }
      } else if (item.name === "exit-grace") {
        if (!exited) p.kill();
        else if (!eof) {
          // Stray children may hold stdout open after the harness exited.
          p.reapGroup();
          eof = true;
        }
      }
    }
    this.release();
    if (!exited) {
      p.kill();
      await p.status;
    }
    p.reapGroup();
    return {
      stopped,
      interrupted: tracker.interrupted,
      killedOnCancel,
      exitCause,
      status: await p.status,
      stderrTail: await p.stderrTail(),
    };
  }
}
