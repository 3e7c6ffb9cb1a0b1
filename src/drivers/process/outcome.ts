/**
 * How a harness run ended, as the loop reads it (`AttemptOutcome`, harness.ts): from what the
 * run saw (a terminal event, a runtime stop, an interrupt) and, when stdout ended with no
 * terminal event, the dialect's reading of the exit. Pure: tested without a process.
 */
import type {
  AttemptOutcome,
  ExitInfo,
  HarnessDialect,
  HarnessEvent,
  HarnessFailureKind,
} from "./types.ts";

export interface RunEnding {
  /** A runtime stop (inactivity, the turn budget). */
  stopped: AttemptOutcome | null;
  /** The attempt was canceled and the harness interrupted. */
  interrupted: boolean;
  /** The harness ignored the interrupt and was killed. */
  killedOnCancel: boolean;
  terminal: (HarnessEvent & { kind: "turn-end" | "turn-failed" }) | null;
  exit: Omit<ExitInfo, "interrupted" | "sawTerminal">;
  /** The run resumed a stored session and never said it runs in one. */
  resumedSilently: boolean;
  sessionId: string | null;
  lastSegmentText: boolean;
}

export function classifyOutcome(dialect: HarnessDialect, e: RunEnding): AttemptOutcome {
  if (e.stopped) return e.stopped;
  if (e.interrupted) return canceled(e.killedOnCancel, true);
  const end = e.terminal ?? dialect.classifyExit({
    ...e.exit,
    interrupted: false,
    sawTerminal: false,
  });
  if (end.kind === "turn-end") {
    return { status: "completed", text: end.result, lastSegmentStreamedText: e.lastSegmentText };
  }
  if (end.kind !== "turn-failed") {
    return failed("E-RUN-034", "driver-error", "runtime", "the process driver ended oddly");
  }
  if (e.resumedSilently && (end.failureKind === "harness-error" || end.failureKind === "other")) {
    return failed(
      "E-RUN-036",
      "session-gone",
      "harness",
      `the harness no longer has session ${e.sessionId} (${end.message}); ` +
        "forget the session to start a new conversation",
    );
  }
  // A `canceled` here is a cancel the harness reported without our interrupt (a signal from
  // outside): a failure of the turn like any other.
  return failed(
    "E-RUN-033",
    end.failureKind,
    "harness",
    `the harness turn failed (${end.failureKind}): ${end.message}`,
  );
}

export function canceled(
  killed: boolean,
  started: boolean,
): Extract<AttemptOutcome, { status: "canceled" }> {
  return { status: "canceled", killed, started };
}

export function failed(
  code: Extract<AttemptOutcome, { status: "failed" }>["code"],
  kind: HarnessFailureKind,
  origin: "harness" | "runtime",
  message: string,
): Extract<AttemptOutcome, { status: "failed" }> {
  return { status: "failed", code, kind, origin, message };
}
