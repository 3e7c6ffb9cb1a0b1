/**
 * `mur watch --task` when the watch lags past its task's final status (README "mur watch in
 * pipes"): the real `mur watch`, following the door through a loopback proxy that stops reading
 * (tests/helpers/tcp_proxy.ts) while two floods of 40,000 events pass. The door's writes back up
 * behind the proxy (a few MiB of socket buffers, far less than a flood), so its queue drops the
 * oldest events, A's ending among them (B's flood comes after it); once the proxy reads again the
 * watch gets `lagged` and learns A's ending from GetTask. A stall the test holds, rather than
 * stdout left unread: `mur watch --task A` prints nothing for B's events, so an unread stdout let
 * the connection drain during B's flood and A's final status through now and then.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { TcpProxy } from "../helpers/tcp_proxy.ts";
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
    const proxy = TcpProxy.start(Number(new URL(cap.base).port));
    try {
      const w = startMur(
        ["watch", "--url", `127.0.0.1:${proxy.port}`, "--task", a, "--exit-status"],
        env,
        60_000,
      );
      try {
        assert((await w.err.next(30_000))!.startsWith("[murmur] watching "));
        proxy.pause();
        assertEquals((await mur(["cancel", "@1", slow], env)).code, 0);
        await reach(cap, b, "TASK_STATE_COMPLETED");
      } finally {
        proxy.resume();
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
      await proxy.close();
    }
  } finally {
    await cap.close();
  }
});
