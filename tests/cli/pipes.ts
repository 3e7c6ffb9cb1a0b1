/**
 * A real capsule for the `mur watch` pipe tests (watch_flags_test.ts, watch_readme_test.ts): the
 * scripted model, `queue` + `sleep`, a tool call whose 16 KiB output is multi-byte text with
 * quotes, tabs and backslashes, a failing task, a slow one to cancel, and a chatty one that
 * pushes older events out of the 512-event replay buffer.
 */
import { ok as assert } from "node:assert/strict";
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import { readSse, streamRequest } from "../helpers/sse.ts";
import { until } from "../helpers/until.ts";
import { baseEnv, type Lines, murArgv, startProcess } from "../helpers/mur.ts";

/** One line of the tool's output; 600 of them pass the shell tool's 16 KiB cap. */
export const TOOL_LINE = 'ligne — 東京 ✓ "quoted"\ttab \\ back';

const SCRIPT = {
  tasks: [
    { match: "fail", turns: [{ steps: [{ error: "provider overloaded" }] }] },
    {
      match: "slow",
      turns: [{ steps: [{ text: "slow start " }, { delay_ms: 60_000 }, { text: "slow end" }] }],
    },
    { match: "chatty", turns: [{ steps: [{ text: "tick ", repeat: 600 }] }] },
    { match: "talk", turns: [{ steps: [{ text: "word ", repeat: 150 }] }] },
    { match: "flood", turns: [{ steps: [{ text: "flood ", repeat: 40_000 }] }] },
    {
      turns: [
        {
          steps: [
            { thinking: "The user wants the weather." },
            { text: "Let me check. " },
            {
              tool_call: {
                id: "toolu_01",
                name: "bash",
                input: { command: `for i in $(seq 1 600); do printf '%s\\n' '${TOOL_LINE}'; done` },
              },
            },
          ],
        },
        { steps: [{ text: "Sunny in 東京 ✓" }] },
      ],
    },
  ],
};

const MANIFEST = {
  name: "pipes",
  version: "0.3.0",
  inference: { max_turns: 4 },
  lifecycle: { task_acceptance: "queue", queue_depth: 4, after_task: "sleep" },
  capabilities: { shell: { allow: ["bash"] } },
};

/** Starts the capsule; heartbeats every 300 ms so `--task`'s end-of-replay check is quick. */
export function startPipes(env: Record<string, string> = {}): Promise<Capsule> {
  return startCapsule({
    manifest: MANIFEST,
    script: SCRIPT,
    env: { MURMUR_HEARTBEAT_MS: "300", ...env },
  });
}

/** SendMessage with returnImmediately: the task's id. */
export async function send(cap: Capsule, text: string): Promise<string> {
  const body = await cap.rpc("SendMessage", {
    message: { messageId: `m-${crypto.randomUUID()}`, role: "ROLE_USER", parts: [{ text }] },
    configuration: { returnImmediately: true },
  }) as { result?: { task?: { id?: string } } };
  assert(body.result?.task?.id, JSON.stringify(body));
  return body.result.task.id;
}

export async function state(cap: Capsule, id: string): Promise<string> {
  const body = await cap.rpc("GetTask", { id }) as { result: { status: { state: string } } };
  return body.result.status.state;
}

/** Waits until GetTask reports `want` for the task. */
export function reach(cap: Capsule, id: string, want: string): Promise<string> {
  return until(`${id} ${want}`, async () => (await state(cap, id)) === want ? want : undefined);
}

/** Sends the three tasks that end on their own and waits for each ending. */
export async function runTasks(cap: Capsule): Promise<{ weather: string; fail: string }> {
  const weather = await send(cap, "weather please");
  await reach(cap, weather, "TASK_STATE_COMPLETED");
  const fail = await send(cap, "fail now");
  await reach(cap, fail, "TASK_STATE_FAILED");
  return { weather, fail };
}

