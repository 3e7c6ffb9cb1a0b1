/**
 * A session's life outside its tasks (docs/running.md, "Environment"): the
 * running record under `$MURMUR_HOME/running/` (0600 in a 0700 folder) exists while it runs and is
 * gone after; SIGTERM and SIGINT mid-task end it cleanly (`status: canceled`, exit 1, trace closed,
 * record removed); a signal while idle ends it `ok`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  listTasks,
  manifest,
  ofType,
  readTrace,
  rpc,
  type Run,
  runningFiles,
  spawnRun,
  until,
} from "./helpers.ts";
import { runMur } from "../cli/helpers.ts";
import { pidAlive } from "../../src/process_liveness.ts";

/** The model says something, then thinks for a long time: a task that is mid-turn until stopped. */
const LONG = {
  tasks: [{ turns: [{ steps: [{ text: "working on it" }, { delay_ms: 60_000 }, { text: "x" }] }] }],
};

async function readyLines(run: Run): Promise<{ url: string; sessionId: string }> {
  const urlLine = (await run.line())!;
  const sessionLine = (await run.line())!;
  assert.match(urlLine, /^murmur: url localhost:\d+$/);
  return { url: urlLine.slice("murmur: url ".length), sessionId: sessionLine.slice(9) };
}

Deno.test("running record: 0600 in a 0700 folder with the contract fields while running; removed at the end", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: { tasks: [{ turns: [{ steps: [{ text: "a" }, { delay_ms: 1500 }, { text: "b" }] }] }] },
    args: ["--task", "go", "--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    // Written before the readiness line: it is there at once.
    assertEquals(await runningFiles(run.home), [`${ready.session_id}.json`]);
    const path = `${run.home}/running/${ready.session_id}.json`;
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    assertEquals((await Deno.stat(`${run.home}/running`)).mode! & 0o777, 0o700);
    const rec = JSON.parse(await Deno.readTextFile(path));
    for (
      const k of [
        "session_id",
        "url",
        "pid",
        "capsule_name",
        "capsule_version",
        "workdir",
        "started_at",
      ]
    ) assert.ok(k in rec, `record lacks ${k}`);
    assertEquals(rec.session_id, ready.session_id);
    assertEquals(rec.url, ready.url);
    assertEquals(rec.pid, run.pid);
    assertEquals([rec.capsule_name, rec.capsule_version], ["runtest", "0.3.0"]);
    assertEquals(rec.workdir, ready.workdir);
    assert.match(rec.started_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.ok(Math.abs(Date.parse(rec.started_at) - Date.now()) < 60_000);
    assert.ok(!("tokens" in rec), "no tokens on a public door");

    const end = await run.end();
    assertEquals(end.code, 0, end.stderr);
    assertEquals(await runningFiles(run.home), [], "record (and any .tmp) removed at the end");
  } finally {
    await run.close();
  }
});

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`${sig} mid-task: status: canceled, exit 1, record removed, trace closed with session_end`, async () => {
    const run = await spawnRun({
      manifest: manifest(),
      script: LONG,
      args: ["--task", "go", "-v"],
    });
    try {
      const { url, sessionId } = await readyLines(run);
      const workdir = (await run.line())!.slice("workdir: ".length);
      await until("the launch task to be working", async () => {
        const tasks = await listTasks(url);
        return tasks[0]?.state === "TASK_STATE_WORKING" ? true : undefined;
      });
      assertEquals(await runningFiles(run.home), [`${sessionId}.json`]);
      run.signal(sig);
      // Bounded at 15 s: the 60 s turn was not waited out.
      const end = await run.end(15_000);
      assertEquals(end.signal, null, "exited by itself, not killed by the signal");
      assertEquals(end.code, 1, end.stderr);
      assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: canceled");
      // The message names the deciding task and its own final status.
      const launchId = (await readTrace(`${workdir}/trace.jsonl`)).find((l) =>
        l.event_type === "task_start"
      )!.task_id;
      assert.ok(
        end.stderr.includes(
          `error[E-RUN-040]: the launch task ${launchId} ended canceled: task canceled\n`,
        ),
        end.stderr,
      );
      assertEquals(await runningFiles(run.home), []);

      const trace = await readTrace(`${workdir}/trace.jsonl`);
      assertEquals(trace.at(-1)!.event_type, "session_end");
      assertEquals(trace.at(-1)!.exit_status, "canceled");
      assertEquals(ofType(trace, "session_end").length, 1);
      const taskEnd = ofType(trace, "task_end");
      assertEquals(taskEnd.length, 1);
      assertEquals(taskEnd[0].exit_status, "canceled");
      assertEquals(ofType(trace, "task_canceled").length, 1);
      // result.txt is written on this outcome too.
      const result = await Deno.readTextFile(`${workdir}/out/result.txt`);
      assert.ok(result.length > 0);
      assert.ok(!result.includes("working on it x"), "the canceled turn did not finish");
    } finally {
      await run.close();
    }
  });
}

