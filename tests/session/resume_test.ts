/**
 * `mur run --resume` (docs/hooks.md "Resuming a session"): a capsule killed with SIGKILL while a
 * detached shell runs, resumed: the lost shell is reported exactly once (one completion task in the
 * bg lane after the launch task, `shell_lost` in the old trace), a second resume reports nothing;
 * the --resume errors.
 */
import assert from "node:assert/strict";
import { writeCapsule } from "../helpers/capsule.ts";
import { runMur } from "../helpers/mur.ts";
import { ofType, startCapsule, traceOf, until } from "./helpers.ts";
import { parseRecord, readConversation } from "../helpers/conversation.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ready?: { session_id: string; workdir: string };
}

/** One more `mur run --json` on an existing capsule folder, to its end (bounded). */
async function runIn(dir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const end = await runMur({
    args: ["run", "--manifest", dir, "--json", ...args],
    env: { MURMUR_HOME: `${dir}/.murmur-home`, NO_COLOR: "1", ...env },
  });
  const first = end.stdout.split("\n")[0];
  return { ...end, ready: first ? JSON.parse(first) : undefined };
}

const manifest = {
  name: "resumable",
  version: "0.1.0",
  lifecycle: { shell_grace_secs: 0.2 },
  capabilities: { shell: { allow: ["sh"] } },
};
const script = {
  tasks: [
    { match: "ended without reporting", turns: [{ steps: [{ text: "noted the loss" }] }] },
    { match: "carry on", turns: [{ steps: [{ text: "carrying on" }] }] },
    {
      turns: [
        {
          steps: [{
            tool_call: {
              id: "long",
              name: "sh",
              input: { command: "echo $$ > bg.pid; exec sleep 30" },
            },
          }],
        },
        { steps: [{ delay_ms: 20_000 }, { text: "never reached" }] },
      ],
    },
  ],
};

Deno.test("SIGKILL while a detached shell runs, then --resume: the lost shell is reported exactly once", async () => {
  const cap = await startCapsule({ manifest, script, args: ["--task", "start the job"] });
  let pid: number | null = null;
  try {
    const oldWd = cap.ready.workdir;
    const oldSes = cap.ready.session_id;
    const detached = await until(
      async () => {
        return ofType(await traceOf(oldWd), "shell_detached")[0];
      },
      15_000,
      "shell_detached in the trace",
    );
    pid = await until(
      async () => {
        const t = await Deno.readTextFile(`${oldWd}/bg.pid`).catch(() => "");
        return t.trim() ? Number(t.trim()) : undefined;
      },
      5_000,
      "the shell's pid",
    );
    // The record of the conversation so far holds the detached call's result (written right
    // after the call returns): that is what the resume continues.
    await until(
      async () => {
        try {
          for await (const e of Deno.readDir(`${oldWd}/conversation`)) {
            const rec = parseRecord(await Deno.readTextFile(`${oldWd}/conversation/${e.name}`));
            if (rec.some((m) => m.role === "tool")) return true;
          }
        } catch {
          // not written yet, or caught mid-write
        }
        return undefined;
      },
      15_000,
      "the conversation record with the tool result",
    );
    cap.kill("SIGKILL");
    await cap.finished();
    const before = await traceOf(oldWd);
    assert.equal(ofType(before, "session_end").length, 0, "a killed runtime writes no end");
    assert.equal(ofType(before, "shell_abandoned").length, 0);
    const oldCtx = ofType(before, "task_start")[0].context_id as string;

    // The resume: a new session continuing the context, reporting the loss after its task.
    const r = await runIn(cap.dir, ["--resume", oldSes.slice(-6), "--task", "carry on"]);
    assert.equal(r.code, 0, r.stderr);
    const newWd = r.ready!.workdir;
    const newSes = r.ready!.session_id;
    assert.notEqual(newSes, oldSes);
    const trace = await traceOf(newWd);
    const start = ofType(trace, "session_start")[0];
    assert.equal(start.resumed_from, oldSes);
    assert.equal(start.context_id, oldCtx);
    const starts = ofType(trace, "task_start");
    assert.deepEqual(
      starts.map((s) => [s.source, s.origin, s.lane, s.context_id]),
      [["task_md", "user", "user", oldCtx], ["detached_lost", "completion", "bg", oldCtx]],
    );
    const reportId = starts[1].task_id as string;
    assert.deepEqual(ofType(trace, "task_end").map((e) => e.exit_status), ["ok", "ok"]);
    // The launch task continued the old conversation: its first request carried the old
    // messages (the scripted driver counts 4 characters a token), not "carry on" alone.
    const launchTurn = ofType(trace, "inference").find((e) => e.task_id === starts[0].task_id)!;
    assert.ok((launchTurn.input_tokens as number) > 30, JSON.stringify(launchTurn));
    // The report task ran last in the context (stateless: its record is its own messages).
    const rec = await readConversation(newWd, oldCtx);
    const text = String(rec[0].content);
    assert.match(text, /ended without reporting 1 background command/);
    assert.match(text, new RegExp(detached.work_id as string));
    assert.match(text, /exec sleep 30/);
    assert.match(text, new RegExp(new Date(detached.timestamp as number).toISOString()));
    assert.match(text, /no exit code, no output and no log/);

    // shell_lost appended to the old trace, once, naming who reconciled it.
    const old = await traceOf(oldWd);
    const lost = ofType(old, "shell_lost");
    assert.equal(lost.length, 1);
    assert.deepEqual(
      [lost[0].work_id, lost[0].reconciled_by_session, lost[0].reconciled_task_id],
      [detached.work_id, newSes, reportId],
    );
    assert.equal(lost[0].session_id, oldSes);
    assert.equal(lost[0].parent_id, ofType(old, "session_start")[0].event_id);
    assert.equal(lost[0].detached_at_ms, detached.timestamp);
    assert.equal(lost[0].binary, detached.binary);

    // A second resume of the same session reports nothing.
    const again = await runIn(cap.dir, ["--resume", oldSes, "--task", "carry on"]);
    assert.equal(again.code, 0, again.stderr);
    const t2 = await traceOf(again.ready!.workdir);
    assert.deepEqual(ofType(t2, "task_start").map((s) => s.source), ["task_md"]);
    assert.equal(ofType(await traceOf(oldWd), "shell_lost").length, 1);

    // Resuming the clean session (@1 is the newest) reports nothing either.
    const third = await runIn(cap.dir, ["--resume", "--task", "carry on"]);
    assert.equal(third.code, 0, third.stderr);
    const t3 = await traceOf(third.ready!.workdir);
    assert.equal(ofType(t3, "session_start")[0].resumed_from, again.ready!.session_id);
    assert.deepEqual(ofType(t3, "task_start").map((s) => s.source), ["task_md"]);
  } finally {
    if (pid) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await cap.close();
  }
});

