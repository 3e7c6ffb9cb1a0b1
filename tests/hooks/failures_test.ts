/**
 * Hooks as commands (docs/hooks.md) failing every way docs/hooks.md "When a hook fails" names: a
 * hook that hangs (killed at the deadline, `MURMUR_HOOK_TIMEOUT_MS`), crashes, prints garbage, or
 * returns an arm its binding does not honour. Observers: logged, the session goes on. Policy hooks:
 * fail closed. Async hooks: `hook_dispatch_error`, and a queue drained before the session ends.
 */
import assert from "node:assert/strict";
import { hookScript, ofType, runLaunch } from "../session/helpers.ts";

const readLog = (workdir: string, name: string) =>
  Deno.readTextFile(`${workdir}/logs/hook-${name}.log`);

Deno.test("on-task-end observers that hang, crash, print garbage or answer an arm they may not: each logged, the task completes, no reopen", async () => {
  const files = {
    "hooks/hang.sh": hookScript("sleep 30\necho '{}'"),
    "hooks/crash.sh": hookScript("echo 'boom: disk on fire' >&2\nexit 3"),
    "hooks/garbage.sh": hookScript("echo 'this is not json'"),
    "hooks/twoarms.sh": hookScript(`echo '{"deny":"x","reopen_task":"y"}'`),
    "hooks/wrongarm.sh": hookScript(`echo '{"reopen_task":"again"}'`),
    "hooks/fine.sh": hookScript(`echo '{"none":true}'`),
  };
  const hooks = ["hang", "crash", "garbage", "twoarms", "wrongarm", "fine"].map((n) => ({
    name: n,
    binding: "on-task-end",
    command: [`./hooks/${n}.sh`],
  }));
  // The deadline is far above what the quick hooks take on a loaded machine and far below the
  // hanging one's 30 s: only the hanging hook can meet it.
  const run = await runLaunch({
    manifest: { name: "hookfail", version: "0.1.0", hooks },
    script: { tasks: [{ turns: [{ steps: [{ text: "all good" }] }, { steps: [{ text: "x" }] }] }] },
    files,
    task: "do it",
    env: { MURMUR_HOOK_TIMEOUT_MS: "5000" },
  });
  try {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.result, "all good");
    const end = ofType(run.trace, "task_end")[0];
    assert.equal(end.exit_status, "ok");
    assert.equal(end.reopen_count, 0);
    assert.equal(ofType(run.trace, "task_reopened").length, 0);

    assert.match(await readLog(run.workdir, "hang"), /failed: it did not answer within 5000 ms/);
    const crash = await readLog(run.workdir, "crash");
    assert.match(crash, /failed: it exited with status 3/);
    assert.match(crash, /stderr: boom: disk on fire/);
    assert.match(
      await readLog(run.workdir, "garbage"),
      /failed: its stdout is not one JSON object: this is not json/,
    );
    assert.match(
      await readLog(run.workdir, "twoarms"),
      /failed: its output sets deny and reopen_task; a hook returns exactly one arm/,
    );
    assert.match(
      await readLog(run.workdir, "wrongarm"),
      /on-task-end: answered reopen-task, but only an on-task-end hook with commit_policy: reopen-task can reopen a task, and this one's commit_policy is none; the answer is discarded/,
    );
    assert.match(await readLog(run.workdir, "fine"), /answered none/);

    // One stderr line per failure, naming the hook and its log.
    for (const n of ["hang", "crash", "garbage", "twoarms"]) {
      assert.match(
        run.stderr,
        new RegExp(`hook ${n} failed on on-task-end: .*logs/hook-${n}\\.log`),
      );
    }
    assert.match(run.stderr, /hook wrongarm answered reopen-task on on-task-end, but /);
    // Only the arm that was not honoured is a hook_dispatch_error (blocking failures are logged).
    assert.deepEqual(
      ofType(run.trace, "hook_dispatch_error").map((e) => [e.hook_name, e.event, e.arm]),
      [["wrongarm", "on-task-end", "reopen-task"]],
    );
  } finally {
    await run.cleanup();
  }
});

