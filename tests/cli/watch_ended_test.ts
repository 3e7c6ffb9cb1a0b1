/**
 * The end told as an end (docs/watch.md "When the stream ends"): a capsule that exits closes the
 * watch without capsule-closed, so `mur watch` prints the seed's E-IO-003 line, then what a fresh
 * look finds; the reattach hint only while the capsule may still be running; `--exit-status` by
 * the watched tasks' outcomes when all ended. Real capsules (`mur run --json`, scripted driver),
 * real `mur watch` processes, in the three cases the issue names — after the demo (the launch
 * task, then the session ends), after `mur stop`, through an edge — and a killed capsule.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { startEdgeProc } from "../helpers/edge.ts";
import { TestRedis } from "../helpers/redis.ts";
import { freshLook } from "../../src/cli/fresh_look.ts";
import type { RunningRecord } from "../../src/home/running_records.ts";
import { runMur, spawnMur, tempHome } from "./helpers.ts";

const SCRIPT = {
  tasks: [
    { match: "fail", turns: [{ steps: [{ error: "provider overloaded" }] }] },
    { turns: [{ steps: [{ text: "Done: ж✓" }] }] },
  ],
};

/** A launch task that asks before it ends: a watch can be there to see it live. */
const ASKS = {
  tasks: [{
    turns: [
      {
        steps: [{
          tool_call: { id: "t1", name: "request-input", input: { prompt: "Which branch?" } },
        }],
      },
      { steps: [{ text: "Deployed main." }] },
    ],
  }],
};

const REATTACH = /may still be running/;

Deno.test("after the demo: the launch task's id is in the readiness line; the watch says the capsule ended ok and --exit-status exits 0", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "demo",
      version: "1.0.0",
      lifecycle: { after_task: "exit" },
      tools: [{ builtin: "request-input" }],
    },
    script: ASKS,
    args: ["--task", "deploy it"],
  });
  try {
    const ready = cap.ready as typeof cap.ready & { task_id?: string; session_dir: string };
    assert.match(ready.task_id ?? "", /^tsk_[0-9a-f]{32}$/, JSON.stringify(ready));
    const watch = await spawnMur(["watch", "--url", ready.url, "--exit-status"], {
      MURMUR_HOME: cap.home,
    });
    // The launch task waits for an answer, so the watch sees it live; answered, the session ends.
    await watch.out.find((l) => l === "[input-required] Which branch?", 30_000);
    const answered = await cap.rpc("SendMessage", {
      message: {
        messageId: "m-a",
        role: "ROLE_USER",
        taskId: ready.task_id,
        parts: [{ text: "main" }],
      },
    });
    assert.ok(!answered.error, JSON.stringify(answered));
    const status = await watch.child.status;
    await Promise.all([watch.out.done, watch.err.done]);
    assert.equal(status.code, 0, watch.err.text());
    assert.match(watch.out.text(), /\[completed\]\n {2}Deployed main\.\n$/);
    const err = watch.err.text().trim().split("\n").filter((l) =>
      !l.startsWith("[murmur] watching")
    );
    assert.match(
      err[0],
      /^\[murmur\] tsk \w{6} waits for input; answer with `.* answer --url localhost:\d+ \w{6} TEXT`$/,
    );
    assert.match(
      err[1],
      /^error\[E-IO-003\]: connection to localhost:\d+ lost after event id \d+$/,
    );
    assert.equal(err[2], "[murmur] the capsule ended: status ok (its stream said so as it closed)");
    assert.equal(err.length, 3, watch.err.text());
    assert.equal((await cap.finished()).code, 0);
    // The other witness of the fresh look, for a stream that did not say: the record and trace.
    const record: RunningRecord = {
      session_id: ready.session_id,
      url: ready.url,
      pid: ready.pid,
      capsule_name: "demo",
      capsule_version: "1.0.0",
      workdir: ready.workdir,
      session_dir: ready.session_dir,
      started_at: new Date().toISOString(),
    };
    assert.deepEqual(await freshLook(ready.url, record, undefined, cap.home), {
      ended: true,
      line:
        "the capsule ended: status ok (its running record is gone; its trace ends with session_end)",
    });
  } finally {
    await cap.close();
  }
});

