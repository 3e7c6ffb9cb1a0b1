/**
 * SIGKILL for a process and everything it started. A capsule runs its tools, hooks and harness in
 * process groups of their own (so a cancel can stop a whole pipeline: src/tools/shell.ts), which
 * means a SIGKILL to `mur run` alone leaves them running, reparented to PID 1 — a `bash` busy loop
 * from one test then slows every test after it. The tree is read from /proc before anything is
 * killed, so nothing is lost to reparenting; each descendant's process group is killed too, which
 * also takes grandchildren that a dying parent would hand to PID 1.
 */

type Stat = { pid: number; ppid: number; pgrp: number };

function readStat(pid: number): Stat | undefined {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses: split after the last ')'.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, ppid: Number(rest[1]), pgrp: Number(rest[2]) };
  } catch {
    return undefined; // gone, or not Linux
  }
}

/** Every live descendant of `root` (children, their children, …), read from /proc now. */
export function descendants(root: number): Stat[] {
  const all: Stat[] = [];
  try {
    for (const e of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      const s = readStat(Number(e.name));
      if (s) all.push(s);
    }
  } catch {
    return [];
  }
  const out: Stat[] = [];
  const frontier = [root];
  const seen = new Set([root]);
  while (frontier.length > 0) {
    const parent = frontier.pop()!;
    for (const s of all) {
      if (s.ppid === parent && !seen.has(s.pid)) {
        seen.add(s.pid);
        out.push(s);
        frontier.push(s.pid);
      }
    }
  }
  return out;
}

function kill(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Kills `pid`, its descendants and their process groups (never the test's own group). */
export function killTree(pid: number, signal: Deno.Signal = "SIGKILL"): void {
  const tree = descendants(pid);
  const own = readStat(Deno.pid)?.pgrp;
  kill(pid, signal);
  const groups = new Set<number>();
  for (const s of tree) {
    kill(s.pid, signal);
    if (s.pgrp > 1 && s.pgrp !== own) groups.add(s.pgrp);
  }
  for (const g of groups) kill(-g, signal);
}
