/**
 * The first SIGINT or SIGTERM to a capsule says what it ends (src/cli/signal_note.ts), as
 * `mur stop` does: a sleeping capsule's A2A task, which never decides the status, is named as
 * canceled rather than vanishing behind `status: ok`. Ctrl-C typed in a real terminal (tmux)
 * leaves the status line at the start of a line of its own, not after the `^C` the terminal
 * echoes.
 */
import assert from "node:assert/strict";
import { MAIN } from "../helpers/mur.ts";
import { entryArgs } from "../../src/module_root.ts";
import { until } from "../helpers/until.ts";
import { spawnRun } from "./helpers.ts";

const SLEEPY = {
  name: "sleepy",
  version: "0.1.0",
  lifecycle: { task_acceptance: "queue", after_task: "sleep" },
};
// A task that runs until it is canceled (ten minutes of nothing before its one step).
const SLOW = { tasks: [{ turns: [{ steps: [{ delay_ms: 600_000 }, { text: "never" }] }] }] };

/** Sends a task to the door without waiting for its end; resolves once it is working. */
async function startTask(url: string): Promise<{ id: string; sent: Promise<unknown> }> {
  const base = `http://${url.replace("localhost", "127.0.0.1")}/`;
  const rpc = (method: string, params: unknown) =>
    fetch(base, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    }).then((r) => r.json());
  const sent = rpc("SendMessage", {
    message: { role: "ROLE_USER", messageId: crypto.randomUUID(), parts: [{ text: "wait" }] },
  }).catch(() => null);
  const id = await until(
    "the task to be working",
    async () => {
      const tasks = (await rpc("ListTasks", {})).result?.tasks ?? [];
      const t = tasks.find((t: { status: { state: string } }) =>
        t.status.state === "TASK_STATE_WORKING"
      );
      return t?.id as string | undefined;
    },
    30_000,
    100,
  );
  return { id, sent };
}

Deno.test("SIGINT to a sleeping capsule with a running A2A task names the task it canceled; status ok", async () => {
  const run = await spawnRun({ manifest: SLEEPY, script: SLOW });
  try {
    const url = /^murmur: url (\S+)$/.exec((await run.line())!)?.[1];
    assert.ok(url);
    const task = await startTask(url);
    run.signal("SIGINT");
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stdout, /\nstatus: ok\n$/);
    assert.deepEqual(
      end.stderr.split("\n").filter((l) => l.startsWith("[mur run] SIGINT")),
      [`[mur run] SIGINT: ending the session; canceled: ${task.id}`],
    );
    await task.sent;
  } finally {
    await run.close();
  }
});

Deno.test("SIGTERM with nothing held says nothing more than before", async () => {
  const run = await spawnRun({ manifest: SLEEPY, script: SLOW });
  try {
    await run.line();
    run.signal("SIGTERM");
    const end = await run.end(60_000);
    assert.equal(end.code, 0, end.stderr);
    assert.doesNotMatch(end.stderr, /\[mur run\] SIG/);
  } finally {
    await run.close();
  }
});

Deno.test("Ctrl-C in a terminal: the canceled task and the status line each start a line of their own", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-ctrl-c-" });
  const socket = `mur-ctrl-c-${Deno.pid}-${Date.now()}`;
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", { args: ["-L", socket, ...args], stdout: "piped", stderr: "piped" })
      .output();
  const pane = async () =>
    new TextDecoder().decode((await tmux("capture-pane", "-p", "-t", "t")).stdout);
  try {
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      JSON.stringify({ ...SLEEPY, inference: { driver: "scripted", script: "script.yaml" } }),
    );
    await Deno.writeTextFile(`${dir}/script.yaml`, JSON.stringify(SLOW));
    const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
    const cmd = [
      "env",
      `MURMUR_HOME=${q(`${dir}/home`)}`,
      "NO_COLOR=1",
      q(Deno.execPath()),
      "run",
      "-A",
      ...entryArgs(MAIN).map(q),
      "run",
      "--manifest",
      q(dir),
    ].join(" ");
    const started = await tmux(
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      "200",
      "-y",
      "40",
      `${cmd}; sleep 120`,
    );
    assert.ok(started.success, new TextDecoder().decode(started.stderr));
    const url = await until(
      "the readiness line",
      async () => /murmur: url (\S+)/.exec(await pane())?.[1],
      60_000,
      100,
    );
    const task = await startTask(url);
    assert.ok((await tmux("send-keys", "-t", "t", "C-c")).success);
    const text = await until(
      "the status line",
      async () => {
        const p = await pane();
        return /status: /.test(p) ? p : undefined;
      },
      60_000,
      100,
    );
    const lines = text.split("\n").map((l) => l.trimEnd());
    const at = lines.findIndex((l) => l.includes("^C"));
    assert.ok(at >= 0, text);
    assert.deepEqual(lines.slice(at, at + 3), [
      "^C",
      `[mur run] SIGINT: ending the session; canceled: ${task.id}`,
      "status: ok",
    ], text);
    await task.sent;
  } finally {
    await tmux("kill-server");
    await Deno.remove(dir, { recursive: true });
  }
});
