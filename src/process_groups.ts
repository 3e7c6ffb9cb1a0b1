/**
 * Every process group mur started and that still runs: hooks, shell and command tools (detached
 * ones included), done checks, harnesses. Each child is spawned as the leader of its own group
 * (setsid), so killing the group reaches what it forked too.
 *
 * Normal endings stop children one by one (cancel, deadlines). This registry exists for the one
 * way out that cannot wait: a second SIGTERM or SIGINT to `mur run` (docs/running.md),
 * which kills every group here before the process exits, so nothing it started is left running
 * reparented to PID 1.
 */
const groups = new Set<number>();

/** Tracks `pid`'s group until its leader exits. */
export function trackGroup(pid: number, exited: Promise<unknown>): void {
  groups.add(pid);
  const forget = () => groups.delete(pid);
  exited.then(forget, forget);
}

/** The groups still tracked (their leaders have not exited). */
export function trackedGroups(): number[] {
  return [...groups];
}

/** SIGKILL to every tracked group, at once; returns the group ids signalled. */
export function killAllGroups(): number[] {
  const pids = [...groups];
  for (const pid of pids) {
    try {
      Deno.kill(-pid, "SIGKILL");
    } catch {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  }
  groups.clear();
  return pids;
}
