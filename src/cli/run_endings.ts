/**
 * How a running `mur run` is ended from outside its tasks (docs/running.md): an error
 * nobody caught (a fault: E-RUN-050), SIGTERM / SIGINT (the first ends the session cleanly, a
 * second kills what it runs and exits at once), and the lifeline of a session another mur started
 * (its stdin closing means the starter ended: src/crew/calls/lifeline.ts).
 */
import { LIFELINE_GRACE_MS, watchLifeline } from "../crew/calls/lifeline.ts";
import type { Membership } from "../crew/formation/membership.ts";
import { removeRunningRecordSync } from "../home/running_records.ts";
import { killAllGroups } from "../process_groups.ts";
import type { Session, SessionStatus } from "../session/session.ts";
import type { WorkdirLock } from "../session/workdir_lock.ts";
import { signalNote } from "./signal_note.ts";
import { newLineAfterInterrupt } from "../interrupt_newline.ts";

/** How long a session that faulted may take to end by itself (docs/running.md). */
export const FAULT_GRACE_MS = 5_000;

/**
 * From now on an error nobody caught, anywhere in this process, is the session's fault
 * (Session.fault). Resolves on the first.
 */
export function watchFaults(session: Session): Promise<void> {
  let faultSeen!: () => void;
  const afterFault = new Promise<void>((r) => (faultSeen = r));
  const onFault = (ev: Event) => {
    ev.preventDefault();
    session.fault(ev instanceof ErrorEvent ? ev.error : (ev as PromiseRejectionEvent).reason);
    faultSeen();
  };
  globalThis.addEventListener("error", onFault);
  globalThis.addEventListener("unhandledrejection", onFault);
  return afterFault;
}

/**
 * After a fault the session ends by itself once its running task has stopped; if the task loop
 * never comes back, it is ended FAULT_GRACE_MS after the fault. `cancel` drops the timer.
 */
export function endAfterFault(
  session: Session,
  afterFault: Promise<void>,
): { ended: Promise<SessionStatus>; cancel(): void } {
  let grace: ReturnType<typeof setTimeout> | undefined;
  const ended = afterFault.then(() =>
    new Promise<SessionStatus>((resolve) => {
      grace = setTimeout(() => resolve(session.endNow()), FAULT_GRACE_MS);
    })
  );
  return { ended, cancel: () => clearTimeout(grace) };
}

export interface Endings {
  session: Session;
  sessionId: string;
  lock: WorkdirLock;
  membership: Membership | null;
  /** The session was started with a lifeline (stdin from its starter). */
  lifeline: boolean;
  /** Prints the status line. */
  report(status: SessionStatus): void;
}

/**
 * Installs the signal handlers (before the running record and the announcement: a caller may
 * signal as soon as it reads the url line) and the lifeline watch. Returns their removal.
 */
export function installEndings(e: Endings): () => void {
  const { session } = e;
  // The second signal cannot wait for the teardown: every process group this session started
  // (hooks, tools, detached shells, a harness) is killed, the trace closed with session_end, the
  // record and the workdir lock removed, the status line printed.
  const exitNow = (code: number) => {
    killAllGroups();
    const status = session.abortNow();
    removeRunningRecordSync(e.sessionId);
    e.lock.release();
    e.report(status);
    Deno.exit(code);
  };
  let signals = 0;
  const onSignal = (code: number) => () => {
    signals++;
    if (signals > 1) exitNow(code);
    const name = code === 130 ? "SIGINT" : "SIGTERM";
    newLineAfterInterrupt(name);
    // Once closing (a lifeline, a fault), the tasks were already ended: nothing new to say.
    const note = session.closing ? null : signalNote(session, name);
    if (note) console.error(note);
    session.shutdown();
  };
  const term = onSignal(143);
  const int = onSignal(130);
  Deno.addSignalListener("SIGTERM", term);
  Deno.addSignalListener("SIGINT", int);
  if (e.lifeline) {
    watchLifeline(() => {
      console.error(
        "[mur run] lifeline closed: the formation or the parent ended; ending the session",
      );
      // Once the session is closing (a signal came first) the line would say nothing new.
      if (!session.closing) {
        session.trace.write("lifeline_closed", session.sessionEventId, {
          formation_id: e.membership?.formationId ?? null,
          formation_member: e.membership?.door?.member ?? null,
        });
      }
      session.shutdown();
      const t = setTimeout(() => exitNow(143), LIFELINE_GRACE_MS);
      Deno.unrefTimer(t);
    });
  }
  return () => {
    Deno.removeSignalListener("SIGTERM", term);
    Deno.removeSignalListener("SIGINT", int);
  };
}
