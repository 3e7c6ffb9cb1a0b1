/**
 * Test helper: a real `mur edge` process on a free port, reading one Redis, started by the one
 * launcher (mur.ts); its JSON readiness line gives its address. Killed by its pid.
 */
import { startMur } from "./mur.ts";

export interface EdgeProc {
  url: string;
  pid: number;
  proc: Deno.ChildProcess;
  /** stderr, once the process has ended. */
  stderr: Promise<string>;
  /** What it has written to stderr so far. */
  stderrSoFar(): string;
  kill(signal?: Deno.Signal): Promise<void>;
}

export async function startEdgeProc(
  redisUrl: string,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<EdgeProc> {
  const mur = await startMur({
    args: ["edge", "--redis", redisUrl, "--port", "0", ...args],
    env: { NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "15000", ...env },
    readyMs: 20_000,
  });
  const ready = mur.ready as { edge: string; pid: number };
  let killed: Promise<void> | null = null;
  return {
    url: ready.edge,
    pid: ready.pid,
    proc: mur.proc,
    stderr: mur.err.done.then(() => mur.err.text()),
    stderrSoFar: () => mur.err.text(),
    kill(signal: Deno.Signal = "SIGKILL") {
      killed ??= (async () => {
        mur.kill(signal);
        await mur.status;
        if (signal === "SIGKILL") await mur.close();
      })();
      return killed;
    },
  };
}

/**
 * The session's URL on the edge, once the edge finds it in Redis (its card answers): a capsule
 * publishes after its readiness line, so an edge knows a session a moment after its door does.
 */
export async function sessionOn(edge: EdgeProc, sessionId: string): Promise<string> {
  const at = `${edge.url}/sessions/${sessionId}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await fetch(`${at}/.well-known/agent-card.json`);
    await r.body?.cancel();
    if (r.status === 200) return at;
    if (Date.now() > deadline) throw new Error(`${sessionId} never appeared on ${edge.url}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
