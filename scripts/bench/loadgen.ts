/**
 * The load generator: a separate process (pinned to its own core by the bench) that opens K
 * raw TCP connections, writes each HTTP request itself and decodes the answers with
 * `SseWireDecoder`. It is driven by JSON lines on stdin and answers one JSON line per command
 * on stdout (see `LoadgenCommand`), so one process serves a whole bench run.
 *
 * What a `run` measures, per connection: events are "seen" from the first byte; the first
 * `preamble` events (the opening task, a connection-ack) arm the connection; counting starts
 * at the first later event whose data contains `startMarker` (any event when unset) and stops
 * at the event containing `endMarker`, after `stopAfter` counted events, or at end of body.
 * Throughput is all counted events over the window from the first counted receipt on any
 * connection to the last. Latency is receipt time minus the event's own `"timestamp"` (the
 * first one in its data: a status timestamp, milliseconds).
 */
import { type ResponseHead, SseWireDecoder } from "./sse_wire.ts";
import { percentile } from "./stats.ts";
import { cpuUs } from "./procs.ts";

export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface TriggerSpec {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface StreamJob {
  host: string;
  port: number;
  k: number;
  request: RequestSpec;
  preamble: number;
  startMarker?: string;
  endMarker?: string;
  stopAfter?: number;
  latency?: boolean;
  /**
   * A connection that has started counting and then receives no event for this long is ended
   * where it is (its end event was lost, e.g. to a server dropping events for slow readers);
   * `idleEnded` counts them. The window still ends at the last event received.
   */
  idleMs?: number;
  /** Sent once every connection is armed: what starts the producer. */
  trigger?: TriggerSpec;
  /**
   * The server's pid: its threads' on-CPU time is read here when the flood's first counted event
   * arrives (on any connection) and again when every connection is done
   * (`RunResult.serverCpuUs`). Accepting K connections, answering K requests, the trigger's own
   * request and a task's wait before its first event (a SubscribeToTask flood's gate, while the
   * K connections sit idle but for their heartbeats) are costs per connection or per task, not
   * per event, and stay outside the figure.
   */
  cpuPid?: number;
  timeoutMs: number;
}

export type LoadgenCommand =
  | ({ op: "run" } & StreamJob)
  | ({ op: "hold" } & StreamJob)
  | { op: "stall"; host: string; port: number; request: RequestSpec }
  | { op: "release" }
  | { op: "exit" };

export interface RunResult {
  ok: boolean;
  /** The load generator's CPU time over the run, as % of the counted window (set by the client). */
  lgBusy?: number;
  error?: string;
  clients: number;
  events: number;
  minPerClient: number;
  maxPerClient: number;
  windowMs: number;
  rate: number;
  latency: { n: number; p50: number; p99: number } | null;
  maxId: number;
  /** Median over connections of request written → last counted event (replay timing). */
  requestToEndMs: number;
  /** Some connection armed after counting had started elsewhere: events may be missing. */
  lateArm: boolean;
  /** Connections ended by `idleMs` rather than by their end event. */
  idleEnded: number;
  /** With `cpuPid`: the server's on-CPU µs from the first counted event to every connection done. */
  serverCpuUs?: number;
  /** This process's own on-CPU µs over the same span (connecting and arming K are outside). */
  lgCpuUs?: number;
  trigger?: { status: number; body: string };
}

const now = () => performance.timeOrigin + performance.now();
const TS = '"timestamp":"';

export function requestBytes(host: string, port: number, r: RequestSpec): Uint8Array {
  const body = new TextEncoder().encode(r.body);
  let head = `POST ${r.path} HTTP/1.1\r\nHost: ${host}:${port}\r\n`;
  for (const [k, v] of Object.entries(r.headers)) head += `${k}: ${v}\r\n`;
  head += `Content-Length: ${body.length}\r\n\r\n`;
  const h = new TextEncoder().encode(head);
  const all = new Uint8Array(h.length + body.length);
  all.set(h);
  all.set(body, h.length);
  return all;
}

class StreamClient {
  conn: Deno.TcpConn | null = null;
  t = 0;
  seen = 0;
  armed = false;
  armedAt = 0;
  counting = false;
  counted = 0;
  tStart = 0;
  tEnd = 0;
  tRequest = 0;
  maxId = 0;
  finished = false;
  idleEnded = false;
  error: string | null = null;
  head: ResponseHead | null = null;
  lat: number[] | null;
  #decoder: SseWireDecoder;
  #armResolve!: () => void;
  #doneResolve!: () => void;
  readonly armedP: Promise<void>;
  readonly doneP: Promise<void>;

  constructor(
    private job: StreamJob,
    readonly hold = false,
    /** Told when this connection counts its first event (runStream reads the server's CPU). */
    private readonly onCounting: () => void = () => {},
  ) {
    this.lat = job.latency ? [] : null;
    this.armedP = new Promise((r) => (this.#armResolve = r));
    this.doneP = new Promise((r) => (this.#doneResolve = r));
    this.#decoder = new SseWireDecoder({
      head: (h) => {
        this.head = h;
        const sse = (h.headers.get("content-type") ?? "").startsWith("text/event-stream");
        if (h.status === 200 && sse && job.preamble === 0) this.#arm();
      },
      event: (data, id) => this.#event(data, id),
      end: () => this.#ended(),
    });
  }

  #arm(): void {
    this.armed = true;
    this.armedAt = this.t;
    this.#armResolve();
  }

  #event(data: string, id: string | null): void {
    if (id !== null) {
      const n = Number(id);
      if (n > this.maxId) this.maxId = n;
    }
    this.seen++;
    if (!this.armed) {
      if (this.seen >= this.job.preamble) this.#arm();
      return;
    }
    if (this.finished) return;
    if (!this.counting) {
      if (this.job.startMarker && !data.includes(this.job.startMarker)) return;
      this.counting = true;
      this.tStart = this.t;
      this.onCounting();
    }
    this.counted++;
    this.tEnd = this.t;
    if (this.lat) {
      const k = data.indexOf(TS);
      if (k >= 0) {
        const created = Date.parse(data.slice(k + TS.length, k + TS.length + 24));
        if (Number.isFinite(created)) this.lat.push(this.t - created);
      }
    }
    if (this.job.stopAfter !== undefined && this.counted >= this.job.stopAfter) this.#finish();
    else if (this.job.endMarker && data.includes(this.job.endMarker)) this.#finish();
  }

  #finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.#armResolve();
    this.#doneResolve();
  }

  /** End of body or of connection: a refusal (a JSON answer) becomes this client's error. */
  #ended(): void {
    if (this.finished) return;
    const h = this.head;
    const type = h?.headers.get("content-type") ?? "";
    if (!h) this.fail("connection closed before a response head");
    else if (h.status !== 200 || !type.startsWith("text/event-stream")) {
      this.fail(`HTTP ${h.status} ${type}: ${this.#decoder.plainBody.slice(0, 300)}`);
    } else if (!this.armed) this.fail(`stream ended after ${this.seen} event(s), before arming`);
    else this.#finish();
  }

  /** Ends a counting connection that has gone quiet (see `StreamJob.idleMs`). */
  endIdle(at: number, idleMs: number): void {
    if (this.finished || !this.counting || at - this.tEnd < idleMs) return;
    this.idleEnded = true;
    this.#finish();
    this.close();
  }

  fail(why: string): void {
    if (this.finished) return;
    this.error ??= why;
    this.#finish();
  }

  async start(): Promise<void> {
    try {
      this.conn = await Deno.connect({ hostname: this.job.host, port: this.job.port });
      this.conn.setNoDelay(true);
      const req = requestBytes(this.job.host, this.job.port, this.job.request);
      this.tRequest = now();
      await this.conn.write(req);
    } catch (e) {
      this.fail(`connect: ${(e as Error).message}`);
      return;
    }
    void this.#readLoop();
  }

  async #readLoop(): Promise<void> {
    // A held connection reads a few small events; a flood's, 64 KiB slices at a time.
    const buf = new Uint8Array(this.hold ? 8 * 1024 : 128 * 1024);
    const conn = this.conn!;
    try {
      while (!this.finished) {
        const n = await conn.read(buf);
        if (n === null) break;
        this.t = now();
        this.#decoder.feed(buf.subarray(0, n));
      }
    } catch (e) {
      if (!this.finished) this.fail(`read: ${(e as Error).message}`);
    }
    if (!this.finished) this.#ended();
    this.close();
  }

  close(): void {
    try {
      this.conn?.close();
    } catch { /* already closed */ }
    this.conn = null;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), ms))),
  ]);
}

