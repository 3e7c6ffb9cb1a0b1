/**
 * One abortable timer for every wait that must end early when its work is called off (the
 * scripted model's `delay_ms`, a crew call's back-off and polls: src/crew/calls/remote_task.ts,
 * member_follow.ts). It resolves, never rejects, when the signal aborts.
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
