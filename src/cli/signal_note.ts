/**
 * What the first SIGINT or SIGTERM to `mur run` ends, said on stderr as `mur stop` says it
 * (docs/running.md: SIGTERM and SIGINT): the task it cancels (running, or waiting for input)
 * and the queued ones that will be rejected. A sleeping capsule's A2A tasks never decide its
 * status, so without this line a Ctrl-C that canceled one would end `status: ok` and say nothing
 * of it. Nothing is said when nothing was held.
 */
import { isTerminal } from "../a2a/types.ts";
import type { Session } from "../session/session.ts";

/** The stderr line for `signal`, read before the session is shut down; null when nothing was held. */
export function signalNote(session: Session, signal: "SIGINT" | "SIGTERM"): string | null {
  const live = session.registry.all().filter((t) => !isTerminal(t.state));
  const queued = live.filter((t) => t.state === "TASK_STATE_SUBMITTED").map((t) => t.id);
  const running = live.filter((t) => t.state !== "TASK_STATE_SUBMITTED").map((t) => t.id);
  if (running.length === 0 && queued.length === 0) return null;
  const parts = [
    ...running.map((id) => `canceled: ${id}`),
    ...(queued.length ? [`rejected (queued, never started): ${queued.join(", ")}`] : []),
  ];
  return `[mur run] ${signal}: ending the session; ${parts.join("; ")}`;
}
