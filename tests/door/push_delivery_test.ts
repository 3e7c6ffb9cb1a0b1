/**
 * Push deliveries under faults (docs/push.md; src/push/deliveries.ts) on a real
 * capsule with real receivers on loopback: a 2,000-event task whose receiver is down (503) for
 * the first half gets every update exactly once after deduplication, in order, once it is back; a
 * receiver that never answers holds only its own lane while another receiver of the same task
 * gets everything, its full queue drops the oldest events with the count in the trace, and the
 * session's end records every event it never delivered. No sleeps: each step waits on the
 * receiver's or the task's state.
 */
import assert from "node:assert/strict";
import { until } from "../helpers/until.ts";
import { type Delivery, startReceiver } from "../helpers/webhook_receiver.ts";
import type { Capsule } from "../helpers/capsule.ts";
import { call, capsule, ended, message, traceOf, waitTask } from "./helpers.ts";

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";
const ACTIVATE = { "a2a-extensions": STREAM_URI };

// deno-lint-ignore no-explicit-any
const secretOf = (cap: Capsule) => (cap.ready as any).push_secret as string;

/** A task that asks for input after `first` text frames, then streams `second` more. */
function halves(first: number, second: number) {
  return {
    tasks: [{
      turns: [
        {
          steps: [
            ...(first > 0 ? [{ text: "a", repeat: first }] : []),
            { tool_call: { id: "t1", name: "request-input", input: { prompt: "more?" } } },
          ],
        },
        { steps: [{ text: "b", repeat: second }] },
      ],
    }],
  };
}

function pushCapsule(script: Record<string, unknown>) {
  return capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    network: { push_notifications: { enabled: true, allow_private: true } },
    extra: { tools: [{ builtin: "request-input" }] },
    script,
    env: { MURMUR_PUSH_RETRY_BASE_MS: "20" },
  });
}

const textOf = (d: Delivery): string | undefined => {
  const f = d.body.statusUpdate?.metadata?.[STREAM_URI];
  return f?.frame === "text" ? f.text : undefined;
};

const isFinal = (d: Delivery | undefined) =>
  d?.body.statusUpdate?.status.state === "TASK_STATE_COMPLETED" &&
  d.body.statusUpdate.metadata === undefined;

