/**
 * `mur run --json` as a subprocess for the reliability suites: like tests/helpers/capsule.ts,
 * but stderr is read line by line while the process runs (the `debug: subscriptions <n>` line,
 * warnings), and the process can be started under a wrapper or with extra arguments.
 */
import { MAIN, type Ready, writeCapsule } from "../../helpers/capsule.ts";
import { killTree } from "../../helpers/kill_tree.ts";

export interface MurOptions {
  manifest: Record<string, unknown>;
  script?: Record<string, unknown>;
  files?: Record<string, string>;
  args?: string[];
  env?: Record<string, string>;
  /** An existing capsule folder (written by an earlier start) instead of a new one. */
  dir?: string;
  denoArgs?: string[];
  /** The entry script (default main.ts): a wrapper can instrument the process. */
  main?: string;
  /** ms to wait for the readiness line. */
  readyMs?: number;
}

export interface Mur {
  ready: Ready;
  dir: string;
  home: string;
  port: number;
  base: string;
  pid: number;
  proc: Deno.ChildProcess;
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
  /** SIGKILL if running, wait, remove the folder. */
  close(): Promise<void>;
}

export async function startMur(o: MurOptions): Promise<Mur> {
  const dir = o.dir ?? await writeCapsule(o);
  const home = `${dir}/.murmur-home`;
  const proc = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...(o.denoArgs ?? []),
      o.main ?? MAIN,
      "run",
      "--manifest",
      dir,
      "--json",
      ...(o.args ?? []),
    ],
    env: {
      MURMUR_HOME: home,
      MURMUR_HEARTBEAT_MS: "15000",
      MURMUR_DEBUG_SUBSCRIPTIONS: "1",
      NO_COLOR: "1",
      ...o.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = proc.status.then((s) => {
    exited = true;
    return s;
  });
  const stderrLines: string[] = [];
  const listeners = new Set<() => void>();
  const pump = async (stream: ReadableStream<Uint8Array>, onLine: (l: string) => void) => {
    let buf = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    }
    if (buf) onLine(buf);
  };
  let subs = 0; // no debug line yet: nothing ever subscribed
  const stderrDone = pump(proc.stderr, (l) => {
    stderrLines.push(l);
    const m = /^debug: subscriptions (\d+)$/.exec(l);
    if (m) subs = Number(m[1]);
    for (const f of listeners) f();
  });
  const stdoutLines: string[] = [];
  let gotReady!: (line: string | null) => void;
  const readyLine = new Promise<string | null>((r) => (gotReady = r));
  const stdoutDone = pump(proc.stdout, (l) => {
    if (stdoutLines.length === 0) gotReady(l);
    stdoutLines.push(l);
  }).then(() => gotReady(null));
  const killer = setTimeout(() => kill("SIGKILL"), o.readyMs ?? 30_000);
  const first = await readyLine;
  clearTimeout(killer);
  function kill(signal: Deno.Signal = "SIGKILL") {
    // A SIGKILL takes the tools' own process groups too (tests/helpers/kill_tree.ts).
    if (signal === "SIGKILL") return killTree(proc.pid);
    try {
      proc.kill(signal);
    } catch { /* gone */ }
  }
  if (first === null) {
    await status;
    await stderrDone.catch(() => {});
    throw new Error(`mur run ended before its readiness line:\n${stderrLines.join("\n")}`);
  }
  const ready = JSON.parse(first) as Ready;
  const port = Number(ready.url.split(":")[1]);
  const base = `http://127.0.0.1:${port}`;
  const waitStderr = (pred: (l: string) => boolean, ms: number, from = 0) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const hit = stderrLines.slice(from).find(pred);
        if (hit !== undefined) {
          done();
          resolve(hit);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `no matching stderr line in ${ms} ms; stderr:\n${stderrLines.slice(-20).join("\n")}`,
          ),
        );
      }, ms);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return {
    ready,
    dir,
    home,
    port,
    base,
    pid: ready.pid,
    proc,
    stderrLines,
    stdoutText: () => stdoutLines.join("\n"),
    waitStderr,
    subscriptions: () => subs,
    async waitSubscriptions(n, ms) {
      const end = Date.now() + ms;
      while (subs !== n) {
        if (Date.now() > end) {
          throw new Error(`live subscriptions stayed at ${subs}, not ${n}, for ${ms} ms`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async rpc(method, params = {}, token) {
      const res = await fetch(base + "/", {
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
    alive: () => !exited,
    status,
    kill,
    async close() {
      kill("SIGKILL");
      await status;
      await Promise.all([stderrDone, stdoutDone]).catch(() => {});
      if (!o.dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
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
