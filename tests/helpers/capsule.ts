/**
 * Test helper: a capsule written to a temp dir from a manifest, started as a real `mur run --json`
 * daemon through the one launcher (mur.ts), and its door over raw HTTP.
 */
import { stringify } from "yaml";
import { MAIN, type Mur, startMur } from "./mur.ts";

export { MAIN };

export interface Ready {
  url: string;
  pid: number;
  session_id: string;
  name: string;
  version: string;
  workdir: string;
  tokens?: Record<string, string>;
  /** A public door of a capsule with `approvals:`: the operator's token for answering one. */
  approval_token?: string;
}

export interface Capsule {
  ready: Ready;
  base: string;
  dir: string;
  home: string;
  proc: Deno.ChildProcess;
  /** The process (tests/helpers/mur.ts): its stdout and stderr as they arrive. */
  mur: Mur;
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
  /** Extra `deno run` flags, e.g. `--v8-flags=--max-old-space-size=64`. */
  denoArgs?: string[];
  /** The script `deno run` starts instead of main.ts (a wrapper can instrument the process). */
  entry?: string;
  /** An existing capsule folder (written by an earlier start, kept at close) instead of a new one. */
  dir?: string;
  /** ms to wait for the readiness line (default 20 s). */
  readyMs?: number;
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

export async function startCapsule(o: CapsuleOptions): Promise<Capsule> {
  const dir = o.dir ?? await writeCapsule(o);
  const home = `${dir}/.murmur-home`;
  const mur = await startMur({
    args: ["run", "--manifest", dir, "--json", ...(o.args ?? [])],
    env: { MURMUR_HOME: home, MURMUR_HEARTBEAT_MS: "15000", NO_COLOR: "1", ...o.env },
    denoArgs: o.denoArgs,
    entry: o.entry,
    readyMs: o.readyMs ?? 20_000,
    removeOnClose: o.dir ? [] : [dir],
  });
  const ready = mur.ready as unknown as Ready;
  const base = `http://${ready.url.replace("localhost", "127.0.0.1")}`;
  const cap: Capsule = {
    ready,
    base,
    dir,
    home,
    proc: mur.proc,
    mur,
    async finished() {
      const st = await mur.status;
      await Promise.all([mur.out.done, mur.err.done]);
      // What came after the readiness line.
      const stdout = mur.out.text().slice(mur.out.text().indexOf("\n") + 1);
      return { code: st.code, stdout, stderr: mur.err.text() };
    },
    rpc: (method, params = {}, opts = {}) => rpc(base, method, params, opts),
    kill: (signal = "SIGKILL") => mur.kill(signal),
    close: () => mur.close(),
  };
  return cap;
}

/**
 * One JSON-RPC call to a door, or to a session's path on an edge, at `base`; the parsed answer
 * (`any`: tests read it by path). A string for `opts` is a bearer token.
 */
export async function rpc(
  base: string,
  method: string,
  params: unknown = {},
  opts: RpcOptions | string = {},
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const o = typeof opts === "string" ? { token: opts } : opts;
  const res = await fetch(base + "/", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "a2a-version": "1.0",
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...o.headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: o.id ?? 1, method, params }),
  });
  return await res.json();
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