/** The numbered events of the session's replay, read raw off the wire until the first heartbeat. */
export async function wireReplay(
  base: string,
  since = 0,
): Promise<{ id: number; result: unknown }[]> {
  const ac = new AbortController();
  const res = await streamRequest(
    base,
    "murmur.WatchSession",
    {},
    {
      "last-event-id": String(since),
    },
    1,
    ac.signal,
  );
  const out: { id: number; result: unknown }[] = [];
  // The first heartbeat follows the whole replay (src/events/view.ts): hang up there.
  const timer = setTimeout(() => ac.abort(), 15_000);
  try {
    for await (const e of readSse(res.body!, () => ac.abort())) {
      if (e.id !== null) out.push({ id: e.id, result: e.data.result });
    }
  } catch (e) {
    if (!ac.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return out;
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mur <args>` with stdout and stderr as pipes, under exactly `env` (plus PATH, HOME and
 * DENO_DIR, so no NO_COLOR or other setting leaks in from the test's own environment).
 */
export async function mur(args: string[], env: Record<string, string>, timeoutMs = 30_000) {
  return await run(murArgv(args), env, timeoutMs);
}

/**
 * Runs `mur <args>` with a terminal as its stdout: util-linux `script` gives it a pty and copies
 * what it writes to our pipe (with the pty's CRLF line ends, turned back into LF here). Its
 * stderr goes to a file, so stdout is read alone.
 */
export async function murOnTerminal(args: string[], env: Record<string, string>): Promise<Ran> {
  const errFile = await Deno.makeTempFile({ prefix: "mur-tty-err-" });
  try {
    const line = murArgv(args).map(shq).join(" ");
    const r = await run(["script", "-qec", `${line} 2>${shq(errFile)}`, "/dev/null"], env, 30_000);
    return {
      code: r.code,
      stdout: r.stdout.replaceAll("\r\n", "\n"),
      stderr: await Deno.readTextFile(errFile),
    };
  } finally {
    await Deno.remove(errFile).catch(() => {});
  }
}

/** Runs a shell line (a README example) with `mur` on PATH: a wrapper around `deno run main.ts`. */
export async function shell(line: string, env: Record<string, string>, timeoutMs = 30_000) {
  return await run(["sh", "-c", line], env, timeoutMs);
}

/** A directory holding a `mur` that runs this checkout, for shell lines that call `mur`. */
export async function murOnPath(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "mur-bin-" });
  await Deno.writeTextFile(
    `${dir}/mur`,
    `#!/bin/sh\nexec ${murArgv([]).map(shq).join(" ")} "$@"\n`,
  );
  await Deno.chmod(`${dir}/mur`, 0o755);
  return dir;
}

export function shq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A running pipeline: stderr line by line as it comes, everything once it ends, and a kill. */
export interface Running {
  err: Lines;
  result: Promise<Ran>;
  kill(): void;
}

/**
 * Starts argv in a session of its own (`setsid`), under exactly `env`, through the one launcher
 * (tests/helpers/mur.ts), so a kill or a timeout ends the whole pipeline it started by its
 * process group id (the child's pid) rather than leaving `mur` or `jq` behind.
 */
export function start(
  argv: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  /** Leave stdout unread until this settles (a reader that stalls). */
  readStdoutAfter?: Promise<unknown>,
): Running {
  const p = startProcess(argv, {
    env: { ...baseEnv(), ...env },
    clearEnv: true,
    setsid: true,
    readStdoutAfter,
  });
  const result = p.end(timeoutMs).then((e) => ({
    code: e.code,
    stdout: e.stdout,
    stderr: p.err.lines.join("\n"),
  }));
  result.catch(() => {}); // a caller that kills and never awaits it is not an unhandled rejection
  return { err: p.err, result, kill: () => p.kill("SIGKILL") };
}

/** `mur <args>` started as in mur(). */
export function startMur(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  readStdoutAfter?: Promise<unknown>,
): Running {
  return start(murArgv(args), env, timeoutMs, readStdoutAfter);
}

async function run(argv: string[], env: Record<string, string>, timeoutMs: number): Promise<Ran> {
  return await start(argv, env, timeoutMs).result;
}
