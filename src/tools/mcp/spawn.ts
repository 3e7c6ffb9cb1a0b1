/**
 * The one place mur starts a stdio MCP server's process (docs/mcp.md). Every server of a capsule
 * is spawned here and nowhere else, so a wrapper that contains the processes mur starts for a
 * capsule (`containedCommand`, src/containment/spawn.ts, with the session's policy) is applied to
 * all of them here, as `spawnCaptured` applies it to tools and hooks. The server leads
 * its own process group (src/tools/group_leader.ts), tracked so a second signal to `mur run`
 * kills it (src/process_groups.ts).
 */
import { trackGroup } from "../../process_groups.ts";
import { groupLeaderSpawn } from "../group_leader.ts";
import { containedCommand } from "../../containment/spawn.ts";
import type { ContainmentPolicy } from "../../containment/policy.ts";

export interface McpSpawnRequest {
  /** The program (absolute, or a bare name looked up on `env.PATH`) and its arguments. */
  argv: string[];
  cwd: string;
  /** The whole environment of the server (nothing else of mur's is inherited). */
  env: Record<string, string>;
  /** The session's containment (docs/containment.md); absent or `advisory`: unconfined. */
  containment?: ContainmentPolicy;
}

/** Starts the server with stdin, stdout and stderr piped. Throws as `Deno.Command` does. */
export function spawnMcpServer(r: McpSpawnRequest): Deno.ChildProcess {
  const [program, ...args] = r.argv;
  const cmd = containedCommand(r.containment, program, args, r.cwd);
  const leader = groupLeaderSpawn(cmd.program, cmd.args, r.env, true);
  const child = new Deno.Command(leader.program, {
    args: leader.args,
    cwd: r.cwd,
    env: r.env,
    clearEnv: true,
    detached: leader.detached,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  trackGroup(child.pid, child.status);
  return child;
}

/** SIGTERM then, after `graceMs`, SIGKILL to the server's group; resolves when it has exited. */
export async function stopMcpServer(child: Deno.ChildProcess, graceMs = 2000): Promise<void> {
  const signal = (sig: Deno.Signal) => {
    try {
      Deno.kill(-child.pid, sig);
    } catch {
      // Already gone.
    }
  };
  signal("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const exited = await Promise.race([
    child.status.then(() => true),
    new Promise<false>((r) => (timer = setTimeout(() => r(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!exited) {
    signal("SIGKILL");
    await child.status;
  }
}
