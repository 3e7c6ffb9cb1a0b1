/**
 * Faults (issue 10): the capsule SIGKILLed mid-task (watchers exit 1 with E-IO-003 and find it
 * gone, --resume continues the context and reports the detached shell it lost); a tool that
 * crashes or hangs (cancel still works, the session goes on); a harness that crashes or hangs; a
 * hook that hangs;
 * the trace becoming unwritable mid-session and from the start (E-RUN-007, a clean end).
 */
import assert from "node:assert/strict";
import { writeCapsule } from "../helpers/capsule.ts";
import { type Mur, runMur, startMur as startCli } from "../helpers/mur.ts";
import { RawSse } from "../helpers/raw_sse.ts";
import { pidAlive, startMur, waitFor } from "./helpers/mur.ts";
import { report } from "./helpers/rand.ts";
import { hostPidsWith, sleepMarker } from "../helpers/host_pids.ts";

let faults = 0;
type J = Record<string, unknown>;

async function traceLines(workdir: string): Promise<J[]> {
  const text = await Deno.readTextFile(`${workdir}/trace.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
}

async function readPid(path: string, ms = 15_000): Promise<number> {
  let pid = 0;
  await waitFor(`a pid in ${path}`, async () => {
    const t = (await Deno.readTextFile(path).catch(() => "")).trim().split("\n")[0];
    pid = Number(t);
    return pid > 0;
  }, ms);
  return pid;
}

function killPid(pid: number | undefined) {
  if (!pid) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* gone */ }
}

/** `mur <args>` to its end, bounded. */
function murCli(args: string[], env: Record<string, string>, ms = 30_000) {
  return runMur({ args, env: { NO_COLOR: "1", ...env } }, ms);
}

Deno.test("faults: SIGKILL mid-task — every watcher exits 1 with E-IO-003, --resume continues the context and reports the lost shell", async () => {
  const mur = await startMur({
    manifest: {
      name: "killed",
      version: "0.1.0",
      lifecycle: { shell_grace_secs: 0.2 },
      capabilities: { shell: { allow: ["sh"] } },
    },
    script: {
      tasks: [
        { match: "ended without reporting", turns: [{ steps: [{ text: "noted the loss" }] }] },
        { match: "carry on", turns: [{ steps: [{ text: "carrying on" }] }] },
        {
          turns: [
            {
              steps: [{
                tool_call: {
                  id: "bg",
                  name: "sh",
                  input: { command: "echo $$ > bg.pid; exec sleep 60" },
                },
              }],
            },
            { steps: [{ text: "working", repeat: 5 }, { delay_ms: 60_000 }] },
          ],
        },
      ],
    },
    args: ["--task", "start the job"],
  });
  const watchers: Mur[] = [];
  let bg: number | undefined;
  try {
    const wd = mur.ready.workdir;
    bg = await readPid(`${wd}/bg.pid`);
    await waitFor(
      "the shell to detach",
      async () => (await traceLines(wd)).some((l) => l.event_type === "shell_detached"),
      15_000,
    );
    for (let i = 0; i < 3; i++) {
      watchers.push(
        await startCli({
          args: ["watch", "--url", mur.ready.url],
          env: { NO_COLOR: "1", MURMUR_HOME: mur.home },
        }),
      );
    }
    // Every watcher has attached and printed the replayed task (the log holds its events).
    await mur.waitSubscriptions(3, 20_000);
    await waitFor(
      "every watcher printed the replay",
      () => watchers.every((w) => w.out.text().includes("[working]")),
      20_000,
    );
    mur.kill("SIGKILL");
    faults++;
    await mur.status;
    const results = await Promise.all(watchers.map((w) => w.end(15_000)));
    for (const r of results) {
      const stderr = r.stderr;
      assert.equal(r.code, 1, stderr);
      assert.match(stderr, /error\[E-IO-003\]: connection to .* lost after event id \d+/);
      // A fresh look finds it gone (its process dead, or nothing answering at its address),
      // so no reattach hint (docs/watch.md "When the stream ends").
      assert.doesNotMatch(stderr, /again to reattach/);
      assert.match(
        stderr,
        /\[murmur\] (the capsule is gone without ending its session|nothing answers at )/,
      );
    }

    const oldTrace = await traceLines(wd);
    const oldCtx = oldTrace.find((l) => l.event_type === "task_start")!.context_id as string;
    const resumed = await murCli(
      [
        "run",
        "--manifest",
        mur.dir,
        "--json",
        "--resume",
        mur.ready.session_id,
        "--task",
        "carry on",
      ],
      { MURMUR_HOME: mur.home },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    const ready = JSON.parse(resumed.stdout.split("\n")[0]) as { workdir: string };
    const trace = await traceLines(ready.workdir);
    const start = trace.find((l) => l.event_type === "session_start")!;
    assert.equal(start.resumed_from, mur.ready.session_id);
    assert.equal(start.context_id, oldCtx);
    const starts = trace.filter((l) => l.event_type === "task_start");
    assert.deepEqual(starts.map((s) => [s.source, s.context_id]), [["task_md", oldCtx], [
      "detached_lost",
      oldCtx,
    ]]);
    const lost = (await traceLines(wd)).filter((l) => l.event_type === "shell_lost");
    assert.equal(lost.length, 1);
  } finally {
    for (const w of watchers) await w.close();
    killPid(bg);
    await mur.close();
  }
});

Deno.test("faults: a tool that crashes is a result; a tool that hangs is canceled and killed; the session goes on", async () => {
  const toolMarker = sleepMarker();
  const tool = (name: string, file: string) => ({
    name,
    description: name,
    input_schema: { type: "object" },
    command: [`./tools/${file}`],
  });
  const mur = await startMur({
    manifest: {
      name: "tools",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
      tools: [tool("crashy", "crash.sh"), tool("hangy", "hang.sh")],
    },
    files: {
      "tools/crash.sh": "#!/bin/sh\necho partial output\nkill -SEGV $$\n",
      // The marker finds it from the host, whatever pid namespace it runs in (host_pids.ts).
      "tools/hang.sh": `#!/bin/sh\necho $$ > hang.pid\nexec sleep 1000 ${toolMarker}\n`,
    },
    script: {
      tasks: [
        {
          match: "crash",
          turns: [{ steps: [{ tool_call: { id: "c", name: "crashy", input: {} } }] }, {
            steps: [{ text: "survived the crash" }],
          }],
        },
        {
          match: "hang",
          turns: [{ steps: [{ tool_call: { id: "h", name: "hangy", input: {} } }] }, {
            steps: [{ text: "never" }],
          }],
        },
        { turns: [{ steps: [{ text: "still here" }] }] },
      ],
    },
  });
  let hung: number | undefined;
  try {
    const send = async (text: string, wait = true) =>
      (await mur.rpc("SendMessage", {
        message: { messageId: text, role: "ROLE_USER", parts: [{ text }] },
        ...(wait ? {} : { configuration: { returnImmediately: true } }),
      })).result as {
        task: {
          id: string;
          status: { state: string };
          artifacts?: { parts: { text: string }[] }[];
        };
      };
    const crashed = await send("crash");
    faults++;
    assert.equal(crashed.task.status.state, "TASK_STATE_COMPLETED");
    assert.equal(crashed.task.artifacts?.[0].parts[0].text, "survived the crash");

    const hanging = await send("hang", false);
    await readPid(`${mur.ready.workdir}/hang.pid`);
    await waitFor("the hung tool on the host", () => hostPidsWith(toolMarker).length === 1, 15_000);
    hung = hostPidsWith(toolMarker)[0];
    faults++;
    // CancelTask answers without waiting on the tool (which would sleep 1000 s): the rpc is
    // bounded (15 s), so a cancel that waited fails here.
    const canceled = (await mur.rpc("CancelTask", { id: hanging.task.id })).result as {
      status: { state: string };
    };
    assert.equal(canceled.status.state, "TASK_STATE_CANCELED");
    await waitFor("the hung tool to be killed", () => !pidAlive(hung!), 15_000);
    const after = await send("and then");
    assert.equal(after.task.status.state, "TASK_STATE_COMPLETED");
    assert.ok(mur.alive());
  } finally {
    killPid(hung);
    await mur.close();
  }
});

