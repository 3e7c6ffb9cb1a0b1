/**
 * `murmur.PollSession` (src/door/poll.ts, docs/protocol.md "Long poll") on a real capsule: the
 * same events, ids and bytes a WatchSession replays; paging by cursor; a wait that ends when the
 * next event comes; the gap a replay would write; bad params refused; the watch scope.
 */
import assert from "node:assert/strict";
import { collect, type SseEvent, streamRequest } from "../helpers/sse.ts";
import { call, capsule, message } from "./helpers.ts";

type Poll = {
  cursor: number;
  events: { id: number; data: Record<string, unknown> }[];
  gap?: { firstAvailableId: number };
  closed: boolean;
};

async function poll(base: string, params: Record<string, unknown>, token?: string): Promise<Poll> {
  const a = await call(base, "murmur.PollSession", params, { token });
  assert.ok(a.json?.result, a.text.slice(0, 500));
  return a.json.result;
}

/** A WatchSession from 0: its numbered events, until the one with id `last`. */
async function watched(base: string, last: number): Promise<SseEvent[]> {
  const res = await streamRequest(base, "murmur.WatchSession", {});
  const all = await collect(res, (e) => e.id === last, 15_000);
  return all.filter((e) => e.id !== null);
}

const SCRIPT = {
  tasks: [
    // Multi-byte text in every frame; 600 pieces push the session past the 512-event buffer.
    { match: "^flood", turns: [{ steps: [{ text: "ж✓ ", repeat: 600 }] }] },
    { turns: [{ steps: [{ thinking: "think é" }, { text: "answer ✓" }] }] },
  ],
};

Deno.test("poll: every event a watch replays, same ids and data; paging by cursor", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    for (const t of ["one", "two", "three"]) await call(cap.base, "SendMessage", message(t));
    const whole = await poll(cap.base, {});
    assert.equal(whole.gap, undefined);
    assert.ok(whole.events.length > 10, JSON.stringify(whole).slice(0, 300));
    assert.deepEqual(whole.events.map((e) => e.id), whole.events.map((_, i) => i + 1));
    assert.equal(whole.cursor, whole.events.at(-1)!.id);
    assert.equal(whole.closed, false);
    const watch = await watched(cap.base, whole.cursor);
    assert.deepEqual(whole.events, watch.map((e) => ({ id: e.id, data: e.data.result })));

    // Pages of 4 from cursor 0 add up to the whole, in order, none twice.
    const paged: Poll["events"] = [];
    let cursor = 0;
    for (let i = 0; i < 100 && cursor < whole.cursor; i++) {
      const page = await poll(cap.base, { cursor, maxEvents: 4 });
      assert.ok(page.events.length >= 1 && page.events.length <= 4);
      paged.push(...page.events);
      cursor = page.cursor;
    }
    assert.deepEqual(paged, whole.events);
    // Nothing after the last id and no wait: an empty answer that keeps the cursor.
    assert.deepEqual(await poll(cap.base, { cursor: whole.cursor, waitSecs: 0 }), {
      cursor: whole.cursor,
      events: [],
      closed: false,
    });
  } finally {
    await cap.close();
  }
});

Deno.test("poll: a poll with nothing new waits for the next event and answers with it", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    await call(cap.base, "SendMessage", message("first"));
    const { cursor } = await poll(cap.base, {});
    // The poll is asked before the task is sent; it may only answer with an event after `cursor`.
    const waiting = poll(cap.base, { cursor, waitSecs: 30 });
    await call(cap.base, "SendMessage", message("second"));
    const next = await waiting;
    assert.ok(next.events.length >= 1);
    assert.ok(next.events[0].id === cursor + 1, JSON.stringify(next.events[0]));
    assert.equal(next.gap, undefined);
  } finally {
    await cap.close();
  }
});

Deno.test("poll: a gap exactly where a watch's replay writes one (evicted, never issued); a poll cannot be made to wait for a cursor never issued", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script: SCRIPT,
  });
  try {
    await call(cap.base, "SendMessage", message("flood"));
    const all = await poll(cap.base, { cursor: 0 });
    assert.ok(all.gap && all.gap.firstAvailableId > 1, JSON.stringify(all.gap));
    assert.equal(all.events[0].id, all.gap.firstAvailableId);
    const last = all.events.at(-1)!.id;
    // A watch from 0 writes the same gap frame first, then the same events.
    const res = await streamRequest(cap.base, "murmur.WatchSession", {});
    const seen = await collect(res, (e) => e.id === last, 15_000);
    const gapFrame = seen.map((e) =>
      (e.data.result as Record<string, Record<string, Record<string, Record<string, unknown>>>>)
        ?.message?.metadata
    ).find((m) => m && Object.values(m).some((v) => v?.frame === "gap"));
    assert.ok(gapFrame, "the watch wrote a gap");
    assert.equal(
      Object.values(gapFrame).find((v) => v.frame === "gap")!.firstAvailableId,
      all.gap.firstAvailableId,
    );
    // A cursor this session never issued: the gap at once, however long the poll may wait.
    const never = await poll(cap.base, { cursor: last + 1000, waitSecs: 30 });
    assert.deepEqual(never.gap, { firstAvailableId: all.gap.firstAvailableId });
  } finally {
    await cap.close();
  }
});

