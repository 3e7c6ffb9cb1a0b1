/**
 * Finding a test's process from the host. A process mur starts for a capsule may run in its own
 * pid namespace (docs/containment.md: `scoped` and `sealed`), where the pid it can write down
 * (`echo $$`) names nothing on the host. A test gives the process a marker in its argv instead
 * (`sleep 1000 <marker>`: GNU sleep adds its arguments) and looks it up in the host's /proc.
 */

/** A marker no other process has: a small decimal that `sleep` adds to its time. */
export function sleepMarker(): string {
  return `0.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

/** The host pids whose argv holds `marker` as a whole argument. */
export function hostPidsWith(marker: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    let argv: string[];
    try {
      argv = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0");
    } catch {
      continue; // gone meanwhile
    }
    if (argv.includes(marker)) pids.push(Number(e.name));
  }
  return pids;
}