Deno.test("faults: a harness that crashes fails its task; one that hangs is canceled and killed; the session goes on", async () => {
  const mur = await startMur({
    manifest: {
      name: "harness",
      version: "0.1.0",
      inference: { transport: "process", driver: "claude-code", command: "./fake-claude.sh" },
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 4 },
    },
    files: {
      // --version answers; with a `crash` file in its cwd (the workdir) it dies at once, else hangs.
      "fake-claude.sh": [
        "#!/bin/sh",
        'case "$*" in *--version*) echo "2.1.0 (Claude Code)"; exit 0;; esac',
        'if [ -e crash ]; then echo "not json"; kill -SEGV $$; fi',
        'echo $$ > "$PWD/harness.pid"',
        "exec sleep 1000",
        "",
      ].join("\n"),
    },
  });
  let hung: number | undefined;
  try {
    const send = async (text: string, wait = true) =>
      (await mur.rpc("SendMessage", {
        message: { messageId: text, role: "ROLE_USER", parts: [{ text }] },
        ...(wait ? {} : { configuration: { returnImmediately: true } }),
      })).result as { task: { id: string; status: { state: string } } };
    await Deno.writeTextFile(`${mur.ready.workdir}/crash`, "");
    const crashed = await send("please crash");
    faults++;
    assert.equal(crashed.task.status.state, "TASK_STATE_FAILED");

    await Deno.remove(`${mur.ready.workdir}/crash`);
    const hanging = await send("please hang", false);
    hung = await readPid(`${mur.ready.workdir}/harness.pid`);
    faults++;
    const canceled = (await mur.rpc("CancelTask", { id: hanging.task.id })).result as {
      status: { state: string };
    };
    assert.ok(["TASK_STATE_CANCELED", "TASK_STATE_WORKING"].includes(canceled.status.state));
    await waitFor("the hung harness to be killed", () => !pidAlive(hung!), 20_000);
    await waitFor("the canceled task to end", async () => {
      const t = (await mur.rpc("GetTask", { id: hanging.task.id })).result as {
        status: { state: string };
      };
      return t.status.state === "TASK_STATE_CANCELED";
    }, 20_000);
    assert.ok(mur.alive());
    // The session still takes and ends tasks.
    await Deno.writeTextFile(`${mur.ready.workdir}/crash`, "");
    const next = await send("please crash again");
    assert.equal(next.task.status.state, "TASK_STATE_FAILED");
  } finally {
    killPid(hung);
    await mur.close();
  }
});

