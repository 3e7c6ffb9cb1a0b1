/**
 * The one way the tests start mur: `deno run -A --quiet [deno flags] <entry> <mur args>` as a
 * real process. Its stdout and stderr are read line by line as they arrive (so a chatty process
 * never blocks on a full pipe, and a test can wait on a line), every wait is bounded, it is killed
 * by its pid with everything it started (kill_tree.ts), and what the test made for it is removed
 * in `close()`.
 *
 * Two uses, one launcher:
 * - a daemon (`mur run --json`, `mur run --roster --json`, `mur edge`): `readyMs` waits for its
 *   readiness line (the first stdout line, JSON) and kills it if none comes in time;
 * - a run to the end (`mur watch …`, `mur run --task …`, `mur validate`): `runMur`, or `end(ms)`
 *   on a started one.
 *
 * Folders with their own defaults wrap it thinly: a capsule written from a manifest
 * (capsule.ts `startCapsule`), the reliability suites' stderr watch (reliability/helpers/mur.ts),
 * the CLI's clean environment (cli/helpers.ts, cli/pipes.ts), `mur run` in its human output mode
 * (run/helpers.ts).
 */
import { killTree } from "./kill_tree.ts";
import { entryArgs } from "../../src/module_root.ts";

/**
 * The entry every test starts mur with: main.ts, or with `MUR_TEST_ENTRY=bundle` the bundle's
 * main.js (scripts/bundle.ts), which scripts/test.ts's "bundle tests" step runs a set of the
 * suites on (tests/build/bundle_suites.ts lists them).
 */
export const MAIN = entry(Deno.env.get("MUR_TEST_ENTRY"));

function entry(kind: string | undefined): string {
  if (kind === undefined || kind === "" || kind === "source") {
    return new URL("../../main.ts", import.meta.url).pathname;
  }
  if (kind !== "bundle") throw new Error(`MUR_TEST_ENTRY is 'source' or 'bundle', not '${kind}'`);
  const main = new URL("../../.cache/bundle/main.js", import.meta.url).pathname;
  try {
    Deno.statSync(main);
  } catch {
    throw new Error(`MUR_TEST_ENTRY=bundle: no ${main}; build it with \`deno task bundle\``);
  }
  return main;
}

export interface MurOptions {
  /** mur's own arguments, e.g. `["run", "--manifest", dir, "--json"]`. */
  args: string[];
  /** Added to the test's own environment (with `clearEnv`, all there is). */
  env?: Record<string, string>;
  /** Only `env`: nothing leaks in from the test's environment (baseEnv() has what deno needs). */
  clearEnv?: boolean;
  /** The script `deno run` starts instead of main.ts (a test's wrapper around the same entry). */
  entry?: string;
  /** `deno run` flags before the entry, e.g. `--v8-flags=--max-old-space-size=64`. */
  denoArgs?: string[];
  cwd?: string;
  /** Wait this long for the readiness line (the first stdout line, JSON); SIGKILL after it. */
  readyMs?: number;
  /** Leave stdout unread until this settles (a reader that stalls). */
  readStdoutAfter?: Promise<unknown>;
  /** Removed (recursively) by `close()`: the folders the test wrote for this process. */
  removeOnClose?: string[];
}

/** A command line in place of mur's own (a shell pipeline that runs mur, `script` for a pty). */
export interface ProcessOptions extends Omit<MurOptions, "args" | "entry" | "denoArgs"> {
  /** Its own session (setsid): a kill also takes the whole pipeline by its process group. */
  setsid?: boolean;
}

export interface MurEnd {
  code: number;
  signal: Deno.Signal | null;
  /** All of stdout, from the first byte. */
  stdout: string;
  stderr: string;
}