async function openAll(
  job: StreamJob,
  hold = false,
  onCounting?: () => void,
): Promise<StreamClient[]> {
  const clients = Array.from({ length: job.k }, () => new StreamClient(job, hold, onCounting));
  // Connect in small waves so a burst of SYNs does not overflow the server's accept backlog.
  for (let i = 0; i < clients.length; i += 25) {
    await Promise.all(clients.slice(i, i + 25).map((c) => c.start()));
  }
  return clients;
}

export async function runStream(job: StreamJob): Promise<RunResult> {
  const deadline = now() + job.timeoutMs;
  // The server's CPU is read at the flood's first counted event, whichever connection counts it.
  let cpu0 = NaN;
  const floodStarts = () => {
    if (Number.isNaN(cpu0) && job.cpuPid !== undefined) cpu0 = cpuUs(job.cpuPid);
  };
  const clients = await openAll(job, false, floodStarts);
  const armed = await withTimeout(Promise.all(clients.map((c) => c.armedP)), job.timeoutMs);
  let error: string | undefined = clients.find((c) => c.error)?.error ??
    (armed === "timeout" ? "timeout before every connection armed" : undefined);
  let trigger: RunResult["trigger"];
  const own0 = cpuUs(Deno.pid);
  let cpu1 = NaN;
  let own1 = NaN;
  if (!error && job.trigger) {
    try {
      const r = await fetch(job.trigger.url, {
        method: job.trigger.method ?? "POST",
        headers: job.trigger.headers,
        body: job.trigger.body,
      });
      trigger = { status: r.status, body: (await r.text()).slice(0, 2000) };
      if (r.status !== 200) {
        error = `trigger answered HTTP ${r.status}: ${trigger.body.slice(0, 300)}`;
      }
    } catch (e) {
      error = `trigger: ${(e as Error).message}`;
    }
  }
  if (!error) {
    const left = Math.max(1, deadline - now());
    const idle = job.idleMs
      ? setInterval(() => {
        const t = now();
        for (const c of clients) c.endIdle(t, job.idleMs!);
      }, Math.min(100, job.idleMs))
      : undefined;
    const done = await withTimeout(Promise.all(clients.map((c) => c.doneP)), left);
    own1 = cpuUs(Deno.pid);
    if (job.cpuPid !== undefined) cpu1 = cpuUs(job.cpuPid);
    clearInterval(idle);
    if (done === "timeout") {
      const counts = clients.map((c) => c.counted);
      error = `timeout after ${job.timeoutMs} ms (counted per client ${Math.min(...counts)}…${
        Math.max(...counts)
      })`;
    }
    error ??= clients.find((c) => c.error)?.error ?? undefined;
  }
  for (const c of clients) c.close();
  const r = summarize(clients, job, error, trigger);
  if (Number.isFinite(cpu1 - cpu0)) r.serverCpuUs = cpu1 - cpu0;
  if (Number.isFinite(own1 - own0)) r.lgCpuUs = own1 - own0;
  return r;
}