Deno.test("SIGTERM while idle (no task yet): status: ok, exit 0, record removed", async () => {
  // No --task and no task.md: the session waits for a task over the door.
  const run = await spawnRun({ manifest: manifest(), script: LONG, args: ["-v"] });
  try {
    await readyLines(run);
    const workdir = (await run.line())!.slice("workdir: ".length);
    await run.line(); // manifest:
    await run.line(); // driver:
    assertEquals((await runningFiles(run.home)).length, 1);
    run.signal("SIGTERM");
    const end = await run.end(15_000);
    assertEquals(end.code, 0, end.stderr);
    assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: ok");
    assertEquals(await runningFiles(run.home), []);
    const trace = await readTrace(`${workdir}/trace.jsonl`);
    assertEquals(trace.map((l) => l.event_type), ["session_start", "session_end"]);
    assertEquals(trace[1].exit_status, "ok");
  } finally {
    await run.close();
  }
});

Deno.test("SIGTERM while a shell command runs: the command is stopped, status: canceled, exit 1", async () => {
  const run = await spawnRun({
    // advisory: the test checks the command's host pid, which a contained command's $$ is not.
    manifest: manifest({ containment: "advisory", capabilities: { shell: { allow: ["bash"] } } }),
    script: {
      tasks: [{
        turns: [
          {
            steps: [{
              tool_call: {
                id: "s1",
                name: "bash",
                input: { command: "echo $$ > sleeper.pid; exec sleep 60" },
              },
            }],
          },
          { steps: [{ text: "slept" }] },
        ],
      }],
    },
    args: ["--task", "go", "-v"],
  });
  try {
    await readyLines(run);
    const workdir = (await run.line())!.slice("workdir: ".length);
    const pid = await until("the shell command to start", async () => {
      const t = await Deno.readTextFile(`${workdir}/sleeper.pid`).catch(() => "");
      return t.trim() ? Number(t.trim()) : undefined;
    });
    run.signal("SIGTERM");
    const end = await run.end(15_000);
    assertEquals(end.code, 1, end.stderr);
    assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: canceled");
    // The sleeping command is gone too (Deno.kill with signal 0 would throw NotFound / ESRCH).
    await until("the shell command to be gone", () => {
      try {
        Deno.kill(pid, "SIGCONT");
        return undefined;
      } catch {
        return true;
      }
    }, 5_000);
    const trace = await readTrace(`${workdir}/trace.jsonl`);
    assertEquals(trace.at(-1)!.event_type, "session_end");
    assertEquals(trace.at(-1)!.exit_status, "canceled");
    assertEquals(await runningFiles(run.home), []);
  } finally {
    await run.close();
  }
});

Deno.test("SIGTERM the moment the url line is read: handled (not the default kill), record removed", async () => {
  for (let i = 0; i < 3; i++) {
    const run = await spawnRun({
      manifest: manifest(),
      script: LONG,
      args: ["--task", "go", "-v"],
    });
    try {
      assert.match((await run.line())!, /^murmur: url /);
      run.signal("SIGTERM");
      const end = await run.end(15_000);
      assertEquals(end.signal, null, `round ${i}: killed by the signal's default action`);
      assertEquals(end.code, 1, end.stderr);
      assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: canceled");
      assertEquals(await runningFiles(run.home), []);
    } finally {
      await run.close();
    }
  }
});

