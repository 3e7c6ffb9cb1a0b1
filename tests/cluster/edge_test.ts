/**
 * `mur edge` (docs/edge.md): a real capsule publishing to a real `redis-server`,
 * and a real `mur edge` process serving the session under `/sessions/<id>/`. The edge answers the
 * same bytes under the same ids as the capsule's own door, the same gap, task streams, GetTask and
 * ListTasks; writes reach the capsule through it; its tokens are the capsule's.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { collect, frameOf, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";
import { provenLosses, type Telling } from "../helpers/told_losses.ts";
import { sessionOn, startEdgeProc } from "../helpers/edge.ts";
import { RawSse } from "../helpers/raw_sse.ts";
import { IdWatcher } from "../helpers/id_watcher.ts";
import { TestRedis } from "../helpers/redis.ts";
import { until } from "../helpers/until.ts";
import { clusterManifest, FLOOD_SCRIPT } from "./fixtures.ts";

async function rpc(base: string, method: string, params: unknown, token?: string) {
  const res = await fetch(base + "/", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "a2a-version": "1.0",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  return { status: res.status, body: await res.json() };
}

/** Waits until GetTask at `base` (a door or an edge's session path) says the task is in `state`. */
const reach = (base: string, id: string, state: string) =>
  until(
    `${id} ${state}`,
    async () =>
      (await rpc(base, "GetTask", { id })).body.result?.status.state === state ? true : undefined,
  );

const send = async (base: string, text: string) =>
  (await rpc(base, "SendMessage", {
    message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] },
    configuration: { returnImmediately: true },
  })).body.result.task.id as string;

/** Every event of a watch from `cursor` up to event `last` (the replay, then live ones). */
async function watchTo(base: string, cursor: number, last: number): Promise<SseEvent[]> {
  const res = await streamRequest(base, "murmur.WatchSession", {}, {
    "last-event-id": String(cursor),
  });
  return await collect(res, (e) => e.id === last, 20_000);
}

/** The `lagged`/`gap` frames of `events`, each where it came among the numbered ones. */
function tellings(events: SseEvent[]): Telling[] {
  const out: Telling[] = [];
  let numbered = 0;
  for (const e of events) {
    if (e.id !== null) numbered++;
    else {
      const f = frameOf(e);
      if (f?.frame === "lagged") out.push({ at: numbered, missed: Number(f.missed) });
      if (f?.frame === "gap") {
        out.push({ at: numbered, firstAvailableId: Number(f.firstAvailableId) });
      }
    }
  }
  return out;
}

/** received + told for `events` read from `from` to `last`, proven hole by hole. */
function accounted(events: SseEvent[], from: number, last: number): number {
  const ids = events.filter((e) => e.id !== null).map((e) => e.id!);
  const p = provenLosses(ids, tellings(events), from, last);
  return p.received + p.told;
}