Deno.test("policy hooks fail closed: only a clean none lets the call run; deny, crash, garbage, empty reason or another arm refuse it", async () => {
  const files = {
    "hooks/policy.sh": hookScript(`case "$in" in
  *ok-call*) echo '{}';;
  *deny-call*) echo '{"deny":"not on weekdays"}';;
  *crash-call*) exit 2;;
  *garbage-call*) echo 'nope';;
  *empty-call*) echo '{"deny":"  "}';;
  *artifact-call*) echo '{"artifact":{"a":1}}';;
esac`),
    "tools/echo.sh": `#!/bin/sh\ncat\n`,
  };
  const calls = ["ok", "deny", "crash", "garbage", "empty", "artifact"];
  const run = await runLaunch({
    manifest: {
      name: "policy",
      version: "0.1.0",
      tools: [{
        name: "echo",
        description: "echo",
        input_schema: { type: "object", properties: { what: { type: "string" } } },
        command: ["./tools/echo.sh"],
      }],
      hooks: [{
        name: "policy",
        binding: "on-tool-call",
        commit_policy: "deny",
        command: ["./hooks/policy.sh"],
      }],
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: calls.map((c) => ({
              tool_call: { id: `t-${c}`, name: "echo", input: { what: `${c}-call` } },
            })),
          },
          { steps: [{ text: "finished" }] },
        ],
      }],
    },
    files,
    task: "go",
  });
  try {
    assert.equal(run.code, 0, run.stderr);
    const tools = ofType(run.trace, "tool_call");
    assert.deepEqual(tools.map((t) => [t.tool_call_id, t.status]), [
      ["t-ok", "ok"],
      ["t-deny", "error"],
      ["t-crash", "error"],
      ["t-garbage", "error"],
      ["t-empty", "error"],
      ["t-artifact", "error"],
    ]);
    const denied = ofType(run.trace, "call_denied");
    assert.deepEqual(denied.map((d) => [d.event, d.hook_name, d.target]), [
      ["on-tool-call", "policy", "echo"],
      ["on-tool-call", "policy", "echo"],
      ["on-tool-call", "policy", "echo"],
      ["on-tool-call", "policy", "echo"],
      ["on-tool-call", "policy", "echo"],
    ]);
    assert.equal(denied[0].reason, "not on weekdays");
    assert.match(String(denied[1].reason), /the policy hook failed: it exited with status 2/);
    assert.match(String(denied[2].reason), /the policy hook failed: its stdout is not one JSON/);
    assert.equal(denied[3].reason, "the policy hook gave no reason");
    assert.match(String(denied[4].reason), /answered artifact, which is neither none nor deny/);
    assert.deepEqual(
      ofType(run.trace, "hook_dispatch_error").map((e) => [e.hook_name, e.arm]),
      [["policy", "artifact"]],
    );
    const log = await readLog(run.workdir, "policy");
    assert.match(log, /deny with an empty reason; the call is refused/);
  } finally {
    await run.cleanup();
  }
});

Deno.test("async hooks: errors and timeouts are hook_dispatch_error; arms are discarded; the queue is drained before session_end", async () => {
  const files = {
    "hooks/slow.sh": hookScript(`sleep 0.3\nprintf '%s\n' "$in" >> seen.jsonl\necho '{}'`),
    "hooks/bad.sh": hookScript("exit 1"),
    "hooks/hang.sh": hookScript("sleep 30"),
    "hooks/arm.sh": hookScript(`echo '{"reopen_task":"no"}'`),
  };
  const hooks = [
    {
      name: "slow",
      binding: "on-inference",
      execution_mode: "async",
      command: ["./hooks/slow.sh"],
    },
    { name: "bad", binding: "on-task-end", execution_mode: "async", command: ["./hooks/bad.sh"] },
    {
      name: "hang",
      binding: "on-session-start",
      execution_mode: "async",
      command: ["./hooks/hang.sh"],
    },
    { name: "arm", binding: "on-task-end", execution_mode: "async", command: ["./hooks/arm.sh"] },
  ];
  const run = await runLaunch({
    manifest: { name: "async", version: "0.1.0", hooks },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "c1", name: "nothing", input: {} } }] },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
    files,
    task: "go",
    // The slow hook takes 0.3 s, the hanging one 30: the deadline sits far from both.
    env: { MURMUR_HOOK_TIMEOUT_MS: "5000" },
  });
  try {
    assert.equal(run.code, 0, run.stderr);
    // Both on-inference events reached the slow hook before the session ended.
    const seen = (await Deno.readTextFile(`${run.workdir}/seen.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(seen.map((s) => [s.event, s.turn, s.decision]), [
      ["on-inference", 0, "tool_call"],
      ["on-inference", 1, "end_turn"],
    ]);
    assert.equal(seen[0].session_id, run.sessionId);
    const errs = ofType(run.trace, "hook_dispatch_error").map((e) => [e.hook_name, e.event, e.arm]);
    assert.deepEqual(
      errs.sort(),
      [["arm", "on-task-end", "reopen-task"], ["bad", "on-task-end", "error"], [
        "hang",
        "on-session-start",
        "timeout",
      ]].sort(),
    );
    // Every hook_dispatch_error is written before session_end.
    const types = run.trace.map((e) => e.event_type);
    assert.ok(types.lastIndexOf("hook_dispatch_error") < types.indexOf("session_end"));
    assert.equal(ofType(run.trace, "task_reopened").length, 0);
  } finally {
    await run.cleanup();
  }
});

Deno.test("an on-shell observer that answers deny: one readable warning, and the command runs", async () => {
  const run = await runLaunch({
    manifest: {
      name: "observer",
      version: "0.1.0",
      capabilities: { shell: { allow: ["sh"] } },
      hooks: [{ name: "observer", binding: "on-shell", command: ["./hooks/observer.sh"] }],
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "c", name: "sh", input: { command: "echo ran" } } }] },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
    files: { "hooks/observer.sh": hookScript(`echo '{"deny":"no"}'`) },
    task: "go",
  });
  try {
    assert.equal(run.code, 0, run.stderr);
    assert.ok(
      run.stderr.includes(
        "[murmur] hook observer answered deny on on-shell, but only an on-tool-call or on-shell hook with commit_policy: deny can refuse a call, and this one's commit_policy is none; the answer is discarded (logs/hook-observer.log)\n",
      ),
      run.stderr,
    );
    assert.equal(ofType(run.trace, "shell")[0].exit_code, 0);
  } finally {
    await run.cleanup();
  }
});
