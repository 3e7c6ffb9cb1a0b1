/**
 * Test helper: start a real `mur run` subprocess on a manifest written to a temp dir, read its
 * `--json` readiness line, talk to its door over raw HTTP, and kill it by pid at the end.
 */
import { stringify } from "yaml";
import { killTree } from "./kill_tree.ts";

export const MAIN = new URL("../../main.ts", import.meta.url).pathname;
export const STREAM_URI =
  "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";

export interface Ready {
  url: string;
  pid: number;
  session_id: string;
  name: string;
  version: string;
  workdir: string;
  tokens?: Record<string, string>;
}

export interface Capsule {
  ready: Ready;
  base: string;
  dir: string;
  home: string;
  proc: Deno.ChildProcess;
  /** stdout lines after the readiness line, and stderr, once the process ended. */
  finished(): Promise<{ code: number; stdout: string; stderr: string }>;
  rpc(method: string, params?: unknown, opts?: RpcOptions): Promise<Record<string, unknown>>;
  kill(signal?: Deno.Signal): void;
  close(): Promise<void>;
}

export interface RpcOptions {
  id?: string | number;
  headers?: Record<string, string>;
  token?: string;
}

export interface CapsuleOptions {
  /** The manifest as an object (written as murmur.yaml) — `script` may be an object too. */
  manifest: Record<string, unknown>;
  script?: Record<string, unknown>;
  args?: string[];
  env?: Record<string, string>;
  /** Extra files to write next to the manifest (name → contents). */
  files?: Record<string, string>;
  /** Wait for the readiness line (default true). */
  waitReady?: boolean;
  /** Extra `deno run` flags, e.g. `--v8-flags=--max-old-space-size=64`. */
  denoArgs?: string[];
}

/** Writes the manifest (and script) into a fresh temp dir. */
export async function writeCapsule(o: CapsuleOptions): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-test-" });
  const manifest = structuredClone(o.manifest);
  if (o.script) {
    await Deno.writeTextFile(`${dir}/script.yaml`, stringify(o.script));
    const inf = (manifest.inference ?? {}) as Record<string, unknown>;
    manifest.inference = { transport: "http", driver: "scripted", script: "script.yaml", ...inf };
  }
  await Deno.writeTextFile(`${dir}/murmur.yaml`, stringify(manifest));
  for (const [name, text] of Object.entries(o.files ?? {})) {
    const path = `${dir}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
    if (name.endsWith(".sh")) await Deno.chmod(path, 0o755);
  }
  return dir;
}

async function readLine(reader: ReadableStreamDefaultReader<string>, buf: { s: string }) {
  for (;;) {
    const i = buf.s.indexOf("\n");
    if (i >= 0) {
      const line = buf.s.slice(0, i);
      buf.s = buf.s.slice(i + 1);
      return line;
    }
    const { done, value } = await reader.read();
    if (done) return null;
    buf.s += value;
  }
}

export async function startCapsule(o: CapsuleOptions): Promise<Capsule> {
  const dir = await writeCapsule(o);
  const home = `${dir}/.murmur-home`;
  const cmd = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...(o.denoArgs ?? []),
      MAIN,
      "run",
      "--manifest",
      dir,
      "--json",
      ...(o.args ?? []),
    ],
    env: { MURMUR_HOME: home, MURMUR_HEARTBEAT_MS: "15000", NO_COLOR: "1", ...o.env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  });
  const proc = cmd.spawn();
  const stdoutReader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderrText = new Response(proc.stderr).text();
  const buf = { s: "" };
  const timeout = setTimeout(() => killTree(proc.pid), 20_000);
  const first = await readLine(stdoutReader, buf);
  clearTimeout(timeout);
  if (first === null) {
    const status = await proc.status;
    throw new Error(
      `mur run exited ${status.code} before its readiness line:\n${await stderrText}`,
    );
  }
  const ready = JSON.parse(first) as Ready;
  const rest = (async () => {
    let s = buf.s;
    for (;;) {
      const { done, value } = await stdoutReader.read();
      if (done) break;
      s += value;
    }
    return s;
  })();
  let finishedP: Promise<{ code: number; stdout: string; stderr: string }> | null = null;
  const base = `http://${ready.url.replace("localhost", "127.0.0.1")}`;
  const cap: Capsule = {
    ready,
    base,
    dir,
    home,
    proc,
    finished() {
      finishedP ??= (async () => {
        const st = await proc.status;
        return { code: st.code, stdout: await rest, stderr: await stderrText };
      })();
      return finishedP;
    },
    async rpc(method, params = {}, opts = {}) {
      const res = await fetch(base + "/", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "a2a-version": "1.0",
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...opts.headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: opts.id ?? 1, method, params }),
      });
      return await res.json();
    },
    kill(signal = "SIGKILL") {
      // A SIGKILL takes the tools' own process groups too (tests/helpers/kill_tree.ts).
      if (signal === "SIGKILL") return killTree(proc.pid);
      try {
        proc.kill(signal);
      } catch { /* already gone */ }
    },
    async close() {
      cap.kill("SIGKILL");
      await cap.finished();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
  return cap;
}

export interface SseEvent {
  id: number | null;
  data: Record<string, unknown>;
}

/** Reads SSE events from a response body; comments (heartbeats) are counted separately. */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  onComment?: (text: string) => void,
): AsyncGenerator<SseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let id: number | null = null;
        let data: string | null = null;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) onComment?.(line.slice(1));
          else if (line.startsWith("id: ")) id = Number(line.slice(4));
          else if (line.startsWith("data: ")) data = line.slice(6);
        }
        if (data !== null) yield { id, data: JSON.parse(data) };
      }
    }
  } finally {
    // Closing the reader closes the connection: a test that stops reading hangs up.
    await reader.cancel().catch(() => {});
  }
}

/** POSTs a streaming method and returns the response (caller reads the body). */
export function streamRequest(
  base: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
  id: string | number = "s1",
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(base + "/", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    signal,
  });
}

/** Collects events until `until` says stop or the stream ends, bounded by `ms`. */
export async function collect(
  res: Response,
  until: (e: SseEvent, all: SseEvent[]) => boolean = () => false,
  ms = 15_000,
  onComment?: (text: string) => void,
): Promise<SseEvent[]> {
  const all: SseEvent[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    const it = readSse(res.body!, onComment);
    const reading = (async () => {
      for await (const e of it) {
        all.push(e);
        if (until(e, all)) break;
      }
    })();
    await Promise.race([
      reading,
      new Promise((_, rej) =>
        ac.signal.addEventListener("abort", () => rej(new Error(`stream not done in ${ms} ms`)))
      ),
    ]);
  } finally {
    clearTimeout(timer);
    await res.body?.cancel().catch(() => {});
  }
  return all;
}

/** The frame under metadata[STREAM_URI] of an event, if any. */
export function frameOf(e: SseEvent): Record<string, unknown> | undefined {
  const r = e.data.result as Record<string, Record<string, unknown>>;
  const holder = r?.statusUpdate ?? r?.message;
  const md = holder?.metadata as Record<string, Record<string, unknown>> | undefined;
  return md?.[STREAM_URI];
}

export function userMessage(text: string, extra: Record<string, unknown> = {}) {
  return {
    message: {
      messageId: `m-${crypto.randomUUID()}`,
      role: "ROLE_USER",
      parts: [{ text }],
      ...extra,
    },
  };
}