Deno.test("edge: the same events under the same ids as the capsule's door; the same gap; reads and writes", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  const edge = await startEdgeProc(redis.url);
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    // A task sent through the edge runs on the capsule.
    const a = await send(at, "flood");
    const done = (await until("the flood to complete on the edge", async () => {
      const r = await rpc(at, "GetTask", { id: a });
      return r.body.result?.status.state === "TASK_STATE_COMPLETED" ? r : undefined;
    })).body.result;
    assertEquals(done, (await rpc(cap.base, "GetTask", { id: a })).body.result);
    const last = (await rpc(cap.base, "murmur.PollSession", { cursor: 0 })).body.result
      .cursor as number;
    // Replay of the newest events, byte for byte the same frames (heartbeats aside).
    const mine = await watchTo(cap.base, last - 300, last);
    const theirs = await watchTo(at, last - 300, last);
    const numbered = (es: SseEvent[]) => es.filter((e) => e.id !== null);
    assertEquals(numbered(theirs).map((e) => e.id), numbered(mine).map((e) => e.id));
    assertEquals(numbered(theirs), numbered(mine));
    assertEquals(numbered(mine).length, 300);
    // A cursor older than the buffer, and one this session never issued: the same gap.
    for (const cursor of [5, last + 1000]) {
      const g1 = frameOf((await watchTo(cap.base, cursor, last))[1]);
      const g2 = frameOf((await watchTo(at, cursor, last))[1]);
      assertEquals(g2, g1);
      assertEquals(g2?.frame, "gap");
      assertEquals(g2?.firstAvailableId, last - 511);
    }
    // ListTasks answers as the capsule's door does.
    assertEquals(
      (await rpc(at, "ListTasks", {})).body.result,
      (await rpc(cap.base, "ListTasks", {})).body.result,
    );
    // A live task: SubscribeToTask on the edge, CancelTask through the edge ends it.
    const slow = await send(at, "slow");
    await reach(at, slow, "TASK_STATE_WORKING");
    // A task queued behind it changes without an event: the edge still knows it (the publisher
    // looks at the registry every second).
    const queued = await send(at, "hello");
    await until(
      "the queued task on the edge",
      async () =>
        (await rpc(at, "GetTask", { id: queued })).body.result?.status.state ===
            "TASK_STATE_SUBMITTED"
          ? true
          : undefined,
    );
    // Attachments are the capsule's bytes: forwarded, answered as its door answers.
    const img = `${at}/attachments/${slow}/${"0".repeat(64)}`;
    const none = await fetch(img);
    assertEquals(
      none.status,
      await fetch(`${cap.base}/attachments/${slow}/${"0".repeat(64)}`).then(
        async (r) => {
          await r.body?.cancel();
          return r.status;
        },
      ),
    );
    await none.body?.cancel();
    const post = await fetch(img, { method: "POST" });
    assertEquals([post.status, post.headers.get("allow")], [405, "GET"]);
    await post.body?.cancel();
    const sub = await streamRequest(at, "SubscribeToTask", { id: slow }, {
      "a2a-extensions": STREAM_URI,
    });
    assertEquals(sub.headers.get("a2a-extensions"), STREAM_URI);
    const reading = collect(sub, () => false, 20_000);
    const canceled = await rpc(at, "CancelTask", { id: slow });
    assertEquals(canceled.body.result.status.state, "TASK_STATE_CANCELED");
    const events = await reading;
    const opening = events[0].data.result as { task: { id: string } };
    assertEquals(opening.task.id, slow);
    const end = events.at(-1)!.data.result as { statusUpdate: { status: { state: string } } };
    assertEquals(end.statusUpdate.status.state, "TASK_STATE_CANCELED");
    // An ended task is refused as the door refuses it; an unknown session is 404.
    assertEquals((await rpc(at, "SubscribeToTask", { id: slow })).body.error.code, -32004);
    assertEquals((await rpc(at, "SubscribeToTask", { id: "tsk_nope" })).body.error.code, -32001);
    const unknown = await fetch(`${edge.url}/sessions/ses_${"0".repeat(32)}/`, {
      method: "POST",
    });
    assertEquals(unknown.status, 404);
    await unknown.body?.cancel();
    // The card names the edge's address for the session.
    const card = await (await fetch(`${at}/.well-known/agent-card.json`)).json();
    assertEquals(card.supportedInterfaces[0].url, at);
  } finally {
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});

Deno.test("edge: the capsule's tokens and scopes, under the shared MURMUR_CLUSTER_KEY", async () => {
  const redis = await TestRedis.start();
  const key = "k".repeat(40);
  const cap = await startCapsule({
    manifest: clusterManifest(redis.url, {
      network: {
        authentication: {
          scheme: "bearer",
          credentials: { reader: { scopes: ["murmur.WatchSession", "GetTask"] } },
        },
      },
    }),
    script: FLOOD_SCRIPT,
    env: { MURMUR_CLUSTER_KEY: key },
  });
  const edge = await startEdgeProc(redis.url, { MURMUR_CLUSTER_KEY: key });
  const keyless = await startEdgeProc(redis.url);
  try {
    const tokens = cap.ready.tokens!;
    const at = await sessionOn(edge, cap.ready.session_id);
    await until(
      "the session in Redis",
      async () =>
        (await fetch(`${at}/.well-known/agent-card.json`).then(async (r) => {
            await r.body?.cancel();
            return r.status;
          })) === 200
          ? true
          : undefined,
    );
    assertEquals((await rpc(at, "ListTasks", {})).status, 401);
    assertEquals((await rpc(at, "ListTasks", {}, "mdt1.forged.token")).status, 401);
    const reader = await rpc(at, "ListTasks", {}, tokens.reader);
    assertEquals(reader.status, 403);
    assertEquals(reader.body.error, "insufficient_scope");
    const op = await rpc(at, "ListTasks", {}, tokens.operator);
    assertEquals(op.status, 200);
    assert(Array.isArray(op.body.result.tasks));
    // An edge without the key cannot verify: it says so rather than refusing every token as bad.
    const other = await rpc(
      `${keyless.url}/sessions/${cap.ready.session_id}`,
      "ListTasks",
      {},
      tokens.operator,
    );
    assertEquals(other.status, 503);
    assertEquals(other.body.error, "tokens_not_verifiable");
  } finally {
    await edge.kill();
    await keyless.kill();
    await cap.close();
    await redis.close();
  }
});

