/**
 * `mur approve` / `mur deny` against a real capsule, as a person runs them (docs/approvals.md
 * "From the terminal"): a task's label or id, the session by address (default @1) with the
 * operator token from the running record, or --url with $MURMUR_DOOR_TOKEN; what each prints and
 * its exit status; a task that waits for no approval is E-RUN-070, a refused answer E-RUN-071
 * and nothing changes.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { call, submit, waitTask } from "../door/helpers.ts";
import { runMur } from "./helpers.ts";

const pending = (t: { status: { state: string } }) =>
  t.status.state === "TASK_STATE_INPUT_REQUIRED";
const ended = (t: { status: { state: string } }) =>
  ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(t.status.state);

const run = (id: string, command: string) => ({
  steps: [{ tool_call: { id, name: "bash", input: { command } } }],
});

Deno.test("mur approve / mur deny: by label, by id or the one waiting, text and --json, hints; E-RUN-070 and E-RUN-071 change nothing", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "gated",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
      capabilities: { shell: { allow: ["bash"] } },
      network: {
        authentication: {
          scheme: "bearer",
          credentials: { peer: { scopes: ["SendMessage", "GetTask", "ListTasks"] } },
        },
      },
      approvals: { tools: { bash: { approve: "ask" } } },
    },
    script: {
      tasks: [
        { match: "^one", turns: [run("a", "echo ✓ one > one.txt"), { steps: [{ text: "1" }] }] },
        { match: "^two", turns: [run("b", "echo two > two.txt"), { steps: [{ text: "2" }] }] },
      ],
    },
  });
  const env = { MURMUR_HOME: cap.home };
  const op = cap.ready.tokens!.operator;
  const wd = cap.ready.workdir;
  try {
    const one = await submit(cap.base, "one", { token: op });
    await waitTask(cap.base, one.id, pending, 15_000, op);
    const label = one.id.slice(-6);

    // A token that is not the operator's: refused, exit 1, the call still waits.
    const peer = await runMur(["approve", "--url", cap.ready.url, label], {
      ...env,
      MURMUR_DOOR_TOKEN: cap.ready.tokens!.peer,
    });
    assert.equal(peer.code, 1, peer.stderr);
    assert.match(
      peer.stderr,
      /^error\[E-RUN-071\]: .* refused to approve tsk_[0-9a-f]{32}: -32004 only the operator answers an approval; credential 'peer' cannot/m,
    );
    assert.equal(peer.stdout, "");
    assert.equal(
      (await call(cap.base, "GetTask", { id: one.id }, { token: op })).json.result.status.state,
      "TASK_STATE_INPUT_REQUIRED",
    );

    // `--reason` is deny's alone.
    const bad = await runMur(["approve", label, "--reason", "x"], env);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /^error\[E-CLI-002\]: mur approve: /);
    const both = await runMur(["approve", "--session", "@1", "--url", cap.ready.url, label], env);
    assert.equal(both.code, 2, both.stderr);
    assert.match(both.stderr, /give --session or --url, not both/);

    const ok = await runMur(["approve", "--session", "@1", label], env);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, `approved ${one.id}: bash echo ✓ one > one.txt\n`);
    assert.match(ok.stderr, new RegExp(`follow it: .*watch @1 --task ${label}\\n$`));
    await waitTask(cap.base, one.id, ended, 15_000, op);
    assert.equal(await Deno.readTextFile(`${wd}/one.txt`), "✓ one\n");

    // An ended task waits for nothing: E-RUN-070, exit 1.
    const again = await runMur(["approve", "@1", one.id], env);
    assert.equal(again.code, 1);
    assert.match(
      again.stderr,
      new RegExp(
        `^error\\[E-RUN-070\\]: task ${one.id} is completed, not waiting for an approval; nothing to approve`,
        "m",
      ),
    );

    const two = await submit(cap.base, "two", { token: op });
    await waitTask(cap.base, two.id, pending, 15_000, op);
    const no = await runMur(["deny", "@1", two.id, "--reason", "not today", "--json"], env);
    assert.equal(no.code, 0, no.stderr);
    const j = JSON.parse(no.stdout);
    assert.deepEqual(
      { ...j, argumentsHash: typeof j.argumentsHash },
      {
        task: two.id,
        decision: "denied",
        tool: "bash",
        argumentsHash: "string",
        reason: "not today",
        state: "TASK_STATE_WORKING",
      },
    );
    assert.match(j.argumentsHash, /^sha256:[0-9a-f]{64}$/);
    await waitTask(cap.base, two.id, ended, 15_000, op);
    assert.equal(await Deno.stat(`${wd}/two.txt`).then(() => true, () => false), false);

    // No TASK: the one task waiting for an approval, or E-RUN-070 naming none or several.
    const nothing = await runMur(["approve"], env);
    assert.equal(nothing.code, 1);
    assert.match(
      nothing.stderr,
      /^error\[E-RUN-070\]: no task of ses_[0-9a-f]{32} waits for an approval/m,
    );
    // One task runs at a time, so at most one approval waits: named by the session alone.
    const a = await submit(cap.base, "one", { token: op });
    await waitTask(cap.base, a.id, pending, 15_000, op);
    const only = await runMur(["approve", "--json"], env);
    assert.equal(only.code, 0, only.stderr);
    assert.equal(JSON.parse(only.stdout).task, a.id);
    await waitTask(cap.base, a.id, ended, 15_000, op);
    const b = await submit(cap.base, "two", { token: op });
    await waitTask(cap.base, b.id, pending, 15_000, op);
    const bySession = await runMur(["deny", "@1"], env);
    assert.equal(bySession.code, 0, bySession.stderr);
    assert.equal(bySession.stdout, `denied ${b.id}: bash echo two > two.txt\n`);
    await waitTask(cap.base, b.id, ended, 15_000, op);

    // No such task.
    const none = await runMur(["deny", "ffffff"], env);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^error\[E-RUN-048\]/m);
  } finally {
    await cap.close();
  }
});
