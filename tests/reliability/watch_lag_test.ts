/**
 * `mur watch --task` when the watch lags past its task's final status (README "mur watch in
 * pipes"): the real `mur watch` in a pipe nobody reads while two floods of 40,000 events pass, so
 * the door drops the oldest queued events, the task's ending among them, and the watch learns the
 * ending from GetTask. It lives with the reliability suites, which run one file at a time: how much
 * a stalled connection's kernel buffers hold before the door's queue overflows depends on the
 * machine's load, and a parallel run let the task's final status through now and then.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { mur, reach, send, startMur, startPipes } from "../cli/pipes.ts";

Deno.test("--task: a watch that lagged past its task's final status ends from GetTask", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    // A and B wait behind a slow task while the watch of A connects; its stdout is not read
    // until both floods are over, so the door drops the oldest events, A's ending among them.
    const slow = await send(cap, "slow");
    await reach(cap, slow, "TASK_STATE_WORKING");
    const a = await send(cap, "flood a");
    const b = await send(cap, "flood b");
    let release!: () => void;
    const released = new Promise<void>((r) => release = r);
    const w = startMur(["watch", "--task", a, "--exit-status"], env, 60_000, released);
    try {
      assert((await w.err.next(30_000))!.startsWith("[murmur] watching ses_"));
      assertEquals((await mur(["cancel", "@1", slow], env)).code, 0);
      await reach(cap, b, "TASK_STATE_COMPLETED");
    } finally {
      release();
    }
    const r = await w.result;
    assertEquals(r.code, 0, r.stderr);
    const errs = r.stderr.split("\n");
    assert(errs.some((l) => /^\[murmur\] warning: lagged: missed \d+ events/.test(l)), r.stderr);
    assertEquals(
      errs.at(-1),
      `[murmur] task ${a} ended completed (GetTask); this watch did not receive its final status`,
    );
    assert(!r.stdout.includes("[completed]"), r.stdout.slice(-200));
  } finally {
    await cap.close();
  }
});
