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
import { writeFormation } from "../crew/formation_helpers.ts";

const SLEEPY = {
  name: "sleepy",
  version: "0.1.0",
  lifecycle: { task_acceptance: "queue", after_task: "sleep" },
};
const TWO = `roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: coder, manifest: coder}
reachability:
  - {from: lead, to: [coder]}
`;

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

/** A program in a tmux pane of its own server (killed at the end): its screen, its keys. */
async function inTmux<T>(
  args: string[],
  env: Record<string, string>,
  fn: (t: { pane(): Promise<string>; keys(k: string): Promise<void> }) => Promise<T>,
): Promise<T> {
  const socket = `mur-ctrl-c-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = (...a: string[]) =>
    new Deno.Command("tmux", { args: ["-L", socket, ...a], stdout: "piped", stderr: "piped" })
      .output();
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const cmd = [
    "env",
    ...Object.entries(env).map(([k, v]) => `${k}=${q(v)}`),
    q(Deno.execPath()),
    "run",
    "-A",
    ...entryArgs(MAIN).map(q),
    ...args.map(q),
  ].join(" ");
  try {
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
    return await fn({
      pane: async () =>
        new TextDecoder().decode((await tmux("capture-pane", "-p", "-t", "t")).stdout),
      keys: async (k) => assert.ok((await tmux("send-keys", "-t", "t", k)).success),
    });
  } finally {
    await tmux("kill-server");
  }
}

/** The pane's lines from the one holding `^C`, right-trimmed. */
function afterCtrlC(text: string): string[] {
  const lines = text.split("\n").map((l) => l.trimEnd());
  const at = lines.findIndex((l) => l.includes("^C"));
  assert.ok(at >= 0, text);
  return lines.slice(at).filter((l) => l !== "");
}

Deno.test("Ctrl-C in a terminal: the canceled task and the status line each start a line of their own", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-ctrl-c-" });
  try {
    await Deno.writeTextFile(
      `${dir}/murmur.yaml`,
      JSON.stringify({ ...SLEEPY, inference: { driver: "scripted", script: "script.yaml" } }),
    );
    await Deno.writeTextFile(`${dir}/script.yaml`, JSON.stringify(SLOW));
    await inTmux(
      ["run", "--manifest", dir],
      { MURMUR_HOME: `${dir}/home`, NO_COLOR: "1" },
      async (t) => {
        const url = await until(
          "the readiness line",
          async () => /murmur: url (\S+)/.exec(await t.pane())?.[1],
          60_000,
          100,
        );
        const task = await startTask(url);
        await t.keys("C-c");
        const text = await until(
          "the status line",
          async () => {
            const p = await t.pane();
            return /status: /.test(p) ? p : undefined;
          },
          60_000,
          100,
        );
        assert.deepEqual(afterCtrlC(text).slice(0, 3), [
          "^C",
          `[mur run] SIGINT: ending the session; canceled: ${task.id}`,
          "status: ok",
        ], text);
        await task.sent;
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Ctrl-C in a terminal on a formation's launcher: its note and the status line each start a line of their own", async () => {
  const dir = await writeFormation(["lead", "coder"], TWO);
  try {
    await inTmux(
      ["run", "--roster", `${dir}/roster.yaml`],
      { MURMUR_HOME: `${dir}/.home`, NO_COLOR: "1" },
      async (t) => {
        const id = await until(
          "the formation's announcement",
          async () => /^formation: (frm_\w+)$/m.exec(await t.pane())?.[1],
          60_000,
          100,
        );
        await t.keys("C-c");
        const text = await until(
          "the status line",
          async () => {
            const p = await t.pane();
            return /^status: /m.test(p) ? p : undefined;
          },
          60_000,
          100,
        );
        const after = afterCtrlC(text);
        assert.equal(after[0], "^C", text);
        assert.equal(after[1], `[mur run] SIGINT: stopping the formation ${id}`, text);
        assert.equal(after.at(-1), "status: ok", text);
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
