/**
 * Streams on the HTTP+JSON binding (docs/protocol.md "HTTP+JSON"): the same views as JSON-RPC's
 * with the StreamResponse carried bare (A2A v1.0 §11.7) — the same event ids and the same event
 * bodies byte for byte, `Last-Event-ID` replay, `gap`, `lagged`, heartbeats, activation by
 * `A2A-Extensions` — at `POST /message:stream`, `POST|GET /tasks/{id}:subscribe` and
 * `GET /murmur/session:watch`, and the long poll at `GET /murmur/session:poll`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Capsule, startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";
import { RawSse } from "../helpers/raw_sse.ts";

type R = Record<string, Record<string, unknown>>;
const MEMBERS = ["task", "message", "statusUpdate", "artifactUpdate"];

/** A REST stream request: POST with a JSON body, or GET. */
function restStream(
  cap: Capsule,
  path: string,
  body: unknown | null,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(cap.base + path, {
    method: body === null ? "GET" : "POST",
    headers: {
      "a2a-version": "1.0",
      ...(body === null ? {} : { "content-type": "application/a2a+json" }),
      ...headers,
    },
    body: body === null ? undefined : JSON.stringify(body),
  });
}

/** The bare event's murmur frame, if any. */
function frame(e: SseEvent): Record<string, unknown> | undefined {
  const r = e.data as R;
  const holder = r.statusUpdate ?? r.message;
  return (holder?.metadata as R | undefined)?.[STREAM_URI];
}

/** The bare event's state, when it is a status update. */
function stateOf(e: SseEvent): string | undefined {
  return ((e.data as R).statusUpdate?.status as { state: string } | undefined)?.state;
}

/** Every event is one bare StreamResponse: exactly one A2A member, no JSON-RPC envelope. */
function assertBare(evs: SseEvent[]) {
  for (const e of evs) {
    assertEquals(Object.keys(e.data).length, 1, JSON.stringify(e.data));
    assert(MEMBERS.includes(Object.keys(e.data)[0]), JSON.stringify(e.data));
  }
}

/**
 * `slow <name>`: 20 text frames, then a shell command that waits for `release-<name>` in the
 * workdir, then 20 more (tests/streams/replay_test.ts does the same).
 */
function gated(name: string) {
  const wait = `until [ -e release-${name} ]; do sleep 0.05; done`;
  return {
    match: `^slow ${name}$`,
    turns: [
      {
        steps: [
          { text: "s", repeat: 20 },
          { tool_call: { id: `gate-${name}`, name: "bash", input: { command: wait } } },
        ],
      },
      { steps: [{ text: "s", repeat: 20 }] },
    ],
  };
}

