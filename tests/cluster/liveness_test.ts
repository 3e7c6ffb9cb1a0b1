/**
 * A capsule that dies (SIGKILL: no end marker, no goodbye) stops refreshing its liveness key
 * (src/cluster/keys.ts `alive`); every edge following the session ends its streams once the key
 * has been missing a few seconds (src/edge/stream_reader.ts), as the capsule's own door's
 * connections end when its process dies: without `capsule-closed`, and long before the session's
 * other keys expire (30 s after the last refresh).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { startEdgeProc } from "../helpers/edge.ts";
import { IdWatcher } from "../helpers/id_watcher.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { sessionKeys } from "../../src/cluster/keys.ts";
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