export interface Mur {
  proc: Deno.ChildProcess;
  pid: number;
  /** stdout, line by line as it arrives. */
  out: Lines;
  /** stderr, line by line as it arrives. */
  err: Lines;
  /** The readiness line, parsed (set when started with `readyMs`). */
  ready: Record<string, unknown> | undefined;
  status: Promise<Deno.CommandStatus>;
  alive(): boolean;
  /** The process's end and all it wrote; SIGKILL and a rejection (with its output) after `ms`. */
  end(ms?: number): Promise<MurEnd>;
  /** SIGKILL takes the tools' own process groups too (kill_tree.ts); other signals go to the pid. */
  kill(signal?: Deno.Signal): void;
  /** SIGKILL if running, wait for the end, remove `removeOnClose`. */
  close(): Promise<void>;
}

/** The command line that runs this checkout's mur: `deno run -A --quiet … main.ts <args>`. */
export function murArgv(
  args: string[],
  o: { entry?: string; denoArgs?: string[] } = {},
): string[] {
  return [
    Deno.execPath(),
    "run",
    "-A",
    "--quiet",
    ...(o.denoArgs ?? []),
    ...entryArgs(o.entry ?? MAIN),
    ...args,
  ];
}

/** Starts `mur <args>`; with `readyMs`, resolves once its readiness line is in. */
export async function startMur(o: MurOptions): Promise<Mur> {
  const mur = startProcess(murArgv(o.args, o), o);
  if (o.readyMs !== undefined) await readReady(mur, o.readyMs);
  return mur;
}

/** Runs `mur <args>` to its end (SIGKILL and a rejection after `ms`) and cleans up. */
export async function runMur(o: MurOptions, ms = 30_000): Promise<MurEnd> {
  const mur = await startMur(o);
  try {
    return await mur.end(ms);
  } finally {
    await mur.close();
  }
}