function summarize(
  clients: StreamClient[],
  job: StreamJob,
  error: string | undefined,
  trigger: RunResult["trigger"],
): RunResult {
  const started = clients.filter((c) => c.counting);
  const events = clients.reduce((s, c) => s + c.counted, 0);
  const t0 = started.length ? Math.min(...started.map((c) => c.tStart)) : 0;
  const t1 = started.length ? Math.max(...started.map((c) => c.tEnd)) : 0;
  const windowMs = t1 - t0;
  let latency: RunResult["latency"] = null;
  if (job.latency) {
    let n = 0;
    for (const c of clients) n += c.lat!.length;
    const all = new Float64Array(n);
    let i = 0;
    for (const c of clients) for (const v of c.lat!) all[i++] = v;
    all.sort();
    latency = { n, p50: percentile(all, 0.5), p99: percentile(all, 0.99) };
  }
  const spans = clients.filter((c) => c.counting).map((c) => c.tEnd - c.tRequest).sort((a, b) =>
    a - b
  );
  const counts = clients.map((c) => c.counted);
  return {
    ok: !error,
    error,
    clients: clients.length,
    events,
    minPerClient: Math.min(...counts),
    maxPerClient: Math.max(...counts),
    windowMs,
    rate: windowMs > 0 ? (events / windowMs) * 1000 : NaN,
    latency,
    maxId: Math.max(0, ...clients.map((c) => c.maxId)),
    requestToEndMs: spans.length ? spans[spans.length >> 1] : NaN,
    lateArm: started.length > 0 && clients.some((c) => c.armedAt > t0),
    idleEnded: clients.filter((c) => c.idleEnded).length,
    trigger,
  };
}