Deno.test("after mur stop: the watch by session address says the capsule ended, with no reattach hint", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "stopped",
      version: "1.0.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: SCRIPT,
  });
  try {
    const sid = cap.ready.session_id;
    const watch = await spawnMur(["watch", sid, "--exit-status"], { MURMUR_HOME: cap.home });
    assert.match((await watch.err.next(30_000)) ?? "", /^\[murmur\] watching ses_/);
    await cap.rpc("SendMessage", {
      message: { messageId: "m-ok", role: "ROLE_USER", parts: [{ text: "say done" }] },
    });
    await watch.out.find((l) => l === "[completed]", 30_000);
    const stop = await runMur(["stop", sid], { MURMUR_HOME: cap.home });
    assert.equal(stop.code, 0, stop.stderr);
    const status = await watch.child.status;
    await watch.err.done;
    const err = watch.err.text();
    assert.match(
      err,
      new RegExp(`error\\[E-IO-003\\]: connection to ${sid} lost after event id \\d+\\n`),
    );
    assert.doesNotMatch(err, REATTACH);
    const ended = /\[murmur\] the capsule ended: status (\w+) \(its stream said so as it closed\)/
      .exec(err);
    assert.ok(ended, err);
    // The status the stream said is the one the trace's session_end recorded.
    await cap.finished();
    const ready = cap.ready as typeof cap.ready & { session_dir: string };
    const trace = await Deno.readTextFile(`${ready.session_dir}/trace.jsonl`);
    const end = trace.trim().split("\n").map((l) => JSON.parse(l)).findLast((e) =>
      e.event_type === "session_end"
    );
    assert.equal(end?.exit_status, ended[1]);
    // Its one task completed before the end: --exit-status says 0.
    assert.equal(status.code, 0, err);
  } finally {
    await cap.close();
  }
});

Deno.test(
  "through an edge: a watch of the session's edge URL says the capsule ended; a failed task makes --exit-status 3",
  {
    sanitizeOps: false,
    sanitizeResources: false,
  },
  async () => {
    const KEY = "an edge and its capsules share this key, 32+ bytes";
    const redis = await TestRedis.start();
    const cap = await startCapsule({
      manifest: {
        name: "edged",
        version: "1.0.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        cluster: { redis: redis.url },
      },
      script: SCRIPT,
      env: { MURMUR_CLUSTER_KEY: KEY },
    });
    const edge = await startEdgeProc(redis.url, { MURMUR_CLUSTER_KEY: KEY });
    const home = await tempHome(); // no record of the session: the stream is the only witness
    try {
      const sid = cap.ready.session_id;
      const at = `${edge.url.replace(/^http:\/\//, "")}/sessions/${sid}`;
      for (let i = 0;; i++) {
        const r = await fetch(`http://${at}/.well-known/agent-card.json`);
        await r.body?.cancel();
        if (r.status === 200) break;
        if (i > 600) throw new Error("the session never showed on the edge");
        await new Promise((r) => setTimeout(r, 50));
      }
      const watch = await spawnMur(["watch", "--url", at, "--exit-status"], { MURMUR_HOME: home });
      assert.match((await watch.err.next(30_000)) ?? "", /^\[murmur\] watching /);
      await cap.rpc("SendMessage", {
        message: { messageId: "m-fail", role: "ROLE_USER", parts: [{ text: "fail please" }] },
      });
      await watch.out.find((l) => l === "[failed]", 30_000);
      const stop = await runMur(["stop", sid], { MURMUR_HOME: cap.home });
      assert.equal(stop.code, 0, stop.stderr);
      const status = await watch.child.status;
      await watch.err.done;
      const err = watch.err.text();
      assert.match(
        err,
        /\[murmur\] tsk \w{6} failed: task failed \(driver_error\): provider overloaded\n/,
      );
      assert.match(
        err,
        new RegExp(`error\\[E-IO-003\\]: connection to ${at} lost after event id \\d+\\n`),
      );
      assert.doesNotMatch(err, REATTACH);
      assert.match(
        err,
        /\[murmur\] the capsule ended: status \w+ \(its stream said so as it closed\)/,
      );
      assert.equal(status.code, 3, err);
    } finally {
      await edge.kill();
      await cap.close();
      await redis.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
);

Deno.test("killed: the watch says the capsule is gone without ending its session; while it ran, a fresh look found it may still be running", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "killed",
      version: "1.0.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: SCRIPT,
  });
  try {
    const sid = cap.ready.session_id;
    // While it runs, a fresh look finds its record and its process: it may still be running.
    const record = JSON.parse(
      await Deno.readTextFile(`${cap.home}/running/${sid}.json`),
    ) as RunningRecord;
    assert.deepEqual(await freshLook(cap.ready.url, record, undefined, cap.home), {
      ended: false,
      line: "its running record is still there and its process is alive",
    });
    const watch = await spawnMur(["watch", sid], { MURMUR_HOME: cap.home });
    assert.match((await watch.err.next(30_000)) ?? "", /^\[murmur\] watching ses_/);
    cap.kill("SIGKILL");
    const status = await watch.child.status;
    await watch.err.done;
    const err = watch.err.text();
    assert.equal(status.code, 1);
    assert.match(
      err,
      new RegExp(
        `error\\[E-IO-003\\]: connection to ${sid} lost (before any event|after event id \\d+)\\n`,
      ),
    );
    assert.doesNotMatch(err, REATTACH);
    assert.match(
      err,
      /\[murmur\] the capsule is gone without ending its session: its process is not running and its trace has no session_end \(killed\?\)/,
    );
  } finally {
    await cap.close();
  }
});
