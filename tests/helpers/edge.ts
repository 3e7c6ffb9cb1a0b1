/**
 * Test helper: a real `mur edge` process on a free port, reading one Redis; its JSON readiness
 * line gives its address. Killed by its pid.
 */
import { MAIN } from "./capsule.ts";

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
  const proc = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "edge", "--redis", redisUrl, "--port", "0", ...args],
    env: { NO_COLOR: "1", MURMUR_HEARTBEAT_MS: "15000", ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  let soFar = "";
  const stderr = (async () => {
    for await (const chunk of proc.stderr.pipeThrough(new TextDecoderStream())) soFar += chunk;
    return soFar;
  })();
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const timer = setTimeout(() => {
    try {
      proc.kill("SIGKILL");
    } catch { /* gone */ }
  }, 20_000);
  while (!buf.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) {
      clearTimeout(timer);
      throw new Error(`mur edge exited before its readiness line:\n${await stderr}`);
    }
    buf += value;
  }
  clearTimeout(timer);
  reader.cancel().catch(() => {});
  const ready = JSON.parse(buf.slice(0, buf.indexOf("\n"))) as { edge: string; pid: number };
  let killed: Promise<void> | null = null;
  return {
    url: ready.edge,
    pid: ready.pid,
    proc,
    stderr,
    stderrSoFar: () => soFar,
    kill(signal: Deno.Signal = "SIGKILL") {
      killed ??= (async () => {
        try {
          proc.kill(signal);
        } catch { /* gone */ }
        await proc.status;
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
