/**
 * `mur attach` as a person uses it (src/cli/attach.ts, docs/steering.md): the real command in a
 * tmux pane beside a real capsule (`mur run --json`, scripted driver), keys typed with
 * send-keys, the screen read with capture-pane. One session: a task sent by typing a line, its
 * question answered by the next line, a follow-up in the same conversation, a running task
 * canceled with /cancel, the commands' refusals, /quit. The door is asked afterwards what the
 * lines did (contexts, states), so the screen is not the only witness.
 */
import assert from "node:assert/strict";
import { startMur } from "../helpers/mur.ts";
import { murArgv } from "../helpers/mur.ts";
import { startPane } from "../helpers/tmux.ts";
import { rpc } from "../run/helpers.ts";
import { tempHome } from "./helpers.ts";
import { until } from "../helpers/until.ts";

const MANIFEST = `name: attached
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
          - tool_call: {id: t1, name: request-input, input: {prompt: "Which branch should I deploy?"}}
      - steps:
          - text: "Deployed the branch."
  - match: "slow"
    turns:
      - steps:
          - text: "starting a long job "
          - delay_ms: 60000
          - text: "never shown"
  - turns:
      - steps:
          - text: "Followed up: ж✓"
`;

type Task = { id: string; contextId: string; status: { state: string } };

