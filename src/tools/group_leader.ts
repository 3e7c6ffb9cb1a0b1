/**
 * How a child of mur becomes the leader of its own session and process group (so a kill of the
 * group reaches what it forked: src/process_groups.ts) without mur forking.
 *
 * `Deno.Command`'s `detached: true` calls setsid() in a pre-exec hook, and a pre-exec hook rules
 * out posix_spawn: the runtime forks, and a fork copies the page tables of mur's whole heap, so
 * every spawn costs more the longer a session runs (measured on a 2-core Linux machine, deno
 * 2.9: 4.7 ms per spawn at 40 MiB RSS, 8.4 ms at 350 MiB; without `detached`, posix_spawn
 * (clone with CLONE_VM|CLONE_VFORK): 0.5 ms and 0.7 ms). Instead, where util-linux's (or
 * busybox's) `setsid` program exists, it is spawned without `detached` — posix_spawn — and it
 * calls setsid() and execs the program in place: the same pid, the same new session and group.
 * It does not fork, as its child is never a group leader already.
 *
 * Only a program that is an absolute path to an executable file, or a bare name found so on
 * PATH, goes through `setsid`; anything else (a relative path, a name not found, no `setsid`
 * on the machine, as on macOS) is spawned with `detached: true` as before, so Deno's own
 * errors (NotFound, PermissionDenied) still reach the caller unchanged.
 */

const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid"];

function executable(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && st.mode !== null && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

let setsidPath: string | null | undefined;
/** The `setsid` program, or null when the machine has none (looked up once). */
export function setsidProgram(): string | null {
  if (setsidPath === undefined) {
    setsidPath = Deno.build.os === "linux" ? SETSID_PATHS.find((p) => executable(p)) ?? null : null;
  }
  return setsidPath;
}

/** `name` as an absolute path to an executable file, or null. */
function resolveExecutable(name: string, path: string | undefined): string | null {
  if (name.startsWith("/")) return executable(name) ? name : null;
  if (name.includes("/") || !path) return null;
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue;
    const candidate = `${dir}/${name}`;
    if (executable(candidate)) return candidate;
  }
  return null;
}

export interface LeaderSpawn {
  program: string;
  args: string[];
  /** True when the runtime must setsid() itself (a fork). */
  detached: boolean;
}

/**
 * What to hand `Deno.Command` so `program args` runs as a new session and group leader.
 * `env` is the child's environment as given to `Deno.Command`: its PATH (else mur's, unless
 * `clearEnv`) is where a bare name is looked up, as the runtime would.
 */
export function groupLeaderSpawn(
  program: string,
  args: string[],
  env: Record<string, string> | undefined,
  clearEnv: boolean | undefined,
): LeaderSpawn {
  const setsid = setsidProgram();
  if (setsid) {
    const path = env?.PATH ?? (clearEnv ? undefined : Deno.env.get("PATH"));
    const resolved = resolveExecutable(program, path);
    if (resolved) return { program: setsid, args: [resolved, ...args], detached: false };
  }
  return { program, args, detached: true };
}