Deno.test("a second SIGTERM exits at once (143) while the first one's teardown still waits, and kills the command it waited on", async () => {
  // The command ignores SIGTERM, so canceling it waits out the kill grace before SIGKILL.
  const run = await spawnRun({
    // A kill grace far longer than the test: the first teardown cannot end by itself in time.
    // advisory: the test checks the command's host pid, which a contained command's $$ is not.
    manifest: manifest({
      containment: "advisory",
      capabilities: { shell: { allow: ["bash"] } },
      lifecycle: { shell_grace_secs: 600 },
    }),
    script: {
      tasks: [{
        turns: [{
          steps: [{
            tool_call: {
              id: "s1",
              name: "bash",
              input: { command: "trap '' TERM; echo $$ > stubborn.pid; sleep 60" },
            },
          }],
        }],
      }],
    },
    args: ["--task", "go", "-v"],
  });
  let pid = 0;
  try {
    await readyLines(run);
    const workdir = (await run.line())!.slice("workdir: ".length);
    pid = await until("the shell command to start", async () => {
      const t = await Deno.readTextFile(`${workdir}/stubborn.pid`).catch(() => "");
      return t.trim() ? Number(t.trim()) : undefined;
    });
    run.signal("SIGTERM");
    // The first signal's teardown has begun once the cancel is in the trace; it then waits out
    // the 600 s grace, so an exit now (143, not the teardown's status 1) is the second signal's.
    await until("the first SIGTERM's cancel", async () => {
      const trace = await readTrace(`${workdir}/trace.jsonl`).catch(() => []);
      return ofType(trace, "task_canceled").length ? true : undefined;
    });
    run.signal("SIGTERM");
    const end = await run.end(60_000);
    assertEquals(end.code, 143, end.stderr);
    assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: canceled");
    await until(
      "the stubborn command to be gone",
      async () => (await pidAlive(pid)) ? undefined : true,
      10_000,
    );
  } finally {
    if (pid) {
      try {
        Deno.kill(-pid, "SIGKILL");
      } catch {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* gone */ }
      }
    }
    await run.close();
  }
});

for (const how of ["SIGINT", "mur stop"] as const) {
  Deno.test(`queue + sleep, launch task completed, an A2A task running: ${how} ends the session ok (A2A tasks of a sleeping capsule do not decide)`, async () => {
    const run = await spawnRun({
      manifest: manifest({ lifecycle: { task_acceptance: "queue", after_task: "sleep" } }),
      script: {
        tasks: [
          { match: "quick", turns: [{ steps: [{ text: "done" }] }] },
          LONG.tasks[0],
        ],
      },
      args: ["--task", "quick", "-v"],
    });
    try {
      const { url, sessionId } = await readyLines(run);
      const workdir = (await run.line())!.slice("workdir: ".length);
      await until("the launch task to complete", async () => {
        const tasks = await listTasks(url);
        return tasks[0]?.state === "TASK_STATE_COMPLETED" ? true : undefined;
      });
      const sent = await rpc(url, "SendMessage", {
        message: { messageId: "m-slow", role: "ROLE_USER", parts: [{ text: "slow" }] },
        configuration: { returnImmediately: true },
      });
      const a2a = (sent.result as { task: { id: string } }).task.id;
      await until("the A2A task to be working", async () => {
        const t = (await listTasks(url)).find((x) => x.id === a2a);
        return t?.state === "TASK_STATE_WORKING" ? true : undefined;
      });
      if (how === "SIGINT") run.signal("SIGINT");
      else {
        const stop = await runMur(["stop", sessionId], { MURMUR_HOME: run.home });
        assertEquals(stop.code, 0, stop.stderr);
        assert.ok(stop.stdout.includes(`canceled: ${a2a}\n`), stop.stdout);
      }
      const end = await run.end(15_000);
      assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: ok");
      assertEquals(end.code, 0, end.stderr);
      assert.ok(!end.stderr.includes("E-RUN-040"), end.stderr);
      const trace = await readTrace(`${workdir}/trace.jsonl`);
      assertEquals(trace.at(-1)!.exit_status, "ok");
      const ends = ofType(trace, "task_end").map((l) => [l.task_id, l.exit_status]);
      assertEquals(ends.at(-1), [a2a, "canceled"]);
    } finally {
      await run.close();
    }
  });
}

Deno.test("a failing A2A task that decides is named in E-RUN-040 with its own final status", async () => {
  const run = await spawnRun({
    manifest: manifest(),
    script: { tasks: [{ turns: [{ steps: [{ error: "provider overloaded" }] }] }] },
    args: ["-v"],
  });
  try {
    const { url } = await readyLines(run);
    const sent = await rpc(url, "SendMessage", {
      message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "go" }] },
    });
    const task = (sent.result as { task: { id: string } }).task.id;
    const end = await run.end(15_000);
    assertEquals(end.code, 1);
    assertEquals(end.stdout.trimEnd().split("\n").at(-1), "status: failed");
    assert.match(
      end.stderr,
      new RegExp(
        `error\\[E-RUN-040\\]: task ${task} ended failed: task failed \\(driver_error\\): .*provider overloaded`,
      ),
    );
  } finally {
    await run.close();
  }
});