Deno.test("HTTP+JSON streams: bare events with the JSON-RPC stream's ids and bodies; replay, gap, activation, heartbeat, poll", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "rest",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    env: { MURMUR_HEARTBEAT_MS: "200" },
    script: { tasks: [gated("g"), { turns: [{ steps: [{ text: "t", repeat: 30 }] }] }] },
  });
  try {
    // message:stream, activated: the task first (unnumbered), numbered events, murmur frames,
    // ended by the server at the terminal status.
    const res = await restStream(cap, "/message:stream", userMessage("thirty"), {
      "A2A-Extensions": STREAM_URI,
    });
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-type"), "text/event-stream");
    assert(res.headers.get("a2a-extensions")!.includes(STREAM_URI));
    const sent = await collect(res);
    assertBare(sent);
    assertEquals(sent[0].id, null);
    const taskId = (sent[0].data.task as { id: string }).id;
    assertEquals(stateOf(sent.at(-1)!), "TASK_STATE_COMPLETED");
    assertEquals(
      sent.filter((e) => frame(e)?.frame === "text").map((e) => frame(e)!.text).join(""),
      "t".repeat(30),
    );
    const ids = sent.filter((e) => e.id !== null).map((e) => e.id!);
    assert(ids.every((id, i) => i === 0 || id > ids[i - 1]), `ids in order: ${ids}`);

    // Not activated: the standard events only, nothing of murmur's.
    const plain = await collect(await restStream(cap, "/message:stream", userMessage("again")));
    assertBare(plain);
    assert(plain.every((e) => frame(e) === undefined));
    assertEquals(stateOf(plain.at(-1)!), "TASK_STATE_COMPLETED");

    // The watch from 0 on both bindings: the same ids and the same StreamResponses.
    const done = (e: SseEvent, body: R) =>
      e.id !== null && (body.statusUpdate?.taskId === taskId) &&
      (body.statusUpdate?.status as { state: string }).state === "TASK_STATE_COMPLETED";
    const viaRest = await collect(
      await restStream(cap, "/murmur/session:watch", null, { "Last-Event-ID": "0" }),
      (e) => done(e, e.data as R),
    );
    const viaRpc = await collect(
      await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" }),
      (e) => done(e, e.data.result as R),
    );
    assertBare(viaRest);
    const numbered = (evs: SseEvent[], rpc: boolean) =>
      evs.filter((e) => e.id !== null).map((e) => [e.id, rpc ? e.data.result : e.data]);
    assert(numbered(viaRest, false).length > 30);
    assertEquals(numbered(viaRest, false), numbered(viaRpc, true));
    assertEquals(frame(viaRest[0])?.frame, "connection-ack");

    // gap: a cursor this session never issued, the same on both bindings and on the long poll.
    const gapOf = async (evs: Promise<SseEvent[]>) =>
      (await evs).map(frame).find((f) => f?.frame === "gap");
    const restGap = await gapOf(collect(
      await restStream(cap, "/murmur/session:watch", null, { "Last-Event-ID": "999999" }),
      (_e, all) => all.length >= 2,
    ));
    const rpcGap = (await collect(
      await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "999999" }),
      (_e, all) => all.length >= 2,
    )).map((e) => ((e.data.result as R).message?.metadata as R | undefined)?.[STREAM_URI])
      .find((f) => f?.frame === "gap");
    assert(restGap, "the REST watch wrote a gap");
    assertEquals(restGap, rpcGap);
    const poll = await fetch(cap.base + "/murmur/session:poll?cursor=999999", {
      headers: { "a2a-version": "1.0" },
    });
    assertEquals(poll.headers.get("content-type"), "application/json");
    const polled = await poll.json();
    assertEquals(polled.gap, { firstAvailableId: restGap.firstAvailableId });
    // The poll from 0 reads the same events the watch did, as {id, data}.
    const fromZero = await (await fetch(cap.base + "/murmur/session:poll?cursor=0&maxEvents=5", {
      headers: { "a2a-version": "1.0" },
    })).json();
    assertEquals(
      fromZero.events.map((e: { id: number; data: unknown }) => [e.id, e.data]),
      numbered(viaRest, false).slice(0, 5),
    );
    assertEquals(fromZero.cursor, fromZero.events[4].id);

    // Subscribe with Last-Event-ID to a task that waits at its gate: the snapshot, then the
    // task's own events after the cursor, then live ones to its end — the same ids as JSON-RPC.
    const held = await (await fetch(cap.base + "/message:send", {
      method: "POST",
      headers: { "a2a-version": "1.0", "content-type": "application/json" },
      body: JSON.stringify({
        ...userMessage("slow g"),
        configuration: { returnImmediately: true },
      }),
    })).json();
    const gId = held.task.id as string;
    const gateOpen = await collect(
      await restStream(cap, `/tasks/${gId}:subscribe`, null, {
        "A2A-Extensions": STREAM_URI,
        "Last-Event-ID": "0",
      }),
      (e) => frame(e)?.frame === "tool-call-started",
    );
    assertBare(gateOpen);
    assertEquals(Object.keys(gateOpen[0].data), ["task"]);
    const cursor = gateOpen.filter((e) => e.id !== null)[5].id!;
    const headers = { "A2A-Extensions": STREAM_URI, "Last-Event-ID": String(cursor) };
    const restSub = await restStream(cap, `/tasks/${gId}:subscribe`, {}, headers);
    const rpcSub = await streamRequest(cap.base, "SubscribeToTask", { id: gId }, headers);
    // Heartbeats on the REST stream while the task waits (the interval is 200 ms here).
    let beats = 0;
    const restUntilGate = await collect(
      restSub,
      () => beats >= 2,
      15_000,
      () => beats++,
    );
    assertBare(restUntilGate);
    const replayed = restUntilGate.filter((e) => e.id !== null);
    assertEquals(replayed[0].id! > cursor, true);
    assert(
      replayed.every((e) => ((e.data as R).statusUpdate?.taskId ?? gId) === gId),
      "a task stream replays its own task only",
    );
    await Deno.writeTextFile(`${cap.ready.workdir}/release-g`, "");
    const rpcAll = await collect(rpcSub);
    assertEquals(
      rpcAll.filter((e) => e.id !== null).slice(0, replayed.length).map((
        e,
      ) => [e.id, e.data.result]),
      replayed.map((e) => [e.id, e.data]),
    );
    assertEquals(
      stateOf({ id: 0, data: rpcAll.at(-1)!.data.result as Record<string, unknown> }),
      "TASK_STATE_COMPLETED",
    );
  } finally {
    await cap.close();
  }
});

Deno.test("HTTP+JSON lagged: a stalled REST watcher is told what it lost, bare, and stays open", async () => {
  const N = 40_000;
  const cap = await startCapsule({
    manifest: {
      name: "restlag",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "x".repeat(100), repeat: N }] }] }] },
  });
  const stalled = await RawSse.openGet(cap.base, "/murmur/session:watch", {
    "Last-Event-ID": "0",
  });
  try {
    const first = await stalled.read((_e, all) => all.length >= 1);
    assertEquals(frame(first[0])?.frame, "connection-ack");
    // The whole flood is written while this reader does not read.
    const sent = await cap.rpc("SendMessage", userMessage("flood"));
    assertEquals(
      (sent.result as { task: { status: { state: string } } }).task.status.state,
      "TASK_STATE_COMPLETED",
    );
    const evs = [
      ...first,
      ...await stalled.read((e) => stateOf(e) === "TASK_STATE_COMPLETED" && e.id !== null),
    ];
    assertBare(evs);
    let lastId = 0, received = 0, missed = 0, laggedFrames = 0, pending = 0;
    for (const e of evs) {
      const f = frame(e);
      if (f?.frame === "lagged") {
        assertEquals(e.id, null);
        laggedFrames++;
        pending = f.missed as number;
        missed += pending;
        continue;
      }
      if (e.id === null) continue;
      assertEquals(e.id - lastId - 1, pending, `ids ${lastId} → ${e.id}`);
      pending = 0;
      lastId = e.id;
      received++;
    }
    assert(laggedFrames >= 1, "the stalled REST reader was told it lagged");
    assertEquals(received + missed, lastId);
  } finally {
    stalled.close();
    await cap.close();
  }
});