Deno.test("edge: heartbeats, a slow reader told lagged, plain task streams, SendStreamingMessage and StopSession through it", async () => {
  const redis = await TestRedis.start();
  const cap = await startCapsule({ manifest: clusterManifest(redis.url), script: FLOOD_SCRIPT });
  const edge = await startEdgeProc(redis.url, { MURMUR_HEARTBEAT_MS: "200" });
  const raws: RawSse[] = [];
  try {
    const at = await sessionOn(edge, cap.ready.session_id);
    const ending = await IdWatcher.open(at + "/", { lastEventId: 0 });
    // Heartbeats on the edge's own cadence.
    const beating = await RawSse.open(at + "/", "murmur.WatchSession", {}, {
      "last-event-id": "0",
    });
    raws.push(beating);
    await beating.readComments(2, 10_000);
    // A reader that stops reading during a deluge of 40,000 events.
    const stalled = await RawSse.open(at + "/", "murmur.WatchSession", {}, {
      "last-event-id": "0",
    });
    raws.push(stalled);
    // SendStreamingMessage through the edge: the capsule's own stream, to its final status.
    const from = (await rpc(cap.base, "murmur.PollSession", { cursor: 0 })).body.result.cursor;
    const res = await streamRequest(at, "SendStreamingMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "deluge" }] },
    }, { "a2a-extensions": STREAM_URI });
    assertEquals(res.headers.get("a2a-extensions"), STREAM_URI);
    const streamed = await collect(res, () => false, 60_000);
    const final = streamed.at(-1)!.data.result as { statusUpdate: { status: { state: string } } };
    assertEquals(final.statusUpdate.status.state, "TASK_STATE_COMPLETED");
    // Every event of the deluge arrived or was counted in the lagged frame written in its place
    // (a reader this slow, a loaded machine, is told what it missed, as on the capsule's own
    // door). On a task stream `lagged` rides a statusUpdate: a reader of message carriers only
    // counted none of it, and saw 38,528 of 40,004 events "lost" in about 1 run in 9.
    const last = streamed.at(-1)!.id!;
    assertEquals(accounted(streamed, from, last), last - from);
    const read = await stalled.read((e) => e.id === last, 60_000);
    assert(tellings(read).length >= 1, "the stalled reader was not told it lost events");
    assertEquals(accounted(read, 0, last), last);
    // A plain SubscribeToTask: standard events only, no extension named.
    const slow = await send(at, "slow");
    await reach(at, slow, "TASK_STATE_WORKING");
    const sub = await streamRequest(at, "SubscribeToTask", { id: slow });
    assertEquals(sub.headers.get("a2a-extensions"), null);
    const reading = collect(sub, () => false, 20_000);
    await rpc(at, "CancelTask", { id: slow });
    const events = await reading;
    for (const e of events.slice(1)) {
      const su = (e.data.result as { statusUpdate?: { metadata?: unknown } }).statusUpdate;
      assert(su && su.metadata === undefined, JSON.stringify(e.data));
    }
    // StopSession through the edge reaches the session; its end reaches the edge's watchers.
    const stop = await rpc(at, "murmur.StopSession", {});
    assertEquals(stop.body.result.sessionId, cap.ready.session_id);
    cap.kill("SIGTERM");
    await cap.finished();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const how = await Promise.race([
      ending.ended.then(() => "ended"),
      new Promise((r) => (timer = setTimeout(() => r("still open"), 20_000))),
    ]);
    clearTimeout(timer);
    ending.close();
    assertEquals(how, "ended");
    assert(ending.lastId > 40_000, `${ending.lastId}`);
  } finally {
    for (const r of raws) r.close();
    await edge.kill();
    await cap.close();
    await redis.close();
  }
});
