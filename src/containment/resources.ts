/**
 * `capabilities.resources` (runtime facts §1.7): the limits a contained process runs under, as
 * rlimits through prlimit(1), and a pids cgroup where the host lets mur make one (root: RLIMIT_NPROC
 * does not bind uid 0, so the group is what stops a fork bomb there). docs/containment.md
 * "Resources" says which key becomes what.
 */

export interface Resources {
  /** RLIMIT_NPROC. */
  maxProcesses: number;
  /** RLIMIT_NOFILE. */
  maxOpenFiles: number;
  /** RLIMIT_FSIZE, bytes. */
  maxFileSize: number;
  /** RLIMIT_CPU, seconds. */
  cpuSeconds: number;
  /** RLIMIT_DATA, bytes (private writable memory: what a memory bomb takes). */
  memory: number;
  /** The cgroup's pids.max. */
  pids: number;
}

const GiB = 1024 ** 3;

/** The facts' defaults (§1.7 `resources.*`). */
export const RESOURCE_DEFAULTS: Resources = {
  maxProcesses: 128,
  maxOpenFiles: 1024,
  maxFileSize: 4 * GiB,
  cpuSeconds: 3600,
  memory: 2 * GiB,
  pids: 256,
};

/** The manifest keys under `capabilities.resources`, by field. */
export const RESOURCE_KEYS: Record<keyof Resources, string> = {
  maxProcesses: "max_processes",
  maxOpenFiles: "max_open_files",
  maxFileSize: "max_file_size",
  cpuSeconds: "cpu_seconds",
  memory: "memory",
  pids: "pids",
};

/** prlimit(1)'s arguments for these limits (soft = hard, so a tool cannot raise them). */
export function prlimitArgs(r: Resources): string[] {
  return [
    `--nproc=${r.maxProcesses}`,
    `--nofile=${r.maxOpenFiles}`,
    `--fsize=${r.maxFileSize}`,
    `--cpu=${r.cpuSeconds}`,
    `--data=${r.memory}`,
  ];
}

/**
 * A pids cgroup for the session's contained processes, or null where the host gives none to
 * this user (cgroup v2 with the pids controller at its root, else the v1 pids hierarchy).
 * Returns the group's `cgroup.procs` and a remover.
 */
export function makePidsGroup(
  name: string,
  pids: number,
): { procs: string; remove(): void } | null {
  for (const base of pidsHierarchies()) {
    const dir = `${base}/${name}`;
    try {
      Deno.mkdirSync(dir);
    } catch {
      continue;
    }
    try {
      Deno.writeTextFileSync(`${dir}/pids.max`, String(pids));
      return {
        procs: `${dir}/cgroup.procs`,
        remove: () => {
          try {
            Deno.removeSync(dir);
          } catch {
            // still holds a process (a detached shell released at the end): the kernel keeps it
          }
        },
      };
    } catch {
      try {
        Deno.removeSync(dir);
      } catch {
        // leave it
      }
    }
  }
  return null;
}

function pidsHierarchies(): string[] {
  const out: string[] = [];
  try {
    const v2 = Deno.readTextFileSync("/sys/fs/cgroup/cgroup.subtree_control");
    if (v2.split(/\s+/).includes("pids")) out.push("/sys/fs/cgroup");
  } catch {
    // not a v2 root
  }
  try {
    if (Deno.statSync("/sys/fs/cgroup/pids/cgroup.procs").isFile) out.push("/sys/fs/cgroup/pids");
  } catch {
    // no v1 pids
  }
  return out;
}