/** The environment variables a clean environment keeps (deno and tools need them). */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "DENO_DIR", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** The launcher itself, for any argv (mur's own through `startMur`). */
export function startProcess(argv: string[], o: ProcessOptions = {}): Mur {
  const [cmd, ...args] = o.setsid ? ["setsid", ...argv] : argv;
  const proc = new Deno.Command(cmd, {
    args,
    env: o.env,
    clearEnv: o.clearEnv,
    cwd: o.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = proc.status.then((s) => {
    exited = true;
    return s;
  });
  const out = new Lines(proc.stdout, o.readStdoutAfter);
  const err = new Lines(proc.stderr);
  const kill = (signal: Deno.Signal = "SIGKILL") => {
    if (o.setsid) signalPid(-proc.pid, signal);
    if (signal === "SIGKILL") killTree(proc.pid);
    else signalPid(proc.pid, signal);
  };
  let whole: Promise<MurEnd> | null = null;
  const finish = () =>
    whole ??= (async () => {
      const st = await status;
      await Promise.all([out.done, err.done]);
      return { code: st.code, signal: st.signal, stdout: out.text(), stderr: err.text() };
    })();
  const mur: Mur = {
    proc,
    pid: proc.pid,
    out,
    err,
    ready: undefined,
    status,
    alive: () => !exited,
    async end(ms = 30_000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          kill("SIGKILL");
          // What it wrote so far: a stray process may hold the pipes open after the kill.
          reject(
            new Error(
              `${argv.slice(-3).join(" ")}: not ended after ${ms} ms (killed)\n` +
                `stdout: ${out.text().slice(-2000)}\nstderr: ${err.text().slice(-2000)}`,
            ),
          );
        }, ms);
      });
      try {
        return await Promise.race([finish(), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    kill,
    async close() {
      kill("SIGKILL");
      // Bounded: a stray process that kept the pipes open must not hang the test's cleanup.
      await mur.end(15_000).catch(() => {});
      for (const path of o.removeOnClose ?? []) {
        await Deno.remove(path, { recursive: true }).catch(() => {});
      }
    },
  };
  return mur;
}

/** Waits for the readiness line (SIGKILL after `ms`); a launch that ends before it throws. */
async function readReady(mur: Mur, ms: number): Promise<void> {
  const timer = setTimeout(() => mur.kill("SIGKILL"), ms);
  const first = await mur.out.next(ms + 5_000).catch(async (e) => {
    await mur.close();
    throw e;
  }).finally(() => clearTimeout(timer));
  if (first === null) {
    await mur.close();
    const st = await mur.status;
    throw new Error(
      `mur ended (${st.code}${st.signal ? ` ${st.signal}` : ""}) before its readiness line:\n` +
        mur.err.text(),
    );
  }
  try {
    mur.ready = JSON.parse(first);
  } catch {
    await mur.close();
    throw new Error(`the readiness line is not JSON: ${first}\n${mur.err.text()}`);
  }
}

function signalPid(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * A byte stream read to its end in the background (from the start, or once `after` settles),
 * kept whole and as lines: `next` reads the lines in order, `find` waits for a line past or
 * future, `text` is everything so far.
 */
export class Lines {
  /** Every complete line so far (and the last, unterminated one once the stream ended). */
  readonly lines: string[] = [];
  /** Resolves when the stream has ended. */
  readonly done: Promise<void>;
  #text = "";
  #partial = "";
  #ended = false;
  #read = 0;
  #wake = new Set<() => void>();

  constructor(stream: ReadableStream<Uint8Array>, after?: Promise<unknown>) {
    this.done = (async () => {
      await after?.catch(() => {});
      try {
        for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
          this.#text += chunk;
          const parts = (this.#partial + chunk).split("\n");
          this.#partial = parts.pop()!;
          this.lines.push(...parts);
          this.#notify();
        }
      } catch {
        // the process was killed mid-write: what arrived is kept
      }
      if (this.#partial !== "") this.lines.push(this.#partial);
      this.#partial = "";
      this.#ended = true;
      this.#notify();
    })();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Everything the stream carried so far. */
  text(): string {
    return this.#text;
  }

  /** The next line not yet read by `next`, or null at the end; throws after `ms`. */
  async next(ms = 15_000): Promise<string | null> {
    await this.#wait(ms, () => this.#read < this.lines.length || this.#ended, "a line");
    return this.#read < this.lines.length ? this.lines[this.#read++] : null;
  }

  /** Reads lines with `next` until one satisfies `pred`; returns them, that one included. */
  async until(pred: (line: string) => boolean, ms = 15_000): Promise<string[]> {
    const deadline = Date.now() + ms;
    const got: string[] = [];
    for (;;) {
      const line = await this.next(Math.max(1, deadline - Date.now()));
      if (line === null) {
        throw new Error(`stream ended before the line (read ${JSON.stringify(got)})`);
      }
      got.push(line);
      if (pred(line)) return got;
    }
  }

  /** The lines `next` has not read, once the stream ends. */
  async rest(ms = 15_000): Promise<string[]> {
    await this.#wait(ms, () => this.#ended, "the end of the stream");
    const got = this.lines.slice(this.#read);
    this.#read = this.lines.length;
    return got;
  }

  /** The first line from index `from` on (past or future) that satisfies `pred`. */
  async find(pred: (line: string) => boolean, ms = 15_000, from = 0): Promise<string> {
    let hit: string | undefined;
    let i = from; // lines before i are known not to match: each wake looks at the new ones only
    await this.#wait(ms, () => {
      for (; hit === undefined && i < this.lines.length; i++) {
        if (pred(this.lines[i])) hit = this.lines[i];
      }
      return hit !== undefined;
    }, "a matching line");
    if (hit === undefined) throw new Error(`stream ended without a matching line`);
    return hit;
  }

  /** Waits until `ok()` or the stream's end, bounded by `ms`. */
  #wait(ms: number, ok: () => boolean, what: string): Promise<void> {
    if (ok() || this.#ended) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ok() && !this.#ended) return;
        stop();
        resolve();
      };
      const timer = setTimeout(() => {
        stop();
        reject(
          new Error(
            `no ${what} within ${ms} ms; last lines:\n${this.lines.slice(-20).join("\n")}` +
              (this.#partial ? `\n(unterminated: ${JSON.stringify(this.#partial)})` : ""),
          ),
        );
      }, ms);
      const stop = () => {
        clearTimeout(timer);
        this.#wake.delete(check);
      };
      this.#wake.add(check);
    });
  }

  #notify() {
    for (const f of [...this.#wake]) f();
  }
}
