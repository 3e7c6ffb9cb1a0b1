/**
 * A capsule that dies (SIGKILL: no end marker, no goodbye) stops refreshing its liveness key
 * (src/cluster/keys.ts `alive`); every edge following the session ends its streams once the key
 * has been missing a few seconds (src/edge/liveness.ts), as the capsule's own door's
 * connections end when its process dies: without `capsule-closed`, and long before the session's
 * other keys expire (30 s after the last refresh). And a capsule whose key is gone while its
 * stream still grows (a failover dropped the refresh with the writes the replica had not copied)
 * is not dead: its edge's watchers read on.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { startEdgeProc } from "../helpers/edge.ts";
import { IdWatcher } from "../helpers/id_watcher.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { sessionKeys } from "../../src/cluster/keys.ts";
import { openRedis, type RedisTarget } from "../../src/cluster/client.ts";
import { parseRedisUrl } from "../../src/manifest/redis_url.ts";
import { rpc } from "../helpers/capsule.ts";
import { clusterManifest, FLOOD_SCRIPT } from "./fixtures.ts";

Deno.test("liveness: a SIGKILLed capsule's watchers on two edges end before its keys expire, as its door's end", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  const edges = [await startEdgeProc(redis.url), await startEdgeProc(redis.url)];
  const watchers: IdWatcher[] = [];
  try {
    const keys = sessionKeys(cap.ready.session_id);
    await until(
      "the liveness key",
      async () => await redis.cmd("EXISTS", keys.alive) === 1 || undefined,
    );
    const door = await IdWatcher.open(cap.base + "/", { lastEventId: 0, record: true });
    watchers.push(door);
    for (const e of edges) {
      const w = await IdWatcher.open(`${e.url}/sessions/${cap.ready.session_id}/`, {
        lastEventId: 0,
        record: true,
      });
      watchers.push(w);
      await until("the edge's connection-ack", () => w.unnumbered.length >= 1 || undefined);
    }
    cap.kill("SIGKILL");
    const ended = watchers.map(() => false);
    watchers.forEach((w, i) => w.ended.then(() => (ended[i] = true)));
    await until("the door's watcher to end", () => ended[0] || undefined);
    await until(
      "both edges' watchers to end",
      () => ended.every(Boolean) || undefined,
      40_000,
      100,
    );
    // Ended while the session's other keys still lived: by the liveness key, not by expiry.
    assertEquals(await redis.cmd("EXISTS", keys.meta), 1);
    assertEquals(await redis.cmd("EXISTS", keys.alive), 0);
    // The same ending as the door's: the same events, then the end, no capsule-closed.
    assertEquals(watchers[1].records, door.records);
    assertEquals(watchers[2].records, door.records);
    for (const w of watchers) assert(!w.records.some((r) => r.includes('"capsule-closed"')));
    // An edge asked afterwards still knows the session (its keys), and answers its stream ending.
    const late = await IdWatcher.open(`${edges[0].url}/sessions/${cap.ready.session_id}/`, {
      lastEventId: 0,
    });
    watchers.push(late);
    let lateEnded = false;
    late.ended.then(() => (lateEnded = true));
    await until("the late watcher to end", () => lateEnded || undefined, 40_000, 100);
  } finally {
    for (const w of watchers) w.close();
    for (const e of edges) await e.kill();
    await cap.close();
    await redis.close();
  }
});

/** One task that streams for at least 12 s (2,400 events 5 ms apart): past two key refreshes. */
const STREAMING_SCRIPT = {
  tasks: [
    { match: "stream", turns: [{ steps: [{ text: "x", repeat: 2400, delay_ms: 5 }] }] },
    { turns: [{ steps: [{ text: "hello" }] }] },
  ],
};

Deno.test("liveness: a capsule streaming while its liveness key is taken away after every write keeps its edge's watchers to the task's end", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({
    manifest: clusterManifest(redis.url),
    script: STREAMING_SCRIPT,
  });
  const edge = await startEdgeProc(redis.url);
  // The fault: each write of events is followed by its wake (src/cluster/publisher.ts), and the
  // key the same write set is deleted on it, as a failover would lose it.
  const fault = openRedis(parseRedisUrl(redis.url) as RedisTarget);
  let deleted = 0;
  let faulting = true;
  const keys = sessionKeys(cap.ready.session_id);
  const sub = fault.subscriber(() => {
    if (!faulting) return;
    fault.call(["DEL", keys.alive]).then((n) => (deleted += Number(n)), () => {});
  }, () => {});
  let w: IdWatcher | undefined;
  try {
    await fault.ready(5000);
    await until(
      "the liveness key",
      async () => await fault.call(["EXISTS", keys.alive]) === 1 || undefined,
    );
    w = await IdWatcher.open(`${edge.url}/sessions/${cap.ready.session_id}/`, { lastEventId: 0 });
    const watcher = w;
    await until("the edge's connection-ack", () => watcher.unnumbered.length >= 1 || undefined);
    let ended = false;
    watcher.ended.then(() => (ended = true));
    sub.subscribe(keys.wake);
    await fault.call(["DEL", keys.alive]);
    const task = (await rpc(cap.base, "SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "stream" }] },
      configuration: { returnImmediately: true },
    })).result.task.id as string;
    await until(
      "the task to complete",
      async () =>
        (await rpc(cap.base, "GetTask", { id: task })).result?.status.state ===
            "TASK_STATE_COMPLETED"
          ? true
          : undefined,
      120_000,
    );
    faulting = false;
    const last = (await rpc(cap.base, "murmur.PollSession", { cursor: 0 })).result.cursor as number;
    await until(
      `the edge's watcher at ${last}`,
      () => watcher.lastId >= last || ended || undefined,
      60_000,
    );
    // The capsule's refreshes were taken away more than once (they come every 5 s): the key was
    // missing longer than the edge's 4 s judgement, and the stream kept it following.
    assert(deleted >= 2, `the key was deleted ${deleted} times`);
    assert(!ended, `the edge ended the stream at ${watcher.lastId} of ${last}`);
    assertEquals(watcher.lastId, last);
    // The fault over, the capsule's next refresh sets the key again.
    await until(
      "the liveness key back",
      async () => await fault.call(["EXISTS", keys.alive]) === 1 || undefined,
      20_000,
    );
  } finally {
    faulting = false;
    sub.close();
    fault.close();
    w?.close();
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});
