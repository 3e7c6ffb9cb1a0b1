/**
 * What `mur trace show` and `mur trace steps` say of approvals and steers (docs/approvals.md):
 * each call that waited, how the wait ended and who answered; each steer a task read.
 */
import { duration, num, short, str, type TraceEvent } from "./trace_read.ts";

/** One row per approval wait: requested, then its resolution (or still open). */
export function approvalRows(
  of: (t: string) => TraceEvent[],
  whose: (e: TraceEvent) => string,
  turnOf: (e: TraceEvent) => string,
): string[] {
  const resolved = new Map(of("approval_resolved").map((e) => [e.parent_id, e]));
  return of("approval_requested").map((e) => {
    const r = resolved.get(e.event_id);
    const how = r
      ? `${str(r, "outcome") ?? "?"}${str(r, "by") ? ` by ${str(r, "by")}` : ""} after ${
        duration(num(r, "waited_ms"))
      }${str(r, "reason") ? `  “${short(str(r, "reason"), 80)}”` : ""}`
      : "still waiting (no approval_resolved)";
    return `${whose(e)}${turnOf(e)}  ${str(e, "tool_name") ?? "?"}  ${how}  asked by ${
      str(e, "reason") ?? "?"
    }`;
  });
}

export function steerRows(
  of: (t: string) => TraceEvent[],
  whose: (e: TraceEvent) => string,
): string[] {
  return of("steer_taken").map((e) =>
    `${whose(e)}before turn ${(num(e, "turn") ?? -1) + 2}  message ${
      str(e, "message_id") ?? "?"
    }  ${num(e, "text_bytes") ?? "?"} B`
  );
}

/** `mur trace steps` rows. */
export const APPROVAL_STEPS: Record<string, (e: TraceEvent) => string> = {
  approval_requested: (e) =>
    `approval_requested ${str(e, "tool_name") ?? "?"}  ${str(e, "reason") ?? ""}`.trimEnd(),
  approval_resolved: (e) =>
    `approval_resolved ${str(e, "tool_name") ?? "?"}  ${str(e, "outcome") ?? "?"}${
      str(e, "by") ? ` by ${str(e, "by")}` : ""
    }  after ${duration(num(e, "waited_ms"))}`,
  steer_taken: (e) => `steer_taken ${str(e, "message_id") ?? "?"}`,
};