Deno.test("--resume errors: E-RUN-015 with --context, E-TRC-002 no such session, E-RUN-016 no task_start, E-RUN-017 no conversation record", async () => {
  const dir = await writeCapsule({
    manifest: { name: "errs", version: "0.1.0" },
    script: { tasks: [{ turns: [{ steps: [{ text: "hi" }] }] }] },
  });
  try {
    const both = await runIn(dir, ["--resume", "@1", "--context", "ctx_x"]);
    assert.equal(both.code, 1);
    assert.equal(both.stdout, "");
    assert.match(
      both.stderr,
      /error\[E-RUN-015\]: --resume and --context name the same thing two ways/,
    );

    const none = await runIn(dir, ["--resume"]);
    assert.equal(none.code, 1);
    assert.equal(none.stdout, "");
    assert.match(none.stderr, /error\[E-TRC-002\]/);

    // A session that never ran a task: it idles out with no task_start.
    const idle = await runIn(dir, [], { MURMUR_A2A_TIMEOUT_SECS: "0.3" });
    assert.equal(idle.code, 0, idle.stderr);
    const noTask = await runIn(dir, ["--resume", idle.ready!.session_id]);
    assert.equal(noTask.code, 1);
    assert.equal(noTask.stdout, "");
    assert.match(
      noTask.stderr,
      new RegExp(
        `error\\[E-RUN-016\\]: cannot resume session ${
          idle.ready!.session_id
        }: its trace.jsonl records no task_start carrying a context id`,
      ),
    );

    const ran = await runIn(dir, ["--task", "hello"]);
    assert.equal(ran.code, 0, ran.stderr);
    const ctx = ofType(await traceOf(ran.ready!.workdir), "task_start")[0].context_id;
    // A kill mid-append leaves a torn last line: the resume leaves it out and says so.
    const record = `${ran.ready!.workdir}/conversation/${ctx}.jsonl`;
    const whole = await readConversation(ran.ready!.workdir, ctx);
    await Deno.writeTextFile(record, '{"role":"user","content":"cut sh', { append: true });
    const torn = await runIn(dir, ["--resume", ran.ready!.session_id, "--task", "again"]);
    assert.equal(torn.code, 0, torn.stderr);
    assert.match(
      torn.stderr,
      new RegExp(
        `warning\\[W-RUN-003\\]: the conversation record of context '${ctx}' in .* ends in a line cut short`,
      ),
    );
    const resumed = await readConversation(torn.ready!.workdir, ctx);
    assert.deepEqual(resumed.slice(0, whole.length), whole, "the whole lines are the history");
    assert.ok(!JSON.stringify(resumed).includes("cut sh"));
    await Deno.remove(record);
    const noRecord = await runIn(dir, ["--resume", ran.ready!.session_id]);
    assert.equal(noRecord.code, 1);
    assert.match(
      noRecord.stderr,
      new RegExp(`error\\[E-RUN-017\\]: .*context '${ctx}' has no readable conversation record`),
    );
    const missing = await runIn(dir, ["--resume", "ses_0000"]);
    assert.match(missing.stderr, /error\[E-TRC-002\]: no session in .* matches 'ses_0000'/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
