/**
 * The lifeline (docs/crews.md): a `mur run` started by another mur (a formation member, a
 * delegated child) reads its stdin, a pipe whose write end only its starter holds, and nothing is
 * ever written to it. End of file means the starter has ended — closed it on purpose, or died by
 * any means, SIGKILL included, when the kernel closes it — and the session winds down as after a
 * first SIGTERM. Deno cannot hand a child an extra file descriptor, so stdin is the pipe
 * (docs/crews.md "Child capsules and the lifeline").
 */

/** Set to `stdin` by the starter (src/crew/calls/child_capsule.ts); nothing else turns it on. */
export const LIFELINE_ENV = "MURMUR_LIFELINE";

/** How long a session whose lifeline closed may take to end before it exits 143 regardless. */
export const LIFELINE_GRACE_MS = 20_000;

/** Whether this process was started with a lifeline on its stdin. */
export function hasLifeline(env: (name: string) => string | undefined = Deno.env.get): boolean {
  return env(LIFELINE_ENV) === "stdin";
}

/**
 * Reads stdin until it ends, then calls `onClosed` once. Bytes written to it are read and
 * ignored (nobody should write). The read holds no timer, and the process exits through
 * Deno.exit (main.ts), so a pending read never keeps it alive.
 */
export function watchLifeline(onClosed: () => void): void {
  (async () => {
    const buf = new Uint8Array(256);
    try {
      while ((await Deno.stdin.read(buf)) !== null) {
        // nothing is ever written; a stray byte changes nothing
      }
    } catch {
      // a read error is a closed pipe too
    }
    onClosed();
  })();
}
