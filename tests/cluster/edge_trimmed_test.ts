/**
 * An edge that falls more than the session's Redis stream behind (docs/edge.md "What an edge
 * serves": a stream of about 1,024 events, `XADD … MAXLEN ~ 1024`), as one starved of CPU on a
 * loaded machine does: here it is stopped (SIGSTOP) while the capsule writes 1,500 events more,
 * so the stream is trimmed past the last entry it read. Back, it reads on from that entry and finds
 * the next one the stream still holds: the events between are a hole, said once on its stderr and
 * told to every watcher as one `lagged` frame of exactly that count in the hole's place (received
 * + told = written, hole by hole), never a `gap`, never read from a wrong position, never counted
 * where the stream has the events. Every watcher of the edge is told the same count: the shape
 * of edge_fleet_test's rare red run under load (all watchers of two edges told about 173).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { rpc, startCapsule } from "../helpers/capsule.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { IdWatcher } from "../helpers/id_watcher.ts";
import { TestRedis } from "../helpers/redis.ts";
import { provenLosses } from "../helpers/told_losses.ts";
import { until } from "../helpers/until.ts";
import { clusterManifest } from "./fixtures.ts";

/** Events the capsule writes while the edge is stopped: past the stream's ~1,024 for certain. */
const WHILE_STOPPED = 1500;

/** 4,000 text frames, 100 every 100 ms: a model that streams steadily for a few seconds. */
const SCRIPT = {
  tasks: [{
    turns: [{
      steps: Array.from({ length: 40 }, () => [{ text: "x", repeat: 100 }, { delay_ms: 100 }])
        .flat(),
    }],
  }],
};

Deno.test("edge trimmed: an edge stopped past the stream's trim tells each watcher exactly the hole, once on stderr", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: SCRIPT });
  const edge = await startEdgeProc(redis.url);
  const watchers: IdWatcher[] = [];
  let stopped = false;
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    const door = await IdWatcher.open(cap.base + "/", { lastEventId: 0 });
    watchers.push(door);
    for (let i = 0; i < 10; i++) watchers.push(await IdWatcher.open(at + "/", { lastEventId: 0 }));
    const followers = watchers.slice(1);
    await until(
      "every watcher's connection-ack",
      () => watchers.every((w) => w.unnumbered.length >= 1) ? true : undefined,
    );
    const task = (await rpc(cap.base, "SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "go" }] },
      configuration: { returnImmediately: true },
    })).result.task.id as string;
    await until(
      "the edge's watchers under way",
      () => followers.every((w) => w.ids.length >= 300) ? true : undefined,
      60_000,
    );
    Deno.kill(edge.pid, "SIGSTOP");
    stopped = true;
    const stoppedAt = door.lastId;
    await until(
      `the capsule to write ${WHILE_STOPPED} events past ${stoppedAt}`,
      () => door.lastId >= stoppedAt + WHILE_STOPPED ? true : undefined,
      60_000,
    );
    Deno.kill(edge.pid, "SIGCONT");
    stopped = false;
    await until(
      "the task to complete",
      async () =>
        (await rpc(cap.base, "GetTask", { id: task })).result?.status.state ===
            "TASK_STATE_COMPLETED"
          ? true
          : undefined,
      120_000,
    );
    const last = (await rpc(cap.base, "murmur.PollSession", { cursor: 0 })).result
      .cursor as number;
    await until(
      "every watcher to reach the last event",
      () => watchers.every((w) => w.lastId === last) ? true : undefined,
      60_000,
    );
    assertEquals(door.ids.length, last);
    // One line on the edge's stderr names the hole.
    const holes = [...edge.stderrSoFar().matchAll(/events (\d+)–(\d+) are not in Redis/g)];
    assertEquals(holes.length, 1, edge.stderrSoFar());
    const [from, to] = [Number(holes[0][1]), Number(holes[0][2])];
    const size = to - from + 1;
    // A hole, and one that ends before what the capsule wrote while the edge was stopped: the
    // edge read on from its last entry, not past what the stream still held. How much more than
    // 1,024 entries `MAXLEN ~` keeps is Redis's choice (it trims whole nodes; a loaded run held
    // 1,127), so the hole's size is not bounded from below here: the count itself is proven
    // below, received + told = written, watcher by watcher.
    assert(size >= 1 && to < stoppedAt + WHILE_STOPPED, `${from}–${to}`);
    for (const w of followers) {
      assert(w.told.every((t) => t.firstAvailableId === undefined), JSON.stringify(w.told));
      // Exactly the hole, as one lagged frame in its place (and any loss of the watcher's own,
      // on a loaded machine, told the same way): received + told = written, hole by hole.
      const proven = provenLosses(w.ids, w.told, 0, last);
      assertEquals(proven.received + proven.told, last);
      const k = w.ids.findIndex((id) => id > to);
      assertEquals(w.ids[k - 1] < from, true, `${w.ids[k - 1]} before the hole ${from}–${to}`);
      assert(
        w.told.some((t) => t.missed === size && t.at === k),
        `told ${JSON.stringify(w.told)}, hole ${size} before id ${w.ids[k]}`,
      );
    }
  } finally {
    if (stopped) Deno.kill(edge.pid, "SIGCONT");
    for (const w of watchers) w.close();
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});
