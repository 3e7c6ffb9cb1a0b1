/**
 * A second SIGTERM (or SIGINT) to `mur run` exits at once and leaves nothing running: every
 * process group it started (a hook and what the hook forked, a detached shell, a command that
 * ignores SIGTERM) is killed, the running record and the workdir lock are removed, the trace ends
 * with session_end, and stdout ends with the status line. Checked by pid on a real process tree.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { pidAlive } from "../../src/process_liveness.ts";
import {
  listTasks,
  manifest,
  ofType,
  readTrace,
  runningFiles,
  spawnRun,
  until,
} from "./helpers.ts";

async function pidIn(path: string): Promise<number | undefined> {
  const t = await Deno.readTextFile(path).catch(() => "");
  return /^\d+$/.test(t.trim()) ? Number(t.trim()) : undefined;
}

function kill(pid: number | undefined): void {
  if (!pid) return;
  for (const target of [-pid, pid]) {
    try {
      Deno.kill(target, "SIGKILL");
    } catch { /* gone */ }
  }
}

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`a second ${sig} during an on-task-end hook kills the hook, its children and the detached shell; record removed, status printed`, async () => {
    const run = await spawnRun({
      // advisory: the test checks host pids, which a contained process's $$ and $! are not.
      manifest: manifest({
        containment: "advisory",
        capabilities: { shell: { allow: ["bash"] } },
        lifecycle: { shell_grace_secs: 0.3 },
        hooks: [{ name: "slow", binding: "on-task-end", command: ["./hooks/slow.sh"] }],
      }),
      files: {
        "hooks/slow.sh": "#!/bin/sh\ncat >/dev/null\n" +
          'echo $$ > "$MURMUR_WORKDIR/hook.pid"\n' +
          'sleep 40 & echo $! > "$MURMUR_WORKDIR/hookchild.pid"\n' +
          "sleep 30\necho '{}'\n",
      },
      script: {
        tasks: [{
          turns: [
            {
              steps: [{
                tool_call: {
                  id: "bg",
                  name: "bash",
                  input: { command: "trap '' TERM; echo $$ > detached.pid; exec sleep 60" },
                },
              }],
            },
            { steps: [{ text: "started it" }] },
          ],
        }],
      },
      args: ["--task", "go", "-v"],
    });
    const pids: (number | undefined)[] = [];
    try {
      const url = (await run.line())!.slice("murmur: url ".length);
      await run.line(); // session:
      const workdir = (await run.line())!.slice("workdir: ".length);
      const [hook, child, detached] = await until(
        "the hook and the detached shell to run",
        async () => {
          const got = await Promise.all(
            ["hook.pid", "hookchild.pid", "detached.pid"].map((f) => pidIn(`${workdir}/${f}`)),
          );
          return got.every((p) => p !== undefined) ? got as number[] : undefined;
        },
      );
      pids.push(hook, child, detached);
      for (const p of pids) assert.ok(await pidAlive(p!), `pid ${p} runs before the signals`);

      run.signal(sig);
      // The first signal is handled once the running task reads canceled; the hook still runs.
      await until("the first signal to cancel the task", async () => {
        const t = await listTasks(url);
        return t[0]?.state === "TASK_STATE_CANCELED" ? true : undefined;
      });
      assert.ok(await pidAlive(hook), "the first signal waits for the hook");
      run.signal(sig);
      const end = await run.end(15_000);

      assertEquals(end.code, sig === "SIGTERM" ? 143 : 130, end.stderr);
      assertEquals(end.signal, null, "mur exited by itself");
      assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: canceled");
      assertEquals(await runningFiles(run.home), [], "the running record is removed");
      await assert.rejects(Deno.stat(`${workdir}/.murmur/live.json`), Deno.errors.NotFound);
      const trace = await readTrace(`${workdir}/trace.jsonl`);
      assertEquals(trace.at(-1)!.event_type, "session_end");
      assertEquals(ofType(trace, "session_end").length, 1);
      assertEquals(trace.at(-1)!.exit_status, "canceled");
      // Nothing it started survives: checked by pid (killed children are reaped by init).
      for (
        const [name, p] of [["hook", hook], ["hook's child", child], [
          "detached shell",
          detached,
        ]] as const
      ) {
        await until(
          `the ${name} (pid ${p}) to be gone`,
          async () => (await pidAlive(p)) ? undefined : true,
          10_000,
        );
      }
    } finally {
      for (const p of pids) kill(p);
      await run.close();
    }
  });
}
