/**
 * The one wrapper every process mur starts for a capsule goes through (docs/containment.md
 * "Adding a process"): shell, command and packaged tools, hooks, on-stage hooks, detached shells
 * and `done_check` all pass their program here, through `spawnCaptured`'s `containment` option
 * (src/tools/process.ts). Whoever adds a new kind of process (an MCP server over stdio) calls
 * `containedCommand` with the session's policy and spawns what it returns, with the environment it
 * meant to give (cleared of mur's own: `clearEnv`).
 *
 * Under `scoped`/`sealed` the program runs as:
 *   sh -c '<open the filter on fd 9; join the pids group>; exec "$@"' \
 *     prlimit <resources> -- bwrap <mounts, namespaces, --seccomp 9> -- <program> <args>
 * sh is there only to open the filter file on a descriptor (Deno.Command passes none beyond 0-2)
 * and to put itself in the cgroup before anything forks.
 */
import { bwrapArgs } from "./bwrap.ts";
import type { ContainmentPolicy } from "./policy.ts";
import { prlimitArgs } from "./resources.ts";
import { BRIDGE_SCRIPT } from "./net_bridge.ts";

const SECCOMP_FD = 9;

const SCRIPT = [
  `if [ "$0" != - ]; then exec ${SECCOMP_FD}<"$0" || exit 126; fi`,
  `if [ "$1" != - ]; then echo $$ > "$1" 2>/dev/null; fi`,
  `shift`,
  `exec "$@"`,
].join("\n");

export interface ContainedCommand {
  program: string;
  args: string[];
}

/**
 * The program and arguments that run `program args` under `policy` with `cwd` as its working
 * directory. No policy, or `advisory`: unchanged (today's behaviour, the parse-based checks only).
 */
export function containedCommand(
  policy: ContainmentPolicy | undefined,
  program: string,
  args: string[],
  cwd: string,
): ContainedCommand {
  if (!policy || policy.cls === "advisory") return { program, args };
  return {
    program: "/bin/sh",
    args: [
      "-c",
      SCRIPT,
      policy.seccompFile ?? "-",
      policy.cgroupProcs ?? "-",
      policy.prlimit,
      ...prlimitArgs(policy.resources),
      "--",
      policy.bwrap,
      ...bwrapArgs(policy, cwd, policy.seccompFile ? SECCOMP_FD : null),
      ...bridged(policy),
      program,
      ...args,
    ],
  };
}

/** The bridge script's part of the command line (net_bridge.ts), or nothing without bridges. */
function bridged(p: ContainmentPolicy): string[] {
  if (p.bridges.length === 0) return [];
  return [
    "/bin/sh",
    "-c",
    BRIDGE_SCRIPT,
    "mur-bridge",
    String(p.bridges.length),
    ...p.bridges.flatMap((b) => [b.alias, String(b.port), b.socket]),
    p.bwrap,
    p.seccompFile ? "9" : "-",
  ];
}
