/**
 * The Redis deployments people run (docs/edge.md "Redis URLs"), each with real servers
 * (tests/helpers/redis_topologies.ts), real capsules publishing and real `mur edge` processes:
 * TLS with a test CA and an ACL user; a Redis Cluster of three primaries reached through one
 * node's URL, with sessions on every primary, a slot moved and a primary killed while they stream;
 * Sentinel failover mid-stream. Every watcher gets every event or is told how many it lost
 * (`lagged`, `gap`): never a silent loss.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type Capsule, rpc, startCapsule } from "../helpers/capsule.ts";
import { type EdgeProc, startEdgeProc } from "../helpers/edge.ts";
import { IdWatcher } from "../helpers/id_watcher.ts";
import { TestCluster, TestSentinel, TlsRedis } from "../helpers/redis_topologies.ts";
import { until } from "../helpers/until.ts";
import { sessionKeys } from "../../src/cluster/keys.ts";

/** A flood paced at about one event a millisecond, long enough to disturb Redis under it. */
const PACED_SCRIPT = {
  tasks: [
    { match: "paced", turns: [{ steps: [{ text: "x", repeat: 6000, delay_ms: 1 }] }] },
    { turns: [{ steps: [{ text: "hello" }] }] },
  ],
};

function manifest(redis: string) {
  return {
    name: "deployed",
    version: "0.1.0",
    lifecycle: { task_acceptance: "queue", queue_depth: 8, after_task: "sleep" },
    cluster: { redis },
  };
}

const send = async (base: string, text: string) =>
  (await rpc(base, "SendMessage", {
    message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] },
    configuration: { returnImmediately: true },
  })).result.task.id as string;

const cursorOf = async (base: string) =>
  (await rpc(base, "murmur.PollSession", { cursor: 0 })).result.cursor as number;

/** The task completed on the capsule's own door; then the session's last event id. */
async function completed(cap: Capsule, task: string): Promise<number> {
  await until(
    `${task} completed`,
    async () =>
      (await rpc(cap.base, "GetTask", { id: task })).result?.status.state === "TASK_STATE_COMPLETED"
        ? true
        : undefined,
    120_000,
  );
  return await cursorOf(cap.base);
}

/** The disturbance comes while the flood runs (at least 6 s: 6,000 events a millisecond apart). */
async function stillStreaming(cap: Capsule, task: string): Promise<void> {
  const state = (await rpc(cap.base, "GetTask", { id: task })).result?.status.state;
  assertEquals(state, "TASK_STATE_WORKING");
}

/** The session's edge URL answers its card: the edge finds it in Redis. */
async function published(edge: EdgeProc, cap: Capsule): Promise<string> {
  const sessionId = cap.ready.session_id;
  const at = `${edge.url}/sessions/${sessionId}`;
  // A red run says what the edge answered last (a 404 and a 503 are different faults).
  let last = "no answer";
  await until(`${sessionId} on the edge`, async () => {
    const r = await fetch(`${at}/.well-known/agent-card.json`);
    last = `${r.status} ${(await r.text()).slice(0, 300)}`;
    return r.status === 200 ? true : undefined;
  }, 30_000).catch((e) => {
    const said = cap.mur.err.text().slice(-2000);
    throw new Error(
      `${(e as Error).message}; the edge answered last: ${last}; the capsule said: ${said}`,
    );
  });
  return at;
}

/**
 * The watcher, opened at `from`, reached `last`: each event between arrived once, in order, or
 * was counted in a `lagged` or `gap` frame.
 */
async function everyEventOrTold(w: IdWatcher, from: number, last: number): Promise<void> {
  await until(`the watcher to reach ${last}`, () => w.lastId >= last ? true : undefined, 120_000);
  const ids = w.ids.filter((id) => id <= last);
  for (let i = 1; i < ids.length; i++) assert(ids[i] > ids[i - 1], `${ids[i - 1]} then ${ids[i]}`);
  assert(ids[0] > from);
  let told = 0;
  for (const u of w.unnumbered) {
    const lagged = /"frame":"lagged".*?"missed":(\d+)/.exec(u);
    if (lagged) told += Number(lagged[1]);
    const gap = /"frame":"gap".*?"firstAvailableId":(\d+)/.exec(u);
    if (gap) told += Number(gap[1]) - from - 1;
  }
  assertEquals(ids.length + told, last - from);
}