/** Connections kept open between commands: idle holders and stalled readers. */
const held: StreamClient[] = [];
const stalled: Deno.TcpConn[] = [];

async function hold(job: StreamJob): Promise<{ ok: boolean; error?: string; held: number }> {
  const clients = await openAll(job, true);
  held.push(...clients);
  const armed = await withTimeout(Promise.all(clients.map((c) => c.armedP)), job.timeoutMs);
  const error = clients.find((c) => c.error)?.error ??
    (armed === "timeout" ? "timeout before every connection armed" : undefined);
  return { ok: !error, error, held: clients.filter((c) => c.armed && !c.error).length };
}

async function stall(
  host: string,
  port: number,
  request: RequestSpec,
): Promise<{ ok: boolean; error?: string }> {
  try {
    const conn = await Deno.connect({ hostname: host, port });
    stalled.push(conn);
    await conn.write(requestBytes(host, port, request));
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

function release(): { ok: true; released: number } {
  const n = held.length + stalled.length;
  for (const c of held.splice(0)) {
    c.fail("released");
    c.close();
  }
  for (const c of stalled.splice(0)) {
    try {
      c.close();
    } catch { /* gone */ }
  }
  return { ok: true, released: n };
}

async function handle(cmd: LoadgenCommand): Promise<unknown> {
  switch (cmd.op) {
    case "run":
      return await runStream(cmd);
    case "hold":
      return await hold(cmd);
    case "stall":
      return await stall(cmd.host, cmd.port, cmd.request);
    case "release":
      return release();
    case "exit":
      release();
      return { ok: true };
  }
}

async function serveStdio(): Promise<void> {
  const out = (v: unknown) =>
    Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(v) + "\n"));
  out({ ready: true, pid: Deno.pid });
  let rest = "";
  const dec = new TextDecoder();
  for await (const chunk of Deno.stdin.readable) {
    rest += dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf("\n")) !== -1) {
      const line = rest.slice(0, nl).trim();
      rest = rest.slice(nl + 1);
      if (!line) continue;
      let cmd: LoadgenCommand;
      try {
        cmd = JSON.parse(line);
      } catch (e) {
        out({ ok: false, error: `bad command: ${(e as Error).message}` });
        continue;
      }
      try {
        out(await handle(cmd));
      } catch (e) {
        out({ ok: false, error: (e as Error).stack ?? String(e) });
      }
      if (cmd.op === "exit") Deno.exit(0);
    }
  }
  release();
}

if (import.meta.main) await serveStdio();
