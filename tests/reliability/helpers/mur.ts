/**
 * `mur run --json` for the reliability suites: a capsule (tests/helpers/capsule.ts, started by
 * the one launcher, tests/helpers/mur.ts) with `MURMUR_DEBUG_SUBSCRIPTIONS` on, so its stderr
 * says the live subscription count, and waits on stderr lines (that count, warnings) while it
 * runs.
 */
import {
  type Capsule,
  type CapsuleOptions,
  type Ready,
  startCapsule,
} from "../../helpers/capsule.ts";

export type MurOptions = CapsuleOptions;

export interface Mur {
  ready: Ready;
  dir: string;
  home: string;
  port: number;
  base: string;
  pid: number;
  proc: Deno.ChildProcess;
  /** stderr's lines so far (the array grows as they arrive). */
  stderrLines: string[];
  stdoutText(): string;
  /** Resolves with the first stderr line (past or future) matching, or rejects after `ms`. */
  waitStderr(pred: (line: string) => boolean, ms: number, from?: number): Promise<string>;
  /** The live subscription count from the last `debug: subscriptions <n>` line (0 before any). */
  subscriptions(): number;
  /** Waits until the live subscription count is `n`; throws with the last count after `ms`. */
  waitSubscriptions(n: number, ms: number): Promise<void>;
  rpc(method: string, params?: unknown, token?: string): Promise<Record<string, unknown>>;
  alive(): boolean;
  status: Promise<Deno.CommandStatus>;
  kill(signal?: Deno.Signal): void;
  /** SIGKILL if running, wait, remove the folder (unless it was given as `dir`). */
  close(): Promise<void>;
}

export async function startMur(o: MurOptions): Promise<Mur> {
  const cap: Capsule = await startCapsule({
    readyMs: 30_000,
    ...o,
    env: { MURMUR_DEBUG_SUBSCRIPTIONS: "1", ...o.env },
  });
  const { mur } = cap;
  const subscriptions = () => {
    for (let i = mur.err.lines.length - 1; i >= 0; i--) {
      const m = /^debug: subscriptions (\d+)$/.exec(mur.err.lines[i]);
      if (m) return Number(m[1]);
    }
    return 0; // no debug line yet: nothing ever subscribed
  };
  return {
    ready: cap.ready,
    dir: cap.dir,
    home: cap.home,
    port: Number(cap.ready.url.split(":")[1]),
    base: cap.base,
    pid: cap.ready.pid,
    proc: cap.proc,
    stderrLines: mur.err.lines,
    stdoutText: () => mur.out.lines.join("\n"),
    waitStderr: (pred, ms, from = 0) => mur.err.find(pred, ms, from),
    subscriptions,
    async waitSubscriptions(n, ms) {
      const end = Date.now() + ms;
      while (subscriptions() !== n) {
        if (Date.now() > end) {
          throw new Error(
            `live subscriptions stayed at ${subscriptions()}, not ${n}, for ${ms} ms`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async rpc(method, params = {}, token) {
      const res = await fetch(cap.base + "/", {
        method: "POST",
        signal: AbortSignal.timeout(15_000),
        headers: {
          "content-type": "application/json",
          "a2a-version": "1.0",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return await res.json();
    },
    alive: mur.alive,
    status: mur.status,
    kill: mur.kill,
    close: () => cap.close(),
  };
}

/** Is a process with this pid still there (and not a zombie)? */
export function pidAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

export async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  ms: number,
  stepMs = 50,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
