/**
 * Test helpers for formations: a roster of scripted capsules in a temp dir, `mur run --roster`
 * started by the one launcher (tests/helpers/mur.ts) with its one readiness line read, and door
 * calls with a token.
 */
import { stringify } from "yaml";
import { killTree } from "../helpers/kill_tree.ts";
import { type Lines, startMur } from "../helpers/mur.ts";

export interface FormationLine {
  formation_id: string;
  entry: string;
  url: string;
  members: { name: string; url: string; pid: number | null; session_id: string | null }[];
}

export interface Launched {
  dir: string;
  home: string;
  proc: Deno.ChildProcess;
  line: FormationLine;
  stdout: Lines;
  stderr: Promise<string>;
  /** What the launcher wrote on stderr so far (to wait on a line before acting). */
  stderrSoFar(): string;
  pids(): number[];
  close(): Promise<void>;
}

/**
 * Writes one scripted capsule per name (with `scripts[name]` as its script when given: the
 * built-in canned answer otherwise) and the roster.
 */
export async function writeFormation(
  names: string[],
  roster: string,
  scripts: Record<string, Record<string, unknown>> = {},
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-formation-" });
  for (const name of names) {
    await Deno.mkdir(`${dir}/${name}`);
    const inference: Record<string, unknown> = { transport: "http", driver: "scripted" };
    if (scripts[name]) {
      await Deno.writeTextFile(`${dir}/${name}/script.yaml`, stringify(scripts[name]));
      inference.script = "script.yaml";
    }
    await Deno.writeTextFile(
      `${dir}/${name}/murmur.yaml`,
      // Every member takes its callers' tasks (docs/door.md "Peer tasks and trust").
      stringify({ name, version: "0.1.0", inference, exports: { peer_tasks: { accept: true } } }),
    );
  }
  await Deno.writeTextFile(`${dir}/roster.yaml`, roster);
  return dir;
}

export const THREE = `roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: coder, manifest: coder}
  - {name: reviewer, manifest: reviewer}
reachability:
  - {from: lead, to: [coder, reviewer]}
  - {from: reviewer, to: [coder]}
`;

/** Starts `mur run --roster` with `--json` and reads its readiness line (≤ 60 s). */
export async function launch(
  dir: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<Launched> {
  const home = `${dir}/.home`;
  const mur = await startMur({
    args: ["run", "--roster", `${dir}/roster.yaml`, "--json", ...args],
    // The entry member has no task: it waits for one A2A task, long enough for every test.
    env: { MURMUR_HOME: home, MURMUR_A2A_TIMEOUT_SECS: "120", NO_COLOR: "1", ...env },
    readyMs: 60_000,
    removeOnClose: [dir],
  });
  const line = mur.ready as unknown as FormationLine;
  const pids = () => line.members.map((m) => m.pid).filter((p): p is number => p !== null);
  return {
    dir,
    home,
    proc: mur.proc,
    line,
    stdout: mur.out,
    stderr: mur.err.done.then(() => mur.err.text()),
    stderrSoFar: () => mur.err.text(),
    pids,
    async close() {
      // Every pid this test started, whatever state it is in (the members are the launcher's
      // children, but one whose launcher died first is not in its tree any more).
      for (const pid of pids()) killTree(pid);
      await mur.close();
    },
  };
}

/** One JSON-RPC call; the HTTP status and the parsed body. */
export async function call(
  url: string,
  method: string,
  params: unknown,
  token?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "a2a-version": "1.0",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: res.status, body: await res.json() };
}

export function message(text: string) {
  return {
    message: { messageId: `m-${crypto.randomUUID()}`, role: "ROLE_USER", parts: [{ text }] },
  };
}
