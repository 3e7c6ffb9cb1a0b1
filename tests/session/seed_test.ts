/**
 * docs/hooks.md "Seeding the context" end to end: an on-task-start hook with commit_policy
 * seed-context proposes messages; the runtime places what the decision table lets through at the
 * head of the task's messages (the conversation record shows them), writes a context_seed trace
 * line and a logs/bootstrap.log line for every outcome, and never fails the task.
 */
import assert from "node:assert/strict";
import {
  endCapsule,
  getTask,
  hookScript,
  ofType,
  type Rec,
  runLaunch,
  startCapsule,
  statusTexts,
  streamTask,
  taskIdOf,
  traceOf,
} from "./helpers.ts";
import { readConversationSync } from "../helpers/conversation.ts";

const m = (tokens: number, tag: string) => ({
  role: "user",
  content: `${tag}:`.padEnd(tokens * 4, "x"),
});
const proposals = [
  [m(40, "s1a"), m(40, "s1b")], // fits → seeded
  [m(10, "s2a"), m(45, "s2b"), m(55, "s2c")], // over by the margin → trimmed
  [m(60, "s3a"), m(60, "s3b"), m(60, "s3c")], // over by more, summary → compacted
  [m(60, "nosum"), m(60, "s4b"), m(60, "s4c")], // over by more, the hook declines → trimmed
  [m(20, "s5a"), m(101, "s5b")], // one message wider than the ceiling → rejected
  [m(100, "a"), m(100, "b"), m(100, "c"), m(100, "d"), m(1, "e")], // >3x over → rejected
];
const files: Record<string, string> = {
  "hooks/memory.sh": hookScript(`printf '%s\n' "$in" >> starts.jsonl
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
cat "$(dirname "$0")/../seeds/$n.json"`),
  "hooks/summarize.sh": hookScript(`case "$in" in
  *nosum*) echo '{}';;
  *) echo '{"replace_context":[{"role":"user","content":"SUMMARY of earlier work"}]}';;
esac`),
};
proposals.forEach((p, i) => files[`seeds/${i + 1}.json`] = JSON.stringify({ seed_context: p }));

const hooks = [
  {
    name: "memory",
    binding: "on-task-start",
    commit_policy: "seed-context",
    command: ["./hooks/memory.sh"],
  },
  {
    name: "summarize",
    binding: "on-compaction",
    commit_policy: "replace-context",
    command: ["./hooks/summarize.sh"],
  },
];

function record(workdir: string, ctx: string): { role: string; content?: string; text?: string }[] {
  return readConversationSync(workdir, ctx);
}
const tags = (msgs: { content?: string; text?: string }[]) =>
  msgs.map((x) => (x.content ?? x.text ?? "").split(":")[0]);

Deno.test("seed-context: seeded, trimmed, compacted, trimmed without a summary, and both rejections, in order", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "seeded",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      context: { max_tokens: 1000, seed_budget: 0.1, seed_overflow_margin: 0.1 },
      hooks,
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "ok" }] }] }] },
    files,
  });
  try {
    const ctxs: string[] = [];
    for (let i = 0; i < proposals.length; i++) {
      const ev = await streamTask(cap, `task ${i + 1}`);
      assert.equal(statusTexts(ev).at(-1), "task completed", "a seed never fails the task");
      const t = await getTask(cap, taskIdOf(ev));
      ctxs.push(t.contextId as string);
    }
    const wd = cap.ready.workdir;
    // What the driver saw first: the committed seed, then the task.
    const heads = ctxs.map((c) => tags(record(wd, c)));
    assert.deepEqual(heads[0].slice(0, 3), ["s1a", "s1b", "<untrusted-content source=task"]);
    assert.deepEqual(heads[1].slice(0, 2), ["s2b", "s2c"]);
    assert.deepEqual(heads[2].slice(0, 2), ["SUMMARY of earlier work", "s3c"]);
    assert.deepEqual(heads[3].slice(0, 1), ["s4c"]);
    assert.match(heads[4][0], /^<untrusted-content/);
    assert.match(heads[5][0], /^<untrusted-content/);

    await endCapsule(cap);
    const trace = await traceOf(wd);
    const seeds = ofType(trace, "context_seed");
    assert.deepEqual(
      seeds.map((s) => [s.hook_name, s.outcome, s.reason, s.tokens, s.proposed_tokens]),
      [
        ["memory", "seeded", undefined, 80, 80],
        ["memory", "trimmed", undefined, 100, 110],
        ["memory", "compacted", undefined, 66, 180],
        ["memory", "trimmed", undefined, 60, 180],
        ["memory", "rejected", "message_over_budget", 0, 121],
        ["memory", "rejected", "overflow_over_limit", 0, 401],
      ],
    );
    for (const s of seeds) {
      assert.equal(s.budget_tokens, 100);
      assert.ok(Array.isArray(s.message_ids));
    }
    assert.equal((seeds[0].message_ids as string[]).length, 2);
    assert.match((seeds[0].message_ids as string[])[0], /^msg_[0-9a-f]{32}$/);
    // Each context_seed hangs off its task_start; rejections are also hook_dispatch_error.
    const starts = ofType(trace, "task_start");
    seeds.forEach((s, i) => assert.equal(s.parent_id, starts[i].event_id));
    assert.deepEqual(
      ofType(trace, "hook_dispatch_error").map((e) => [e.hook_name, e.event, e.arm]),
      [["memory", "on-task-start", "seed-rejected"], ["memory", "on-task-start", "seed-rejected"]],
    );
    const boot = await Deno.readTextFile(`${wd}/logs/bootstrap.log`);
    const lines = boot.split("\n").filter((l) => l.includes("context_seed"));
    assert.equal(lines.length, 6);
    assert.match(lines[2], /hook=memory outcome=compacted tokens=66 proposed=180 budget=100/);
    assert.match(lines[4], /outcome=rejected reason=message_over_budget/);
    // The hook read its budget on stdin (docs/hooks.md "Event fields", snake_case).
    const ev = JSON.parse((await Deno.readTextFile(`${wd}/starts.jsonl`)).split("\n")[0]) as Rec;
    assert.equal(ev.event, "on-task-start");
    assert.equal(ev.budget_tokens, 100);
    assert.equal(ev.context_window, 1000);
    assert.equal(ev.task_id, starts[0].task_id);
    assert.equal(ev.session_id, cap.ready.session_id);
  } finally {
    await cap.close();
  }
});

Deno.test("seed-context without context.max_tokens: nothing is seeded (no_budget), budget_tokens 0, the task runs", async () => {
  const run = await runLaunch({
    manifest: { name: "nobudget", version: "0.1.0", hooks: [hooks[0]] },
    script: { tasks: [{ turns: [{ steps: [{ text: "ran" }] }] }] },
    files,
    task: "hello",
  });
  try {
    assert.equal(run.code, 0);
    assert.equal(run.result, "ran");
    const s = ofType(run.trace, "context_seed")[0];
    assert.equal(s.outcome, "rejected");
    assert.equal(s.reason, "no_budget");
    assert.equal(s.budget_tokens, 0);
    const ev = JSON.parse((await Deno.readTextFile(`${run.workdir}/starts.jsonl`)).trim());
    assert.equal(ev.budget_tokens, 0);
    assert.match(
      await Deno.readTextFile(`${run.workdir}/logs/bootstrap.log`),
      /context_seed .* outcome=rejected reason=no_budget/,
    );
  } finally {
    await run.cleanup();
  }
});