Deno.test("a 2,000-event task with its receiver down for the first half: every update exactly once after dedup, in order", async () => {
  let secret = "";
  const rx = startReceiver(() => secret, "down");
  const cap = await pushCapsule(halves(1000, 1000));
  secret = secretOf(cap);
  try {
    const sent = await call(
      cap.base,
      "SendMessage",
      message("go", {}, { returnImmediately: true, taskPushNotificationConfig: { url: rx.url() } }),
      { headers: ACTIVATE },
    );
    const task = sent.json.result.task;
    await waitTask(cap.base, task.id, (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED");
    // The first half is over and the receiver has refused the first event a few times.
    await until("three refused attempts", () => rx.posts.length >= 3 ? true : undefined);
    assert.ok(rx.posts.every((d) => d.answered === 503));
    assert.equal(new Set(rx.posts.map((d) => d.id)).size, 1, "the first event is retried first");
    rx.mode = "up";
    await call(
      cap.base,
      "SendMessage",
      message("yes", { taskId: task.id }, { returnImmediately: true }),
    );
    await waitTask(cap.base, task.id, (t) => t.status.state === "TASK_STATE_COMPLETED");
    const got = await until("the final status delivered", () => {
      const u = rx.unique();
      return isFinal(u.at(-1)) ? u : undefined;
    }, 60_000);

    assert.ok(rx.posts.every((d) => d.verified), "every POST's signature verifies");
    const ids = got.map((d) => Number(d.id));
    // One task in the session: its events are every id from the first to the last, once each.
    assert.deepEqual(ids, ids.map((_, i) => ids[0] + i), "contiguous, in order, none twice");
    const texts = got.map(textOf).filter((t) => t !== undefined);
    assert.equal(texts.join(""), "a".repeat(1000) + "b".repeat(1000));
    assert.ok(got.length > 2000, `${got.length} updates`);
    // A duplicate (a retried event) carries the same body as its first POST.
    const first = new Map(got.map((d) => [d.id, JSON.stringify(d.body)]));
    for (const d of rx.posts) assert.equal(JSON.stringify(d.body), first.get(d.id));
    for (const d of got) {
      assert.equal((d.body.statusUpdate ?? d.body.artifactUpdate).taskId, task.id);
    }

    cap.kill("SIGTERM");
    await ended(cap);
    const end = (await traceOf(cap)).filter((l) => l.event_type === "push_end");
    assert.equal(end.length, 1);
    assert.equal(end[0].how, "drained");
    assert.equal(end[0].delivered, got.length);
    assert.equal(end[0].undelivered, 0);
    assert.equal(end[0].dropped, 0);
    assert.equal(end[0].gave_up, 0);
    const out = await cap.finished();
    assert.doesNotMatch(out.stderr, /W-PUSH-001/);
  } finally {
    await cap.close();
    await rx.close();
  }
});

Deno.test("a receiver that never answers holds only its own lane: the other receiver of the task finishes (delivered + dropped = every event once, in order); the drops and the undelivered events are in the trace", async () => {
  let secret = "";
  const live = startReceiver(() => secret);
  const stuck = startReceiver(() => secret, "hold");
  const FLOOD = 5000;
  const cap = await pushCapsule(halves(0, FLOOD));
  secret = secretOf(cap);
  try {
    const sent = await call(
      cap.base,
      "SendMessage",
      message("go", {}, { returnImmediately: true }),
    );
    const task = sent.json.result.task;
    await waitTask(cap.base, task.id, (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED");
    for (const [id, rx] of [["live", live], ["stuck", stuck]] as const) {
      const a = await call(
        cap.base,
        "CreateTaskPushNotificationConfig",
        { taskId: task.id, id, url: rx.url() },
        { headers: ACTIVATE },
      );
      assert.equal(a.json.result.id, id, a.text);
    }
    await call(
      cap.base,
      "SendMessage",
      message("yes", { taskId: task.id }, { returnImmediately: true }),
    );
    await waitTask(cap.base, task.id, (t) => t.status.state === "TASK_STATE_COMPLETED");
    const got = await until("the live receiver has the final status", () => {
      const u = live.unique();
      return isFinal(u.at(-1)) ? u : undefined;
    }, 60_000);
    assert.equal(stuck.posts.length, 0, "the stuck receiver has answered nothing yet");

    cap.kill("SIGTERM");
    await ended(cap, 30_000);
    const trace = await traceOf(cap);
    const end = new Map(
      trace.filter((l) => l.event_type === "push_end").map((l) => [l.config_id, l]),
    );
    const dropsOf = (config: string) =>
      trace.filter((l) => l.event_type === "push_dropped" && l.config_id === config);
    // A burst of 5,000 can outrun even a live receiver's lane: what it dropped is in the trace,
    // oldest first, and what it delivered plus what it dropped is every event, once, in order.
    const liveDropped: number[] = [];
    for (const l of dropsOf("live")) {
      const [a, b] = [l.first_event_id as number, l.last_event_id as number];
      assert.equal(l.dropped, b - a + 1, "a drop run is consecutive ids");
      for (let i = a; i <= b; i++) liveDropped.push(i);
    }
    const ids = got.map((d) => Number(d.id));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y), "delivered in order");
    const all = [...ids, ...liveDropped].sort((x, y) => x - y);
    assert.deepEqual(all, all.map((_, i) => all[0] + i), "delivered + dropped: every id once");
    const total = all.length;
    assert.ok(total > FLOOD, `${total} events`);
    const texts = got.map(textOf).filter((t) => t !== undefined).length;
    assert.ok(texts + liveDropped.length >= FLOOD);
    const liveEnd = end.get("live")!;
    assert.equal(liveEnd.how, "drained");
    assert.equal(liveEnd.delivered, got.length);
    assert.equal(liveEnd.dropped, liveDropped.length);
    assert.equal(liveEnd.undelivered, 0);
    // The stuck lane: its first event in flight, 4,096 waiting, the oldest of the rest dropped.
    const stuckEnd = end.get("stuck")!;
    assert.equal(stuckEnd.how, "session_ended");
    assert.equal(stuckEnd.delivered, 0);
    assert.equal(stuckEnd.undelivered, 1 + 4096);
    assert.equal(stuckEnd.dropped, total - 1 - 4096);
    const left = stuckEnd.undelivered_event_ids as number[];
    assert.equal(left[0], all[0], "the event in flight is the first");
    assert.deepEqual(left.slice(1), all.slice(total - 4096), "the newest 4,096 waited");
    const drops = dropsOf("stuck");
    assert.equal(drops.reduce((n, l) => n + (l.dropped as number), 0), total - 1 - 4096);
    assert.equal(drops[0].first_event_id, all[1]);
    assert.equal(drops.at(-1)!.last_event_id, all[total - 4096 - 1]);
    const out = await cap.finished();
    assert.match(
      out.stderr,
      new RegExp(
        `warning\\[W-PUSH-001\\]: push notifications not delivered: 0 given up, ${
          liveDropped.length + total - 1 - 4096
        } dropped from a full queue, ${1 + 4096} left when the session ended`,
      ),
    );
  } finally {
    await cap.close();
    await live.close();
    await stuck.close();
  }
});

Deno.test("a 5xx is given up after every attempt, a 4xx at once; the next event is sent after each", async () => {
  let secret = "";
  const rx = startReceiver(() => secret, "down");
  const cap = await pushCapsule(halves(0, 3));
  secret = secretOf(cap);
  try {
    const sent = await call(
      cap.base,
      "SendMessage",
      message("go", {}, { returnImmediately: true }),
    );
    const task = sent.json.result.task;
    await waitTask(cap.base, task.id, (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED");
    await call(cap.base, "CreateTaskPushNotificationConfig", {
      taskId: task.id,
      id: "c",
      url: rx.url(),
    });
    await call(
      cap.base,
      "SendMessage",
      message("yes", { taskId: task.id }, { returnImmediately: true }),
    );
    // The first event (WORKING) is refused 503 until its 10 attempts are spent; the next one
    // (the response artifact) meets a 410; the rest are taken.
    const ids: string[] = [];
    rx.decide = (d) => {
      if (!ids.includes(d.id)) ids.push(d.id);
      return ids.indexOf(d.id) === 0 ? "down" : ids.indexOf(d.id) === 1 ? "gone" : "up";
    };
    await until(
      "the final status delivered",
      () => isFinal(rx.unique().at(-1)) || undefined,
      60_000,
    );
    const gaveUp = (await traceOf(cap)).filter((l) => l.event_type === "push_gave_up");
    assert.deepEqual(
      gaveUp.map((l) => [String(l.event_id), l.attempts, l.error]),
      [[ids[0], 10, "HTTP 503"], [ids[1], 1, "HTTP 410"]],
    );
    assert.ok(Number(ids[0]) < Number(ids[1]), "in order");
    assert.equal(rx.posts.filter((d) => d.id === ids[0]).length, 10);
    assert.equal(rx.posts.filter((d) => d.id === ids[1]).length, 1);
    assert.equal(rx.posts[1 + 9].id, ids[1], "the next event only after the first was given up");
    assert.deepEqual(
      rx.unique().map((d) => d.id),
      ids.slice(2),
      "given-up events are not resent: the rest got through once each",
    );
    assert.ok(isFinal(rx.unique().at(-1)));
  } finally {
    await cap.close();
    await rx.close();
  }
});