Deno.test("faults: hooks that hang are killed at their deadline; an on-shell policy hook fails closed and the task completes", async () => {
  const hookMarker = sleepMarker();
  const mur = await startMur({
    manifest: {
      name: "hooks",
      version: "0.1.0",
      capabilities: { shell: { allow: ["sh"] } },
      hooks: [
        {
          name: "slow-gate",
          binding: "on-shell",
          execution_mode: "blocking",
          commit_policy: "deny",
          command: ["./hooks/hang.sh"],
        },
        {
          name: "slow-end",
          binding: "on-task-end",
          execution_mode: "blocking",
          commit_policy: "none",
          command: ["./hooks/hang.sh"],
        },
      ],
    },
    files: {
      "hooks/hang.sh":
        `#!/bin/sh\necho $$ >> "$MURMUR_WORKDIR/hook.pids"\nexec sleep 1000 ${hookMarker}\n`,
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{
              tool_call: {
                id: "t1",
                name: "sh",
                input: { command: "echo should-not-run > ran.txt" },
              },
            }],
          },
          { steps: [{ text: "done anyway" }] },
        ],
      }],
    },
    args: ["--task", "go"],
    env: { MURMUR_HOOK_TIMEOUT_MS: "800" },
  });
  let pids: number[] = [];
  try {
    const st = await Promise.race([
      mur.status,
      new Promise<null>((r) => setTimeout(() => r(null), 30_000)),
    ]);
    assert.ok(st !== null, "the session did not end with its hooks hanging");
    faults += 2;
    pids = (await Deno.readTextFile(`${mur.ready.workdir}/hook.pids`)).trim().split("\n").map(
      Number,
    );
    assert.ok(pids.length >= 2, `hook pids ${pids}`);
    // Their pids may be a pid namespace's: the marker finds any left on the host.
    await waitFor("every hung hook gone", () => hostPidsWith(hookMarker).length === 0, 15_000);
    const trace = await traceLines(mur.ready.workdir);
    assert.ok(
      trace.some((l) => l.event_type === "call_denied"),
      "the hung policy hook did not deny the call",
    );
    assert.equal(
      await Deno.stat(`${mur.ready.workdir}/ran.txt`).then(() => true, () => false),
      false,
    );
    const end = trace.find((l) => l.event_type === "task_end")!;
    assert.equal(end.exit_status, "ok");
    assert.equal(st!.code, 0, mur.stderrLines.join("\n"));
  } finally {
    pids.forEach(killPid);
    await mur.close();
  }
});