Deno.test("poll: bad cursor, waitSecs or maxEvents is -32602 naming the field; ProtoJSON string integers are taken", async () => {
  const cap = await capsule({ lifecycle: { task_acceptance: "queue", after_task: "sleep" } });
  try {
    const bad: [Record<string, unknown>, string][] = [
      [{ cursor: -1 }, "cursor must be an integer from 0 to 9007199254740991"],
      [{ cursor: 1.5 }, "cursor must be an integer from 0 to 9007199254740991"],
      [{ cursor: "abc" }, "cursor must be an integer from 0 to 9007199254740991"],
      [{ cursor: {} }, "cursor must be an integer from 0 to 9007199254740991"],
      [{ waitSecs: 31 }, "waitSecs must be an integer from 0 to 30"],
      [{ wait_secs: -1 }, "waitSecs must be an integer from 0 to 30"],
      [{ maxEvents: 0 }, "maxEvents must be an integer from 1 to 512"],
      [{ maxEvents: 513 }, "maxEvents must be an integer from 1 to 512"],
    ];
    for (const [params, text] of bad) {
      const a = await call(cap.base, "murmur.PollSession", params);
      assert.equal(a.json.error?.code, -32602, a.text);
      assert.equal(a.json.error.message, `Invalid params: ${text}`);
    }
    const ok = await call(cap.base, "murmur.PollSession", { cursor: "0", max_events: "2" });
    assert.ok(Array.isArray(ok.json.result?.events), ok.text);
  } finally {
    await cap.close();
  }
});

Deno.test("poll: an authenticated door lets a murmur.WatchSession credential poll, and no other", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    network: {
      authentication: {
        scheme: "bearer",
        credentials: {
          watcher: { scopes: ["murmur.WatchSession"] },
          sender: { scopes: ["SendMessage"] },
        },
      },
    },
  });
  try {
    const tokens = cap.ready.tokens!;
    await call(cap.base, "SendMessage", message("hi"), { token: tokens.sender });
    const seen = await poll(cap.base, {}, tokens.watcher);
    assert.ok(seen.events.length > 0);
    const refused = await call(cap.base, "murmur.PollSession", {}, { token: tokens.sender });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.message, "credential 'sender' does not reach murmur.WatchSession");
    const none = await call(cap.base, "murmur.PollSession", {});
    assert.equal(none.status, 401);
  } finally {
    await cap.close();
  }
});

Deno.test("poll: a waiting poll is answered when the session's stream ends, and says closed", async () => {
  // In process, on the session's real EventLog: ending a session over the wire also shuts the
  // door, so the moment between the two is not one a wire test can hold still.
  const { EventLog } = await import("../../src/events/log.ts");
  const { pollSession } = await import("../../src/door/poll.ts");
  const log = new EventLog();
  const append = (text: string) =>
    log.append({
      taskId: "tsk_1",
      contextId: "ctx_1",
      standard: true,
      activated: { message: { text } },
      state: "TASK_STATE_WORKING",
      isStatus: true,
    });
  append("one");
  append("two ✓");
  const ctx = { session: { log } } as unknown as Parameters<typeof pollSession>[0];
  const first = await pollSession(ctx, {});
  assert.deepEqual(first, {
    cursor: 2,
    events: [{ id: 1, data: { message: { text: "one" } } }, {
      id: 2,
      data: { message: { text: "two ✓" } },
    }],
    closed: false,
  });
  const waiting = pollSession(ctx, { cursor: 2, waitSecs: 30 });
  append("three");
  log.close();
  assert.deepEqual(await waiting, {
    cursor: 3,
    events: [{ id: 3, data: { message: { text: "three" } } }],
    closed: true,
  });
  const asleep = pollSession(ctx, { cursor: 3, waitSecs: 30 }); // the log is closed: no wait
  assert.deepEqual(await asleep, { cursor: 3, events: [], closed: true });
  // A cursor behind the end still gets what is left, and closed only once it has it all.
  assert.equal((await pollSession(ctx, { cursor: 1, maxEvents: 1 })).closed, false);
});
