/**
 * `mur send` and `mur answer` against a real capsule (`mur run --json`, scripted driver), as
 * subprocesses with the session's MURMUR_HOME: a task from the argument and from stdin, a
 * follow-up in a context, `--follow` exiting by the task's outcome (its reason on stderr, its
 * `[<state>]` alone on stdout), an answer by the task's label, and the refusals: an answer to a
 * task that does not wait, a task the session does not hold. The door is asked what each did.
 */
import assert from "node:assert/strict";
import { startMur } from "../helpers/mur.ts";
import { murLine } from "../../src/invocation.ts";
import { rpc } from "../run/helpers.ts";
import { runMur, spawnMur, tempHome } from "./helpers.ts";
import { murArgv } from "../helpers/mur.ts";

const MANIFEST = `name: sender
version: "0.1.0"
inference:
  transport: http
  driver: scripted
  script: script.yaml
  max_turns: 4
lifecycle:
  task_acceptance: queue
  queue_depth: 4
  after_task: sleep
tools:
  - builtin: request-input
`;

const SCRIPT = `tasks:
  - match: "deploy"
    turns:
      - steps:
          - tool_call: {id: t1, name: request-input, input: {prompt: "Which branch?"}}
      - steps:
          - text: "Deployed."
  - match: "fail"
    turns:
      - steps:
          - error: "provider overloaded"
  - turns:
      - steps:
          - text: "Hello — ж✓"
`;

type Task = { id: string; contextId: string; status: { state: string } };

Deno.test("mur send and mur answer: tasks, a follow-up, --follow by outcome, answers and refusals", async () => {
  const home = await tempHome();
  const dir = await Deno.makeTempDir({ prefix: "mur-send-" });
  await Deno.writeTextFile(`${dir}/murmur.yaml`, MANIFEST);
  await Deno.writeTextFile(`${dir}/script.yaml`, SCRIPT);
  const capsule = await startMur({
    args: ["run", "--manifest", dir, "--json"],
    env: { MURMUR_HOME: home },
    readyMs: 30_000,
    removeOnClose: [dir],
  });
  const { url, session_id: sid } = capsule.ready as unknown as { url: string; session_id: string };
  const env = { MURMUR_HOME: home };
  const getTask = async (id: string) =>
    ((await rpc(url, "GetTask", { id })) as { result: Task }).result;
  try {
    // A task from the argument: its id, context and state on stdout, what to do next on stderr.
    const first = await runMur(["send", "say hello"], env);
    assert.equal(first.code, 0, first.stderr);
    const m = /^task: +(tsk_\w+)\ncontext: (ctx_\w+)\nstate: +submitted\n$/.exec(first.stdout);
    assert.ok(m, first.stdout);
    const [, taskId, contextId] = m;
    const label = taskId.slice(-6);
    assert.ok(first.stderr.includes(murLine("watch", sid, "--task", label)), first.stderr);
    assert.ok(
      first.stderr.includes(murLine("send", "--session", sid, "--context", contextId, "TEXT")),
      first.stderr,
    );
    assert.ok(first.stderr.includes(murLine("cancel", sid, label)), first.stderr);

    // A follow-up from stdin, in that context, followed to its end: exit 0 when it completed.
    const follow = await withStdin(
      ["send", "--context", contextId, "--follow"],
      env,
      "and again\n",
    );
    assert.equal(follow.code, 0, follow.stderr);
    assert.match(follow.stdout, /\[completed\]\n {2}Hello — ж✓\n$/);
    const second = /^task: +(tsk_\w+)/.exec(follow.stdout)![1];
    assert.equal((await getTask(second)).contextId, contextId);

    // --follow of a failing task: exit 3, `[failed]` alone on stdout, the reason on stderr.
    const failed = await runMur(["send", "--follow", "please fail"], env);
    assert.equal(failed.code, 3, failed.stderr);
    assert.match(failed.stdout, /\n\[failed\]\n$/);
    assert.match(
      failed.stderr,
      /\[murmur\] tsk \w{6} failed: task failed \(driver_error\): provider overloaded/,
    );

    // --json: the task as the door answered it, one line.
    const asked = await runMur(["send", "--json", "deploy the site"], env);
    assert.equal(asked.code, 0, asked.stderr);
    const task = JSON.parse(asked.stdout) as Task;
    assert.equal(asked.stdout.trim().split("\n").length, 1);
    // Answer it by its label once it waits; a watch on it names the command that answers.
    const watch = await spawnMur(["watch", sid, "--task", task.id.slice(-6)], env);
    try {
      await watch.out.find((l) => l === "[input-required] Which branch?", 30_000);
      await watch.err.find((l) =>
        l.includes(murLine("answer", "--session", sid, task.id.slice(-6), "TEXT"))
      );
      const answered = await runMur(["answer", task.id.slice(-6), "main ✓"], env);
      assert.equal(answered.code, 0, answered.stderr);
      assert.equal(answered.stdout, `task:    ${task.id}\nstate:   working\n`);
      await watch.out.find((l) => l === "[completed]", 30_000);
    } finally {
      watch.kill();
      await watch.child.status;
    }
    // Answering again: the task no longer waits, the door's refusal (E-IO-004), exit 1.
    const again = await runMur(["answer", task.id, "main"], env);
    assert.equal(again.code, 1);
    assert.match(
      again.stderr,
      /^error\[E-IO-004\]: ses_\w+ refused the message: -32004 task tsk_\w+ has ended/,
    );
    // A task the session does not hold.
    const none = await runMur(["answer", `tsk_${"0".repeat(32)}`, "main"], env);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^error\[E-RUN-048\]: ses_\w+ holds no task tsk_0{32}/);

    // What the door holds: four tasks, each in the state the commands said.
    const listed = await rpc(url, "ListTasks", {}) as { result: { tasks: Task[] } };
    assert.deepEqual(
      listed.result.tasks.map((t) => t.status.state).sort(),
      ["TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED"],
    );
  } finally {
    await capsule.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});

/** Runs `mur <args>` with `input` on its stdin (then closed); bounded by `ms`. */
async function withStdin(args: string[], env: Record<string, string>, input: string, ms = 30_000) {
  const [cmd, ...rest] = murArgv(args);
  const child = new Deno.Command(cmd, {
    args: rest,
    env: { NO_COLOR: "", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), ms);
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(input));
  await w.close();
  const out = await child.output();
  clearTimeout(timer);
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