Deno.test("faults: the trace becoming unwritable mid-session (a file-size limit) ends it cleanly with E-RUN-007", async () => {
  const turns = Array.from({ length: 40 }, (_, i) => ({
    steps: [{ delay_ms: 150 }, {
      tool_call: { id: `t${i}`, name: "sh", input: { command: "echo hi" } },
    }],
  }));
  const mur = await startMur({
    manifest: {
      name: "fsize",
      version: "0.1.0",
      inference: { max_turns: 60 },
      capabilities: { shell: { allow: ["sh"] } },
    },
    script: { tasks: [{ turns: [...turns, { steps: [{ text: "done" }] }] }] },
    args: ["--task", "go"],
  });
  let watch: RawSse | undefined;
  try {
    const wd = mur.ready.workdir;
    const held = ((await mur.rpc("ListTasks")).result as { tasks: { id: string }[] }).tasks[0].id;
    watch = await RawSse.open(mur.base, "SubscribeToTask", { id: held });
    await waitFor(
      "a few turns",
      async () => (await traceLines(wd)).filter((l) => l.event_type === "tool_call").length >= 3,
      20_000,
    );
    // From now on the trace cannot grow past a few more lines: EFBIG (and SIGXFSZ) on the write.
    const size = (await Deno.stat(`${wd}/trace.jsonl`)).size;
    const lim = await new Deno.Command("prlimit", {
      args: ["--pid", String(mur.pid), `--fsize=${size + 1500}`],
    }).output();
    assert.equal(lim.code, 0, new TextDecoder().decode(lim.stderr));
    faults++;
    const evs = await watch.read((e) => {
      const su = (e.data.result as Record<string, J>).statusUpdate as
        | { status?: { state: string } }
        | undefined;
      return ["TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_COMPLETED"].includes(
        su?.status?.state ?? "",
      );
    }, 20_000);
    const st = await Promise.race([
      mur.status,
      new Promise<null>((r) => setTimeout(() => r(null), 20_000)),
    ]);
    assert.ok(st !== null, "the session did not end");
    assert.equal(st!.signal, null, `killed by ${st!.signal}`);
    assert.equal(st!.code, 1);
    const stderr = mur.stderrLines.join("\n");
    assert.match(stderr, /error\[E-RUN-007\]: the session trace could not be written/);
    // The task ends failed with the runtime error, not as if someone had canceled it.
    const last = (evs.at(-1)!.data.result as Record<string, J>).statusUpdate as {
      status: { state: string; message: { parts: { text: string }[] } };
    };
    assert.equal(last.status.state, "TASK_STATE_FAILED");
    assert.match(last.status.message.parts[0].text, /^error\[E-RUN-007\]/);
    // A clean end: the running record is gone.
    const running = [...Deno.readDirSync(`${mur.home}/running`)].map((e) => e.name);
    assert.deepEqual(running, []);
  } finally {
    watch?.close();
    await mur.close();
  }
});

// A trace cannot be unwritable from the start any more: each session's folder is created fresh
// (docs/running.md "Files"), so a file system that refuses writes refuses the workdir's first file,
// MURMUR.md, before the door opens. The trace failing mid-session is the test above.
Deno.test("faults: a workdir that cannot be written from the start ends the launch cleanly with E-IO-006", async () => {
  const dir = await writeCapsule({
    manifest: { name: "devfull", version: "0.1.0" },
    script: { tasks: [{ turns: [{ steps: [{ text: "hi" }] }] }] },
  });
  try {
    const wd = `${dir}/wd`;
    await Deno.mkdir(wd);
    await Deno.symlink("/dev/full", `${wd}/MURMUR.md`);
    const r = await murCli(["run", "--manifest", dir, "--workdir", wd, "--task", "hello"], {
      MURMUR_HOME: `${dir}/home`,
    }, 20_000);
    faults++;
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /error\[E-IO-006\]: --workdir .*wd: could not write MURMUR\.md: the file system refused the write/,
    );
    const running = await Array.fromAsync(Deno.readDir(`${dir}/home/running`)).catch(() => []);
    assert.deepEqual(running, []);
    await assert.rejects(Deno.stat(`${wd}/.murmur/live.json`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("faults: count", () => {
  report("faults injected", faults);
  assert.ok(faults >= 9, `only ${faults} faults were injected`);
});