Deno.test("deployments: rediss:// with a test CA and an ACL user; the CA by --redis-ca, MURMUR_REDIS_CA or DENO_CERT; none, or a wrong password, said on stderr", async () => {
  const redis = await TlsRedis.start();
  const passwordless = `rediss://mur@127.0.0.1:${redis.port}`;
  const cap = await startCapsule({
    manifest: manifest(passwordless),
    script: PACED_SCRIPT,
    env: { MURMUR_REDIS_CA: redis.ca, MURMUR_REDIS_PASSWORD: redis.password },
  });
  const edges: EdgeProc[] = [];
  try {
    edges.push(await startEdgeProc(redis.url, {}, ["--redis-ca", redis.ca]));
    edges.push(await startEdgeProc(redis.url, { DENO_CERT: redis.ca }));
    const from = await cursorOf(cap.base);
    const watchers = [];
    for (const e of edges) {
      const at = await published(e, cap);
      watchers.push(await IdWatcher.open(at + "/", { lastEventId: from }));
    }
    const last = await completed(cap, await send(cap.base, "paced"));
    for (const w of watchers) {
      await everyEventOrTold(w, from, last);
      assertEquals(w.ids.length, last - from);
      w.close();
    }
    // No CA: the certificate is refused, and the edge says so.
    const blind = await startEdgeProc(redis.url);
    edges.push(blind);
    await until(
      "the edge to say it cannot reach Redis",
      () => /warning\[W-EDGE-001\].*certificate/.test(blind.stderrSoFar()) ? true : undefined,
    );
    // A wrong password: refused by the server, said the same way.
    const wrong = await startEdgeProc(`rediss://mur:nope@127.0.0.1:${redis.port}`, {}, [
      "--redis-ca",
      redis.ca,
    ]);
    edges.push(wrong);
    await until(
      "the edge to say its password was refused",
      () =>
        /warning\[W-EDGE-001\].*(WRONGPASS|invalid username-password)/.test(wrong.stderrSoFar())
          ? true
          : undefined,
    );
  } finally {
    for (const e of edges) await e.kill();
    await cap.close();
    await redis.close();
  }
});

Deno.test("deployments: a 3-primary Redis Cluster through one node's URL — sessions on every primary, a slot moved and the named primary killed mid-stream, no silent loss", async () => {
  const cluster = await TestCluster.start();
  const caps: Capsule[] = [];
  let edge: EdgeProc | undefined;
  try {
    const primaries = await cluster.primaries();
    const seed = primaries[0];
    for (let i = 0; i < 3; i++) {
      caps.push(
        await startCapsule({ manifest: manifest(cluster.url(seed.port)), script: PACED_SCRIPT }),
      );
    }
    // One session on each primary: its slot moved there (the capsules publish through it).
    const slots: number[] = [];
    for (let i = 0; i < 3; i++) {
      const slot = await cluster.slotOf(sessionKeys(caps[i].ready.session_id).events);
      slots.push(slot);
      await cluster.moveSlot(slot, primaries[i]);
    }
    for (let i = 0; i < 3; i++) assertEquals((await cluster.ownerOf(slots[i])).id, primaries[i].id);
    edge = await startEdgeProc(cluster.url(seed.port));
    const froms: number[] = [];
    const watchers: IdWatcher[] = [];
    const ats: string[] = [];
    for (const cap of caps) {
      const at = await published(edge, cap);
      ats.push(at);
      froms.push(await cursorOf(cap.base));
      watchers.push(await IdWatcher.open(at + "/", { lastEventId: froms.at(-1) }));
    }
    const tasks = await Promise.all(caps.map((c) => send(c.base, "paced")));
    await until(
      "every watcher to have events",
      () => watchers.every((w, i) => w.lastId > froms[i] + 100) ? true : undefined,
      60_000,
    );
    // Resharding: session 1's slot moves to the third primary while it streams…
    await cluster.moveSlot(slots[1], primaries[2]);
    // …and the primary both the capsules and the edge were given dies; its replica takes over.
    await stillStreaming(caps[0], tasks[0]);
    const promoted = await cluster.killPrimary(seed);
    assertEquals((await cluster.ownerOf(slots[0])).id, promoted.id);
    for (let i = 0; i < 3; i++) {
      const last = await completed(caps[i], tasks[i]);
      await everyEventOrTold(watchers[i], froms[i], last);
      watchers[i].close();
      // The edge still reads each session's tasks, wherever its keys live now.
      await until(
        `the task on the edge (${i})`,
        async () =>
          (await rpc(ats[i], "GetTask", { id: tasks[i] })).result?.status.state ===
              "TASK_STATE_COMPLETED"
            ? true
            : undefined,
      );
    }
  } finally {
    await edge?.kill();
    for (const c of caps) await c.close();
    await cluster.close();
  }
});

Deno.test("deployments: redis+sentinel:// — the primary killed mid-stream, the sentinels promote its replica, capsule and edge follow it, no silent loss", async () => {
  const sentinel = await TestSentinel.start();
  const cap = await startCapsule({ manifest: manifest(sentinel.url), script: PACED_SCRIPT });
  let edge: EdgeProc | undefined;
  try {
    edge = await startEdgeProc(sentinel.url);
    const at = await published(edge, cap);
    const from = await cursorOf(cap.base);
    const w = await IdWatcher.open(at + "/", { lastEventId: from });
    const task = await send(cap.base, "paced");
    await until("events on the edge", () => w.lastId > from + 100 ? true : undefined, 60_000);
    await stillStreaming(cap, task);
    await sentinel.killPrimary();
    const last = await completed(cap, task);
    await everyEventOrTold(w, from, last);
    w.close();
    // The new primary holds the stream up to the last event.
    await until("the stream's last event on the promoted primary", async () => {
      const r = await rpc(at, "GetTask", { id: task });
      return r.result?.status.state === "TASK_STATE_COMPLETED" ? true : undefined;
    });
    assertEquals(await sentinel.primaryPort(), sentinel.replica.port);
  } finally {
    await edge?.kill();
    await cap.close();
    await sentinel.close();
  }
});
