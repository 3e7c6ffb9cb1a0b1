/**
 * The bench's load generator counts what the raw server really sent: a decoder test on
 * chunked SSE bytes cut at every boundary, then the real processes (raw server + load
 * generator) on loopback.
 */
import assert from "node:assert/strict";
import { SseWireDecoder } from "../../scripts/bench/sse_wire.ts";
import { completedEvent, textEvent } from "../../scripts/bench/raw_server.ts";
import { Loadgen } from "../../scripts/bench/loadgen_client.ts";
import { kill, spawnReady } from "../../scripts/bench/procs.ts";

const enc = new TextEncoder();

function chunked(parts: string[]): Uint8Array {
  let s =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
  for (const p of parts) s += `${enc.encode(p).length.toString(16)}\r\n${p}\r\n`;
  return enc.encode(s + "0\r\n\r\n");
}

Deno.test("SseWireDecoder: same events whatever the read boundaries", () => {
  const events = [
    ":ok\n\n",
    textEvent(1, "2026-01-01T00:00:00.000Z") + textEvent(2, "2026-01-01T00:00:00.001Z"),
    'data: {"a":"é…"}\n\n',
    "id: 9\ndata: x\ndata: y\r\n\r\n",
    completedEvent(10, "2026-01-01T00:00:00.002Z"),
  ];
  const wire = chunked(events);
  for (let cut = 1; cut < wire.length; cut += 7) {
    const seen: [string, string | null][] = [];
    let ended = 0;
    let status = 0;
    const d = new SseWireDecoder({
      head: (h) => (status = h.status),
      event: (data, id) => seen.push([data, id]),
      end: () => ended++,
    });
    for (let i = 0; i < wire.length; i += cut) {
      d.feed(wire.subarray(i, Math.min(wire.length, i + cut)));
    }
    assert.equal(status, 200);
    assert.equal(ended, 1, `cut ${cut}`);
    assert.equal(seen.length, 5, `cut ${cut}`);
    assert.deepEqual(seen.map(([, id]) => id), ["1", "2", null, "9", "10"]);
    assert.equal(seen[2][0], '{"a":"é…"}');
    assert.equal(seen[3][0], "x\ny");
    assert.match(seen[4][0], /TASK_STATE_COMPLETED/);
  }
});

/** The raw limit server (scripts/bench/raw_server.ts) on an OS-assigned port, `events` a flood. */
function startRaw(events: number) {
  return spawnReady({
    name: "raw",
    cmd: [
      Deno.execPath(),
      "run",
      "-A",
      new URL("../../scripts/bench/raw_server.ts", import.meta.url).pathname,
      "0",
      String(events),
    ],
    readyTimeoutMs: 30_000,
  });
}

Deno.test("load generator counts every event the raw server writes", async () => {
  const raw = await startRaw(2000);
  let lg: Loadgen | null = null;
  try {
    lg = await Loadgen.start();
    const port = Number(String(raw.ready.url).split(":")[1]);
    const host = "127.0.0.1";
    const request = { path: "/", headers: { "Content-Type": "application/json" }, body: "{}" };
    const start = (n: number, rate: number) => ({
      url: `http://${host}:${port}/start`,
      body: JSON.stringify({ n, rate }),
    });

    const flood = await lg.run({
      host,
      port,
      k: 3,
      request,
      preamble: 0,
      endMarker: "TASK_STATE_COMPLETED",
      trigger: start(1500, 0),
      timeoutMs: 20_000,
    });
    assert.equal(flood.ok, true, flood.error);
    // 1500 text frames and the completed status, on each of 3 connections.
    assert.equal(flood.events, 3 * 1501);
    assert.equal(flood.minPerClient, 1501);
    assert.equal(flood.maxPerClient, 1501);
    assert.equal(flood.maxId, 1501);
    // A window and a rate were measured (how large is for `deno task bench` to say).
    assert.ok(flood.windowMs >= 0 && !Number.isNaN(flood.windowMs));
    assert.equal(flood.lateArm, false);

    const paced = await lg.run({
      host,
      port,
      k: 2,
      request,
      preamble: 0,
      endMarker: "TASK_STATE_COMPLETED",
      latency: true,
      trigger: start(20, 200),
      timeoutMs: 20_000,
    });
    assert.equal(paced.ok, true, paced.error);
    assert.equal(paced.events, 2 * 21);
    assert.equal(paced.latency?.n, 2 * 21);
    assert.ok(
      Number.isFinite(paced.latency!.p50) && Number.isFinite(paced.latency!.p99),
      JSON.stringify(paced.latency),
    );
    // How long a paced flood takes is measured by `deno task bench`, not asserted here.

    const replay = await lg.run({
      host,
      port,
      k: 1,
      request: { ...request, headers: { ...request.headers, "Last-Event-ID": "10" } },
      preamble: 0,
      stopAfter: 512,
      timeoutMs: 20_000,
    });
    assert.equal(replay.ok, true, replay.error);
    assert.equal(replay.events, 512);
    assert.equal(replay.maxId, 522);

    const refused = await lg.run({
      host,
      port,
      k: 1,
      request: { ...request, path: "/nope" },
      preamble: 0,
      timeoutMs: 5_000,
    });
    assert.equal(refused.ok, false);
    assert.match(refused.error ?? "", /HTTP 404/);
  } finally {
    await lg?.stop();
    kill(raw.pid);
    await raw.child.status;
  }
});

Deno.test("load generator: 1,000 connections to one server, server CPU read from armed to done", async () => {
  const raw = await startRaw(20);
  let lg: Loadgen | null = null;
  try {
    lg = await Loadgen.start();
    const port = Number(String(raw.ready.url).split(":")[1]);
    const host = "127.0.0.1";
    const job = {
      host,
      port,
      k: 1000,
      request: { path: "/", headers: { "Content-Type": "application/json" }, body: "{}" },
      preamble: 0,
      endMarker: "TASK_STATE_COMPLETED",
      trigger: { url: `http://${host}:${port}/start`, body: JSON.stringify({ n: 20, rate: 0 }) },
      timeoutMs: 60_000,
    };
    const r = await lg.run({ ...job, cpuPid: raw.pid });
    assert.equal(r.ok, true, r.error);
    // Every one of the 1,000 connections got all 20 frames and the end: the one process holds
    // them all (no descriptor limit, no refused connect).
    assert.equal(r.clients, 1000);
    assert.equal(r.minPerClient, 21);
    assert.equal(r.events, 1000 * 21);
    // The server's on-CPU time and the load generator's own, both read over the run.
    assert.ok(r.serverCpuUs !== undefined && r.serverCpuUs > 0, String(r.serverCpuUs));
    assert.ok(r.lgCpuUs !== undefined && r.lgCpuUs > 0, String(r.lgCpuUs));
    assert.ok(Number.isFinite(r.lgBusy), String(r.lgBusy));

    // Without a pid, no server figure is made up.
    const plain = await lg.run({ ...job, k: 2 });
    assert.equal(plain.ok, true, plain.error);
    assert.equal(plain.serverCpuUs, undefined);
  } finally {
    await lg?.stop();
    kill(raw.pid);
    await raw.child.status;
  }
});
