/** Shared bits of the tools tests: a temp workdir and a ToolContext over it. */
import type { ToolContext } from "../../src/tools/types.ts";

export async function tempWorkdir(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "mur-tools-" }));
}

export function ctxFor(
  workdir: string,
  signal: AbortSignal = new AbortController().signal,
): ToolContext {
  return { workdir, taskId: "tsk_test", contextId: "ctx_test", signal };
}

/** Rejects when `p` takes longer than `ms`: every wait in these tests is bounded. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when a process with this pid exists and has not ended (a zombie has ended). */
export function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
  } catch {
    return false;
  }
  try {
    // `pid (comm) S …`: the state letter follows the last ')'.
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}
