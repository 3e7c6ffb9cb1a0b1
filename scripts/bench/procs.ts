/**
 * Processes the bench starts: each spawned through `taskset` onto a chosen core when the
 * machine has one to spare, each waited for by its one readiness line on stdout, each
 * recorded so `killAll` ends it by pid — at the end, on failure and on Ctrl-C.
 */
import { entryArgs } from "../../src/module_root.ts";

/** What follows `deno run -A` for an entry: a bundle runs with no config file, as the shim runs it. */
export { entryArgs };

export interface Spawned {
  name: string;
  pid: number;
  child: Deno.ChildProcess;
  /** The readiness line, parsed. */
  ready: Record<string, unknown>;
  /** Spawn → readiness line, ms. */
  startMs: number;
  /** What the process wrote on stderr so far (bounded), for "not available" notes. */
  stderr(): string;
}

const live = new Map<number, Deno.ChildProcess>();

/** mur from source: what `deno task mur` runs. */
export const SOURCE_MAIN = new URL("../../main.ts", import.meta.url).pathname;

/**
 * mur's entry point as every bench process runs it: the bundle the installed `mur` runs
 * (scripts/bundle.ts; scripts/bench/main.ts builds it first when it is stale).
 */
export const MAIN = new URL("../../.cache/bundle/main.js", import.meta.url).pathname;

/**
 * `deno run -A [denoFlags] <entry> run --manifest M --json --workdir W [extra]`: the one command
 * line every bench `mur run` is started with (`entry` the bundle's main.js unless told).
 */
export function murCmd(
  manifest: string,
  workdir: string,
  extra: string[] = [],
  denoFlags: string[] = [],
  entry: string = MAIN,
): string[] {
  return [
    Deno.execPath(),
    "run",
    "-A",
    ...denoFlags,
    ...entryArgs(entry),
    "run",
    "--manifest",
    manifest,
    "--json",
    "--workdir",
    workdir,
    ...extra,
  ];
}

export function cores(): number {
  return navigator.hardwareConcurrency ?? 1;
}

let tasksetOk: boolean | null = null;
/** Whether `taskset` exists and this machine has two cores to split between server and load. */
export function canPin(): boolean {
  if (tasksetOk === null) {
    try {
      const r = new Deno.Command("taskset", {
        args: ["-c", "0", "true"],
        stdout: "null",
        stderr: "null",
      })
        .outputSync();
      tasksetOk = r.success && cores() >= 2;
    } catch {
      tasksetOk = false;
    }
  }
  return tasksetOk;
}

export interface SpawnOptions {
  name: string;
  cmd: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Core to pin to (ignored when pinning is not possible). */
  core?: number;
  /** Give up waiting for the readiness line after this long. */
  readyTimeoutMs: number;
  /** Keep stdin open as a pipe (the load generator's command channel). */
  stdin?: boolean;
  /**
   * Lines on stdout that are not the readiness line (V8's `--trace-gc` prints there): passed
   * over while waiting for it, and handed to this.
   */
  skipLine?: (line: string) => boolean;
}

export class SpawnError extends Error {
  constructor(message: string, readonly stderr: string) {
    super(message);
  }
}

/** Spawns and waits for the first stdout line, which must be JSON. */
export async function spawnReady(
  o: SpawnOptions,
): Promise<Spawned & { lines: AsyncIterator<string> }> {
  const argv = o.core !== undefined && canPin()
    ? ["taskset", "-c", String(o.core), ...o.cmd]
    : o.cmd;
  const t0 = performance.now();
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: o.cwd,
    env: o.env,
    stdin: o.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  live.set(child.pid, child);
  let err = "";
  (async () => {
    const dec = new TextDecoder();
    try {
      for await (const c of child.stderr) {
        if (err.length < 16384) err += dec.decode(c, { stream: true });
      }
    } catch { /* closed */ }
  })();
  const lines = readLines(child.stdout);
  const firstLine = async () => {
    for (;;) {
      const r = await lines.next();
      if (r.done || !o.skipLine?.(r.value)) return r;
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const first = await Promise.race([
    firstLine(),
    child.status.then((s) => ({ exited: s.code })),
    new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), o.readyTimeoutMs))),
  ]);
  clearTimeout(timer);
  const startMs = performance.now() - t0;
  const fail = (why: string): never => {
    kill(child.pid);
    throw new SpawnError(`${o.name}: ${why}`, err);
  };
  if (first === "timeout") fail(`no readiness line within ${o.readyTimeoutMs} ms`);
  if (typeof first === "object" && "exited" in first) {
    // Give stderr a moment to arrive before reporting it.
    await new Promise((r) => setTimeout(r, 50));
    fail(`exited ${first.exited} before its readiness line`);
  }
  const res = first as IteratorResult<string>;
  if (res.done) fail("closed stdout before its readiness line");
  let ready: Record<string, unknown> = {};
  try {
    ready = JSON.parse(res.value as string);
  } catch {
    fail(`readiness line is not JSON: ${JSON.stringify(res.value)}`);
  }
  return { name: o.name, pid: child.pid, child, ready, startMs, stderr: () => err, lines };
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const dec = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    rest += dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf("\n")) !== -1) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  if (rest) yield rest;
}

/** SIGKILL one process the bench started, by pid. */
export function kill(pid: number): void {
  const child = live.get(pid);
  if (!child) return;
  live.delete(pid);
  try {
    child.kill("SIGKILL");
  } catch { /* already gone */ }
  // Close our ends so the runtime does not wait on them.
  child.stdout.cancel().catch(() => {});
  child.status.catch(() => {});
}

/** Kill every process still recorded. */
export function killAll(): void {
  for (const pid of [...live.keys()]) kill(pid);
}

/** CPU time (user + system) a pid has used, in ms (Linux /proc; clock ticks of 10 ms), or NaN. */
export function cpuMs(pid: number): number {
  try {
    const f = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/**
 * CPU time a pid's threads have been on a CPU, in µs (Linux /proc/<pid>/task/<tid>/schedstat,
 * nanoseconds; threads that already exited are not counted), or NaN. Unlike /proc/<pid>/stat's
 * 10 ms ticks, fine enough for a flood that costs the raw server 20 ms.
 */
export function cpuUs(pid: number): number {
  try {
    let ns = 0;
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      ns += Number(Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/schedstat`).split(" ")[0]);
    }
    return ns / 1000;
  } catch {
    return NaN;
  }
}

/** Resident set size of a pid in bytes (Linux /proc), or NaN. */
export function rssBytes(pid: number): number {
  try {
    const s = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = /VmRSS:\s+(\d+) kB/.exec(s);
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Samples a pid's RSS every `everyMs` until stopped; returns the peak. */
export function sampleRss(pid: number, everyMs = 20): { stop(): number } {
  let peak = rssBytes(pid);
  const id = setInterval(() => {
    const v = rssBytes(pid);
    if (v > peak || Number.isNaN(peak)) peak = v;
  }, everyMs);
  return {
    stop() {
      clearInterval(id);
      const v = rssBytes(pid);
      if (v > peak) peak = v;
      return peak;
    },
  };
}
