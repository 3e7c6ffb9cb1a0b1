/** The bench's handle on the load generator process: one JSON command in, one JSON line out. */
import type { LoadgenCommand, RequestSpec, RunResult, StreamJob } from "./loadgen.ts";
import { cpuMs, kill, spawnReady } from "./procs.ts";

export class Loadgen {
  #w: WritableStreamDefaultWriter<Uint8Array>;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly pid: number,
    child: Deno.ChildProcess,
    private lines: AsyncIterator<string>,
  ) {
    this.#w = child.stdin.getWriter();
  }

  /** Starts `loadgen.ts` pinned to `core` (when pinning is possible). */
  static async start(core?: number): Promise<Loadgen> {
    const script = new URL("./loadgen.ts", import.meta.url).pathname;
    const p = await spawnReady({
      name: "loadgen",
      cmd: [Deno.execPath(), "run", "-A", script],
      core,
      stdin: true,
      readyTimeoutMs: 30_000,
    });
    return new Loadgen(p.pid, p.child, p.lines);
  }

  /** Commands run one at a time, in order. */
  send<T = unknown>(cmd: LoadgenCommand): Promise<T> {
    const run = async () => {
      await this.#w.write(new TextEncoder().encode(JSON.stringify(cmd) + "\n"));
      const r = await this.lines.next();
      if (r.done) throw new Error("load generator exited");
      return JSON.parse(r.value) as T;
    };
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => {});
    return p;
  }

  async run(job: StreamJob): Promise<RunResult> {
    const c0 = cpuMs(this.pid);
    const r = await this.send<RunResult>({ op: "run", ...job });
    // Its CPU from every connection armed to every one done (connecting K, a cost per connection
    // that reached 2× the window at K=1,000, is outside) over the counted window: CPU, not wall
    // time, so a wait before the first event (a SubscribeToTask gate) does not dilute it. Where
    // the process cannot read its own threads' schedstat, the whole run's 10 ms ticks.
    const cpu = r.lgCpuUs !== undefined ? r.lgCpuUs / 1000 : cpuMs(this.pid) - c0;
    if (r.windowMs > 0) r.lgBusy = (100 * cpu) / r.windowMs;
    return r;
  }

  hold(job: StreamJob): Promise<{ ok: boolean; error?: string; held: number }> {
    return this.send({ op: "hold", ...job });
  }

  stall(
    host: string,
    port: number,
    request: RequestSpec,
  ): Promise<{ ok: boolean; error?: string }> {
    return this.send({ op: "stall", host, port, request });
  }

  release(): Promise<{ ok: boolean }> {
    return this.send({ op: "release" });
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.send({ op: "exit" }), new Promise((r) => setTimeout(r, 2000))]);
    } catch { /* already gone */ }
    kill(this.pid);
  }
}
