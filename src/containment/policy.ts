/**
 * What one session's contained processes run under (docs/containment.md): the class the launch
 * settled on and the host paths each mount rule names, all absolute. Built once at launch
 * (./launch.ts); every spawn for the capsule hands it to `containedCommand` (./spawn.ts).
 */
import type { ContainmentClass } from "./classes.ts";
import type { Resources } from "./resources.ts";
import type { Bridge } from "./net_bridge.ts";

export interface ContainmentPolicy {
  /** The class the processes run under. `advisory`: no wrapper at all. */
  cls: ContainmentClass;
  /** The bubblewrap program. */
  bwrap: string;
  /** prlimit(1), which sets `resources` inside the wrapper. */
  prlimit: string;
  /** The session's workdir (every process's cwd is in it). */
  workdir: string;
  /** `filesystem.scope`: the only paths mounted read-write. */
  writable: string[];
  /** `filesystem.read_only` subtrees (read-only even inside `writable`). */
  readOnly: string[];
  /** Hidden behind an empty tmpfs: the operator's HOME, mur's home, other sessions' folders. */
  hidden: string[];
  /** Shown again read-only after hiding (the capsule's own folder: its tool programs). */
  shown: string[];
  /** Own network namespace with nothing in it (sealed; scoped with `network.allow: []`). */
  noNetwork: boolean;
  /** `network.allow` forwarded into the sandbox (./net_bridge.ts); empty: none. */
  bridges: Bridge[];
  /** The sandbox's /etc/hosts (names of allowed hosts), or null. */
  hostsFile: string | null;
  /** socat(1), which listens for the bridges inside. */
  socat: string | null;
  /** The compiled seccomp filter's file (outside every sandbox's view), or null. */
  seccompFile: string | null;
  resources: Resources;
  /** The pids cgroup's `cgroup.procs` to join, or null. */
  cgroupProcs: string | null;
}

/** `policy` with more workdir-relative read-only subtrees (a tool artifact's own). */
export function withReadOnly(
  policy: ContainmentPolicy | undefined,
  subtrees: string[],
  workdir: string,
): ContainmentPolicy | undefined {
  if (!policy || subtrees.length === 0) return policy;
  const abs = subtrees.map((s) => (s === "." ? workdir : `${workdir}/${s}`));
  return { ...policy, readOnly: [...policy.readOnly, ...abs] };
}
