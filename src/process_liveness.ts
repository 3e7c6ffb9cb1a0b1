/**
 * Whether a process still holds a pid, and when that process started: a pid can be reused, so a
 * record that names a pid (a running-session record, a workdir lock) is checked against both.
 * Linux reads /proc/<pid>/stat; elsewhere only aliveness is known (signal 0).
 */

async function readProcStat(pid: number): Promise<string[] | null> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // The command name (field 2) is in parentheses and may hold spaces: split after its `)`.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest; // rest[0] is field 3 (state)
  } catch {
    return null;
  }
}

const hasProc = (() => {
  try {
    return Deno.statSync("/proc/self/stat").isFile;
  } catch {
    return false;
  }
})();

/** Whether a process holds `pid` (a zombie does not count: it has exited). */
export async function pidAlive(pid: number): Promise<boolean> {
  if (hasProc) {
    const fields = await readProcStat(pid);
    if (!fields) return false;
    return fields[0] !== "Z" && fields[0] !== "X";
  }
  try {
    // node:process.kill with signal 0 probes without signalling.
    const { kill } = await import("node:process");
    kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

/** The start-time token of `pid`, or null where it cannot be read (non-Linux, gone). */
export async function processStart(pid: number): Promise<string | null> {
  if (!hasProc) return null;
  const fields = await readProcStat(pid);
  return fields ? (fields[19] ?? null) : null; // field 22 = starttime
}
