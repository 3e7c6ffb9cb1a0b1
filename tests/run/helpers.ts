/**
 * `mur run` as a real subprocess in its human (or any) output mode: a capsule written to a temp
 * dir (tests/helpers/capsule.ts writeCapsule), its own MURMUR_HOME, its folder as the cwd, started
 * by the one launcher (tests/helpers/mur.ts: lines as they arrive, bounded waits, kill by pid).
 */
import { MAIN, writeCapsule } from "../helpers/capsule.ts";
import { type Mur, type MurEnd, startMur } from "../helpers/mur.ts";

export { MAIN };

export interface RunOptions {
  manifest: Record<string, unknown>;
  script?: Record<string, unknown>;
  files?: Record<string, string>;
  /** Arguments after `run --manifest <dir>`. */
  args?: string[];
  env?: Record<string, string>;
  /** Pass the manifest as `--manifest <dir>/murmur.yaml` instead of the folder. */
  manifestFile?: boolean;
  /** Pass this as `--manifest` instead (relative to the capsule's dir, the process's cwd). */
  manifestArg?: string;
  /** The script `deno run` starts instead of main.ts (a test's wrapper around the same entry). */
  entry?: string;
  /** Runs in the capsule dir (the process's cwd) before mur run starts. */
  before?: (dir: string) => Promise<void>;
}

export type RunEnd = MurEnd;

export interface Run {
  dir: string;
  home: string;
  child: Deno.ChildProcess;
  pid: number;
  /** The process (tests/helpers/mur.ts): stdout and stderr as they arrive. */
  mur: Mur;
  /** The next stdout line (null at end of stream); throws after `ms`. */
  line(ms?: number): Promise<string | null>;
  /** Resolves when the process has exited; SIGKILL and a rejection after `ms`. */
  end(ms?: number): Promise<RunEnd>;
  signal(sig: Deno.Signal): void;
  /** Kills the process if it still runs and removes the temp dir. */
  close(): Promise<void>;
}

export async function spawnRun(o: RunOptions): Promise<Run> {
  const dir = await writeCapsule({ manifest: o.manifest, script: o.script, files: o.files });
  const home = `${dir}/.murmur-home`;
  const manifestArg = o.manifestArg ?? (o.manifestFile ? `${dir}/murmur.yaml` : dir);
  await o.before?.(dir);
  const mur = await startMur({
    args: ["run", "--manifest", manifestArg, ...(o.args ?? [])],
    env: { MURMUR_HOME: home, NO_COLOR: "1", ...o.env },
    entry: o.entry,
    cwd: dir,
    removeOnClose: [dir],
  });
  return {
    dir,
    home,
    child: mur.proc,
    pid: mur.pid,
    mur,
    line: (ms = 30_000) => mur.out.next(ms),
    end: (ms) => mur.end(ms),
    signal: (sig) => mur.kill(sig),
    close: () => mur.close(),
  };
}

/** Runs `mur run …` to its end (bounded) and cleans up; for launches expected to end by themselves. */
export async function runToEnd(o: RunOptions, ms = 30_000): Promise<RunEnd & { dir: string }> {
  const run = await spawnRun(o);
  try {
    const end = await run.end(ms);
    return { ...end, dir: run.dir };
  } finally {
    await run.close();
  }
}

export type TraceLine = Record<string, unknown> & {
  event_type: string;
  event_id: string;
  parent_id: string | null;
  session_id: string;
  timestamp: number;
};

export async function readTrace(path: string): Promise<TraceLine[]> {
  const text = await Deno.readTextFile(path);
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

export function ofType(lines: TraceLine[], type: string): TraceLine[] {
  return lines.filter((l) => l.event_type === type);
}

/** The files under `$MURMUR_HOME/running/` (none when the folder does not exist). */
export async function runningFiles(home: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(`${home}/running`)) out.push(e.name);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return out.sort();
}

export { until } from "../helpers/until.ts";

/** One JSON-RPC call to a door at `localhost:<port>`. */
export async function rpc(
  url: string,
  method: string,
  params: unknown = {},
): Promise<Record<string, unknown>> {
  const res = await fetch(`http://${url.replace("localhost", "127.0.0.1")}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  return await res.json();
}

/** The tasks ListTasks returns (id, state). */
export async function listTasks(url: string): Promise<{ id: string; state: string }[]> {
  const r = await rpc(url, "ListTasks", {});
  const tasks = (r.result as { tasks: { id: string; status: { state: string } }[] }).tasks;
  return tasks.map((t) => ({ id: t.id, state: t.status.state }));
}

/** A capsule manifest on the scripted driver (the script is added by writeCapsule). */
export function manifest(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "runtest", version: "0.3.0", ...extra };
}

/** `localhost:<port>` → the port. */
export function portOf(url: string): number {
  const m = /^localhost:(\d+)$/.exec(url);
  if (!m) throw new Error(`not a localhost:<port> url: ${url}`);
  return Number(m[1]);
}
