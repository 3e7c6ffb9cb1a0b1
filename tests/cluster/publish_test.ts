/**
 * Publishing (docs/edge.md): a real capsule with a `cluster:` block and a real
 * `redis-server` (tests/helpers/redis.ts). Every numbered event lands in the session's stream
 * under its own id, the tasks as GetTask answers them, the door's address; a Redis that goes away
 * is reported once on stderr and in the trace while the capsule and its door go on, and what
 * happened meanwhile is published when Redis is back.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { rpc, startCapsule, userMessage } from "../helpers/capsule.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { sessionKeys } from "../../src/cluster/keys.ts";
import type { Reply } from "../../src/cluster/client.ts";
import { clusterManifest, FLOOD_SCRIPT } from "./fixtures.ts";

async function send(base: string, text: string): Promise<string> {
  const body = await rpc(base, "SendMessage", {
    ...userMessage(text),
    configuration: { returnImmediately: true },
  });
  return body.result.task.id;
}

/** The ids the stream holds, in order, and its entries' fields by id. */
async function streamIds(r: TestRedis, key: string): Promise<string[]> {
  const all = await r.cmd("XRANGE", key, "-", "+") as [string, Reply[]][];
  return all.map(([id]) => id);
}

async function taskState(r: TestRedis, key: string, id: string): Promise<string | undefined> {
  const raw = await r.cmd("HGET", key, id);
  return typeof raw === "string" ? JSON.parse(raw).task.status.state : undefined;
}

/** Waits (bounded, helpers/until.ts) until Redis holds task `id` as completed. */
function completedIn(r: TestRedis, key: string, id: string, what: string): Promise<true> {
  return until(
    what,
    async () => await taskState(r, key, id) === "TASK_STATE_COMPLETED" ? true : undefined,
  );
}

Deno.test("publishing: every event under its own id, the tasks, the door; the end marker", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  try {
    const keys = sessionKeys(cap.ready.session_id);
    const a = await send(cap.base, "flood");
    await completedIn(redis, keys.tasks, a, "the flood's final status in Redis");
    // The capsule's own last id, from its door (PollSession answers the ring's newest).
    const poll = await cap.rpc("murmur.PollSession", { cursor: 0 }) as {
      result: { cursor: number };
    };
    const last = poll.result.cursor;
    assert(last > 3000, `${last}`);
    const ids = await until("the stream to hold the final status", async () => {
      const ids = await streamIds(redis, keys.events);
      return ids.at(-1) === `${last}-0` ? ids : undefined;
    });
    // MAXLEN ~ 1024 keeps at least 1024, contiguous, ending at the capsule's last id.
    assert(ids.length >= 1024, `${ids.length}`);
    const first = Number(ids[0].split("-")[0]);
    assertEquals(ids, Array.from({ length: last - first + 1 }, (_, i) => `${first + i}-0`));
    const door = await redis.cmd("HGET", keys.meta, "door");
    assertEquals(door, cap.base.replace("127.0.0.1", "localhost"));
    const card = JSON.parse(await redis.cmd("HGET", keys.meta, "card") as string);
    assertEquals(card.name, "published");
    const ttl = await redis.cmd("TTL", keys.events) as number;
    assert(ttl > 0 && ttl <= 30, `ttl ${ttl}`);
    // The session ends: its stream's end is marked after the last event.
    cap.kill("SIGTERM");
    await cap.finished();
    await until(
      "the end marker",
      async () => (await streamIds(redis, keys.events)).at(-1) === `${last}-1` ? true : undefined,
    );
  } finally {
    await cap.close();
    await redis.close();
  }
});

Deno.test("publishing: Redis down is reported once and touches nothing; back up, the events are published", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  try {
    const keys = sessionKeys(cap.ready.session_id);
    const a = await send(cap.base, "hello");
    await completedIn(redis, keys.tasks, a, "the first task in Redis");
    await redis.down();
    // The capsule and its door go on: two tasks run and answer while Redis is gone.
    const b = await send(cap.base, "flood");
    const c = await send(cap.base, "hello");
    for (const t of [b, c]) {
      await until(`${t} completed`, async () => {
        const body = await cap.rpc("GetTask", { id: t }) as {
          result: { status: { state: string } };
        };
        return body.result.status.state === "TASK_STATE_COMPLETED" ? true : undefined;
      });
    }
    await redis.up();
    // Back up (and empty): the facts again, and every event the queue held, under its own id.
    await completedIn(redis, keys.tasks, c, "the last task in the fresh Redis");
    const ids = await until("the stream to reach the last event", async () => {
      const ids = await streamIds(redis, keys.events);
      return ids.length > 0 && Number(ids.at(-1)!.split("-")[0]) >= 3007 ? ids : undefined;
    });
    const first = Number(ids[0].split("-")[0]);
    assertEquals(ids, Array.from({ length: ids.length }, (_, i) => `${first + i}-0`));
    assert(await redis.cmd("HGET", keys.meta, "door"));
    cap.kill("SIGTERM");
    const out = await cap.finished();
    const downs = out.stderr.split("\n").filter((l) => l.startsWith("warning[W-CLU-001]"));
    assertEquals(downs.length, 1, out.stderr);
    assert(
      /publishing to redis:\/\/127\.0\.0\.1:\d+ again, nothing lost/.test(out.stderr),
      out.stderr,
    );
    const trace = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`);
    const lines = trace.trim().split("\n").map((l) => JSON.parse(l)).filter((l) =>
      l.event_type === "cluster_publish"
    );
    assertEquals(lines.map((l) => [l.state, l.lost_events]), [["down", 0], ["up", 0]]);
  } finally {
    await cap.close();
    await redis.close();
  }
});

Deno.test("publishing: an idle session's Redis restarted empty is reported once and gets every fact again", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  try {
    const keys = sessionKeys(cap.ready.session_id);
    const a = await send(cap.base, "hello");
    await completedIn(redis, keys.tasks, a, "the task in Redis");
    // Nothing is out and nothing waits: no command of the publisher fails. The connection's loss
    // alone must tell the capsule that Redis forgot the task it wrote.
    await redis.restart();
    await completedIn(redis, keys.tasks, a, "the task in the fresh Redis");
    assert(await redis.cmd("HGET", keys.meta, "door"));
    cap.kill("SIGTERM");
    const out = await cap.finished();
    const downs = out.stderr.split("\n").filter((l) => l.startsWith("warning[W-CLU-001]"));
    assertEquals(downs.length, 1, out.stderr);
    assert(/publishing to redis:\/\/127\.0\.0\.1:\d+ again/.test(out.stderr), out.stderr);
  } finally {
    await cap.close();
    await redis.close();
  }
});
