/**
 * A server started with `--inspect=127.0.0.1:0` prints its inspector's WebSocket URL on stderr;
 * this speaks just enough of the Chrome DevTools Protocol to have it collect its garbage and say
 * how large its JavaScript heap is. The idle-connection measure (measure.ts `idleKiBEach`) reads
 * RSS only after a full collection: without one, whether the collector happened to run between
 * two readings swung a batch of 100 idle connections by ±15 MiB, more than they weigh.
 */
import type { Spawned } from "./procs.ts";

/** The inspector's URL from what the process wrote on stderr, or undefined. */
export function inspectorUrl(stderr: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
}

/**
 * The inspector of a process spawned with `INSPECT_FLAG`: its URL is on stderr by the time the
 * readiness line is, or within a second after (stderr is read on its own).
 */
export async function inspectorOf(s: Spawned): Promise<Inspector> {
  for (let i = 0; i < 50; i++) {
    const url = inspectorUrl(s.stderr());
    if (url) return await openInspector(url);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${s.name}: no inspector URL on stderr`);
}

/** `--inspect=127.0.0.1:0`: the runtime's flag (Deno and Node alike) for an inspector on any port. */
export const INSPECT_FLAG = "--inspect=127.0.0.1:0";

export interface Inspector {
  /** A full garbage collection, then the JS heap's used bytes (Runtime.getHeapUsage). */
  collect(): Promise<number>;
  /** Starts V8's sampling CPU profiler (one sample every `intervalUs`). */
  startProfile(intervalUs: number): Promise<void>;
  /** Stops it: the samples since `startProfile`, as a `.cpuprofile` holds them. */
  stopProfile(): Promise<CpuProfile>;
  /** Every script V8 has parsed (each module, the runtime's own): its URL and source length. */
  scripts(): Promise<{ url: string; length: number }[]>;
  close(): void;
}

/** A V8 CPU profile (Profiler.stop, or a `--cpu-prof` file). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Connects to the inspector at `url`; every call is bounded by `timeoutMs`. */
export async function openInspector(url: string, timeoutMs = 10_000): Promise<Inspector> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`inspector ${url}: no connection`)), timeoutMs);
    ws.onopen = () => {
      clearTimeout(t);
      resolve();
    };
    ws.onerror = () => {
      clearTimeout(t);
      reject(new Error(`inspector ${url}: connection failed`));
    };
  });
  let seq = 0;
  const waiting = new Map<number, (r: { result?: unknown; error?: unknown }) => void>();
  let parsed: { url: string; length: number }[] | null = null;
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data));
    if (typeof msg.id === "number") waiting.get(msg.id)?.(msg);
    else if (msg.method === "Debugger.scriptParsed" && parsed) {
      parsed.push({ url: String(msg.params.url ?? ""), length: Number(msg.params.length ?? 0) });
    }
  };
  const call = (method: string, params?: unknown): Promise<Record<string, unknown>> => {
    const id = ++seq;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`inspector: ${method} not answered in ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.set(id, (r) => {
        clearTimeout(t);
        waiting.delete(id);
        if (r.error) reject(new Error(`inspector: ${method}: ${JSON.stringify(r.error)}`));
        else resolve((r.result ?? {}) as Record<string, unknown>);
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  };
  return {
    async collect() {
      await call("HeapProfiler.collectGarbage");
      const u = await call("Runtime.getHeapUsage");
      return Number(u.usedSize);
    },
    async startProfile(intervalUs) {
      await call("Profiler.enable");
      await call("Profiler.setSamplingInterval", { interval: intervalUs });
      await call("Profiler.start");
    },
    async stopProfile() {
      const r = await call("Profiler.stop");
      return r.profile as CpuProfile;
    },
    async scripts() {
      // Debugger.enable reports every script parsed so far before it answers.
      parsed = [];
      await call("Debugger.enable");
      const out = parsed;
      parsed = null;
      await call("Debugger.disable");
      return out;
    },
    close() {
      try {
        ws.close();
      } catch { /* gone */ }
    },
  };
}