Deno.test("mur attach under tmux: type a task, answer its question, follow up in its conversation, /cancel, /quit", async () => {
  const home = await tempHome();
  const dir = await Deno.makeTempDir({ prefix: "mur-attach-" });
  await Deno.writeTextFile(`${dir}/murmur.yaml`, MANIFEST);
  await Deno.writeTextFile(`${dir}/script.yaml`, SCRIPT);
  const capsule = await startMur({
    args: ["run", "--manifest", dir, "--json"],
    env: { MURMUR_HOME: home },
    readyMs: 30_000,
    removeOnClose: [dir],
  });
  const ready = capsule.ready as unknown as { url: string; session_id: string };
  const pane = await startPane(murArgv(["attach", "--session", ready.session_id]), {
    MURMUR_HOME: home,
    NO_COLOR: "1",
  });
  try {
    await pane.waitFor(/\[murmur\] attached to ses_\w+ at localhost:\d+: type a line/);

    // A line with nothing waiting is a new task.
    await pane.type("please deploy the site");
    await pane.waitFor(/\[murmur\] sent tsk (\w{6}): /);
    let screen = await pane.waitFor(/waits for input: type the answer/);
    assert.match(screen, /\[tsk \w{6}\] \[input-required\] Which branch should I deploy\?/);

    // The next line answers the question.
    await pane.type("main ✓");
    screen = await pane.waitFor(/\[tsk \w{6}\] \[completed\]\n {2}Deployed the branch\./);
    assert.match(screen, /\[murmur\] answered tsk \w{6}/);
    assert.match(screen, /\[artifact\] tool: request-input \[ok, \d+ms\] \| main ✓/);

    // Nothing waits now: a line is a follow-up in the conversation shown last.
    await pane.type("and then?");
    screen = await pane.waitFor(/\[completed\]\n {2}Followed up: ж✓/);
    assert.match(screen, /\[murmur\] sent tsk \w{6} \(a follow-up in ctx_\w+\)/);

    // A running task, canceled from the terminal.
    await pane.type("a slow job");
    await pane.waitFor(/starting a long job/);
    await pane.type("/cancel");
    screen = await pane.waitFor(/\[murmur\] canceled tsk \w{6}/);
    await pane.waitFor(/\[tsk \w{6}\] \[canceled\]/);

    // The commands with nothing to act on, and one that does not exist, say so.
    await pane.type("/approve");
    await pane.waitFor(/\[murmur\] no call waits for approval/);
    await pane.type("/cancel");
    await pane.waitFor(/\[murmur\] no task is running/);
    await pane.type("/frobnicate");
    await pane.waitFor(
      /\[murmur\] unknown command \/frobnicate: \/approve, \/deny \[reason\], \/steer \[task\] text, \/cancel, \/quit/,
    );

    await pane.type("/quit");
    await pane.waitFor(/^EXIT=0$/m);

    // What the door holds: the answer reached the first task; the follow-up shares its context.
    const listed = await rpc(ready.url, "ListTasks", {}) as { result: { tasks: Task[] } };
    const tasks = listed.result.tasks.slice().reverse(); // oldest first
    assert.deepEqual(tasks.map((t) => t.status.state), [
      "TASK_STATE_COMPLETED",
      "TASK_STATE_COMPLETED",
      "TASK_STATE_CANCELED",
    ]);
    assert.equal(
      tasks[1].contextId,
      tasks[0].contextId,
      "the follow-up continues the conversation",
    );
    assert.equal(tasks[2].contextId, tasks[0].contextId);
    // The session keeps running after /quit.
    const card = await fetch(`http://${ready.url}/.well-known/agent-card.json`);
    assert.equal(card.status, 200);
    await card.body?.cancel();

    // Attached again: the replay retells the answered question, which is not announced as
    // waiting; a new question is (and, the stream being in order, the replay is behind it then).
    const again = await startPane(murArgv(["attach", "-s", ready.session_id.slice(-8)]), {
      MURMUR_HOME: home,
      NO_COLOR: "1",
    });
    try {
      await again.waitFor(/\[murmur\] attached to /);
      await again.type("deploy again please");
      screen = await again.waitFor(/waits for input: type the answer/);
      assert.equal(screen.match(/waits for input/g)?.length, 1, screen);
      const asked = /\[murmur\] sent tsk (\w{6})/.exec(screen)![1];
      assert.match(screen, new RegExp(`\\[murmur\\] tsk ${asked} waits for input`));
      await again.type("/quit");
      await again.waitFor(/^EXIT=0$/m);
    } finally {
      await again.close();
    }
  } finally {
    await pane.close();
    await capsule.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});

const APPROVALS_MANIFEST = `name: guarded
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
capabilities:
  shell:
    allow: [bash]
approvals:
  tools:
    bash: { approve: ask, commands: ["echo *"] }
`;

const APPROVALS_SCRIPT = `tasks:
  - match: "approve"
    turns:
      - steps:
          - tool_call: {id: t1, name: bash, input: {command: "echo ran-after-approval ✓"}}
      - steps:
          - text: "Pushed."
  - match: "deny"
    turns:
      - steps:
          - tool_call: {id: t2, name: bash, input: {command: "echo must-not-run"}}
      - steps:
          - text: "Understood, not pushed."
`;

Deno.test("mur attach under tmux: /approve runs the waiting call, /deny [reason] refuses it and the model reads why", async () => {
  const home = await tempHome();
  const dir = await Deno.makeTempDir({ prefix: "mur-attach-approve-" });
  await Deno.writeTextFile(`${dir}/murmur.yaml`, APPROVALS_MANIFEST);
  await Deno.writeTextFile(`${dir}/script.yaml`, APPROVALS_SCRIPT);
  const capsule = await startMur({
    args: ["run", "--manifest", dir, "--json"],
    env: { MURMUR_HOME: home },
    readyMs: 30_000,
    removeOnClose: [dir],
  });
  const ready = capsule.ready as unknown as { url: string; session_id: string };
  const pane = await startPane(murArgv(["attach"]), { MURMUR_HOME: home, NO_COLOR: "1" });
  try {
    await pane.waitFor(/\[murmur\] attached to /);
    await pane.type("approve the push");
    let screen = await pane.waitFor(/asks to approve bash: \/approve or \/deny \[reason\]/);
    const first = /\[murmur\] sent tsk (\w{6})/.exec(screen)![1];
    await pane.type("/approve");
    screen = await pane.waitFor(/\[completed\]\n {2}Pushed\./);
    assert.match(screen, new RegExp(`\\[murmur\\] approved tsk ${first}`));
    assert.match(screen, /\[artifact\] tool: bash \[ok, exit 0, \d+ms\] \| /);
    assert.match(screen, /\n {2}ran-after-approval ✓\n/, "the approved call ran");

    await pane.type("deny the push");
    screen = await pane.waitFor(
      /sent tsk \w{6}[^\n]*\n(.*\n)*.*asks to approve bash[^\n]*\n(.*\n)*.*asks to approve bash/,
    );
    await pane.type("/deny not on a Friday");
    screen = await pane.waitFor(/\[completed\]\n {2}Understood, not pushed\./);
    assert.match(screen, /\[murmur\] denied tsk \w{6}/);
    assert.doesNotMatch(screen, /\n {2}must-not-run\n/, "the denied call did not run");
    await pane.type("/quit");
    await pane.waitFor(/^EXIT=0$/m);

    // The door's record of the second task: the call was refused with the reason the model read.
    const listed = await rpc(ready.url, "ListTasks", { includeArtifacts: true }) as {
      result: { tasks: Task[] };
    };
    assert.deepEqual(listed.result.tasks.map((t) => t.status.state), [
      "TASK_STATE_COMPLETED",
      "TASK_STATE_COMPLETED",
    ]);
    const trace = await Deno.readTextFile(
      `${dir}/workdir/${ready.session_id}/trace.jsonl`,
    );
    assert.match(trace, /not on a Friday/);
  } finally {
    await pane.close();
    await capsule.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});

const STEER_MANIFEST = `name: steered
version: "0.1.0"
inference:
  transport: http
  driver: scripted
  script: script.yaml
  max_turns: 3
lifecycle:
  task_acceptance: queue
  queue_depth: 4
  after_task: sleep
  shell_grace_secs: 300
capabilities:
  shell:
    allow: [bash]
`;

/** The held command returns once the test writes `go` in the workdir (bounded: 120 s). */
const HOLD =
  "i=0; while [ ! -f go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo held";

const STEER_SCRIPT = `tasks:
  - match: "work"
    turns:
      - steps:
          - tool_call: {id: h1, name: bash, input: {command: ${JSON.stringify(HOLD)}}}
      - steps:
          - text: "Done as steered."
`;

Deno.test("mur attach under tmux: /steer a working task held on a gate; the model reads it at its next turn", async () => {
  const home = await tempHome();
  const dir = await Deno.makeTempDir({ prefix: "mur-attach-steer-" });
  await Deno.writeTextFile(`${dir}/murmur.yaml`, STEER_MANIFEST);
  await Deno.writeTextFile(`${dir}/script.yaml`, STEER_SCRIPT);
  const capsule = await startMur({
    args: ["run", "--manifest", dir, "--json"],
    env: { MURMUR_HOME: home },
    readyMs: 30_000,
    removeOnClose: [dir],
  });
  const ready = capsule.ready as unknown as { url: string; session_id: string; workdir: string };
  const workdir = ready.workdir ?? `${dir}/workdir/${ready.session_id}`;
  const pane = await startPane(murArgv(["attach"]), { MURMUR_HOME: home, NO_COLOR: "1" });
  try {
    await pane.waitFor(/\[murmur\] attached to /);
    // Nothing works yet: a steer has nowhere to go.
    await pane.type("/steer use staging");
    await pane.waitFor(/\[murmur\] no task is working: a steer goes to a working task/);

    await pane.type("work on the deploy");
    let screen = await pane.waitFor(/\[murmur\] sent tsk (\w{6})/);
    const label = /\[murmur\] sent tsk (\w{6})/.exec(screen)![1];
    // The held call is under way: the task is WORKING and attach has seen it so.
    await pane.waitFor(/inference turn 1/);
    const text = "use the staging branch, not main ✓";
    await pane.type(`/steer ${label} ${text}`);
    await pane.waitFor(new RegExp(`\\[murmur\\] steering tsk ${label}`));
    // The door took the steer (the task's history holds it) before the gate opens.
    const id = await until("the steer in the task's history", async () => {
      const listed = await rpc(ready.url, "ListTasks", {}) as { result: { tasks: Task[] } };
      const tid = listed.result.tasks.find((t) => t.id.endsWith(label))!.id;
      const got = await rpc(ready.url, "GetTask", { id: tid, historyLength: 10 }) as {
        result: { history?: { parts: { text?: string }[] }[] };
      };
      return got.result.history?.some((m) => m.parts.some((p) => p.text === text))
        ? tid
        : undefined;
    });
    await Deno.writeTextFile(`${workdir}/go`, "");
    screen = await pane.waitFor(
      new RegExp(`\\[murmur\\] steer taken: tsk ${label} read it before turn 2`),
    );
    await pane.waitFor(/\[completed\]\n {2}Done as steered\./);
    await pane.type("/quit");
    await pane.waitFor(/^EXIT=0$/m);

    // The trace: the task read the steer after turn 1, before the model's next call.
    const trace = (await Deno.readTextFile(`${workdir}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const taken = trace.find((l) => l.event_type === "steer_taken");
    assert.ok(taken, "no steer_taken line");
    assert.equal(taken.task_id, id);
    assert.equal(taken.turn, 1);
    assert.equal(taken.text_bytes, new TextEncoder().encode(text).length);
  } finally {
    await pane.close();
    await capsule.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});

Deno.test("mur attach under tmux: /steer on a capsule whose card lists no steer extension is refused, sending nothing", async () => {
  const home = await tempHome();
  const dir = await Deno.makeTempDir({ prefix: "mur-attach-nosteer-" });
  // task_acceptance: none takes no task at the door, so its card offers no steer; the launch
  // task is held on the gate so it is WORKING while attach types.
  await Deno.writeTextFile(
    `${dir}/murmur.yaml`,
    STEER_MANIFEST.replace("task_acceptance: queue", "task_acceptance: none")
      .replace("  queue_depth: 4\n  after_task: sleep\n", ""),
  );
  await Deno.writeTextFile(`${dir}/script.yaml`, STEER_SCRIPT);
  const capsule = await startMur({
    args: ["run", "--manifest", dir, "--json", "--task", "work on the deploy"],
    env: { MURMUR_HOME: home },
    readyMs: 30_000,
    removeOnClose: [dir],
  });
  const ready = capsule.ready as unknown as { url: string; session_id: string; workdir: string };
  const workdir = ready.workdir ?? `${dir}/workdir/${ready.session_id}`;
  const pane = await startPane(murArgv(["attach"]), { MURMUR_HOME: home, NO_COLOR: "1" });
  try {
    await pane.waitFor(/\[murmur\] attached to /);
    await pane.waitFor(/inference turn 1/);
    await pane.type("/steer use the staging branch");
    const screen = await pane.waitFor(
      /\[murmur\] ses_\w+ takes no steer: its agent card lists no steer extension/,
    );
    assert.doesNotMatch(screen, /\[murmur\] steering /);
    await pane.type("/quit");
    await pane.waitFor(/^EXIT=0$/m);
    await Deno.writeTextFile(`${workdir}/go`, "");
    const trace = await until("the session's end in the trace", async () => {
      const t = await Deno.readTextFile(`${workdir}/trace.jsonl`).catch(() => "");
      return /"session_end"/.test(t) ? t : undefined;
    });
    assert.doesNotMatch(trace, /steer_taken/, "no steer reached the task");
  } finally {
    await pane.close();
    await capsule.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
