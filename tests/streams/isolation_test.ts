/**
 * Isolation on the wire (issue 13): a fault while framing one connection's events closes that
 * connection only. A session and its door run in this process so the test can break one
 * connection's framing (the shared wire of its request id throws, as the old block sizing did);
 * every other connection, the task, the trace and the session go on.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { acquireWire, releaseWire } from "../../src/events/wire.ts";
import { inprocCapsule } from "../door/inproc.ts";
import { userMessage } from "../helpers/capsule.ts";
import { collect, STREAM_URI, streamRequest } from "../helpers/sse.ts";
import { until } from "../helpers/until.ts";
import { ofType, traceOf } from "../session/helpers.ts";

const script = {
  tasks: [{
    turns: [
      {
        steps: [
          { thinking: "t".repeat(4096) },
          { text: "é".repeat(2048), repeat: 3 },
          { tool_call: { id: "toolu_1", name: "bash", input: { command: "seq 1 1500" } } },
        ],
      },
      { steps: [{ text: "done" }] },
    ],
  }],
};

Deno.test("isolation: a fault framing one watcher's events closes it alone; the task, the trace, the other streams and the session go on", async () => {
  const warnings: string[] = [];
  const cap = await inprocCapsule(
    {
      name: "isolation",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script,
    {},
    (l) => warnings.push(l),
  );
  const log = cap.session.log;
  const wire = acquireWire(log, "bad", true);
  const into = wire.into.bind(wire);
  let framed = 0;
  wire.into = (e, out) => {
    if (++framed === 3) throw new RangeError("offset is out of bounds (injected)");
    return into(e, out);
  };
  try {
    const bad = await streamRequest(cap.base, "murmur.WatchSession", {}, {}, "bad");
    const good = await streamRequest(cap.base, "murmur.WatchSession", {}, {}, "good");
    const badRead = bad.text().then(() => "ended", (e) => `broken: ${e}`);

    const sent = await streamRequest(
      cap.base,
      "SendStreamingMessage",
      userMessage("one"),
      { "A2A-Extensions": STREAM_URI },
      "s1",
    );
    const task1 = await collect(sent, () => false, 30_000);
    const last = task1.at(-1)!.data.result as { statusUpdate: { status: { state: string } } };
    assertEquals(last.statusUpdate.status.state, "TASK_STATE_COMPLETED");
    assert.match(await badRead, /^broken: /, "the faulted watcher's stream breaks");

    // The session takes the next task as usual.
    const second = await fetch(cap.base + "/", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "SendMessage",
        params: userMessage("two"),
      }),
    }).then((r) => r.json());
    assertEquals(second.result.task.status.state, "TASK_STATE_COMPLETED");

    // The other watcher got every event of both tasks, in order, with no loss.
    const lastId = log.lastId;
    const watched = await collect(good, (e) => e.id === lastId, 30_000);
    const ids = watched.filter((e) => e.id !== null).map((e) => e.id);
    assertEquals(ids, Array.from({ length: lastId }, (_, i) => i + 1));

    const ends = await until("both task_end lines", async () => {
      const t = ofType(await traceOf(cap.session.workdir.root), "task_end");
      return t.length === 2 ? t : undefined;
    });
    assertEquals(ends.map((e) => e.exit_status), ["ok", "ok"]);
    assertEquals(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      /^stream: connection \d+ \(murmur\.WatchSession, request id "bad"\) closed after a fault in its own write: RangeError: offset is out of bounds \(injected\)$/,
    );
    // The broken connection let go of its subscription; the good watcher's went with its reader.
    await until("the subscriptions released", () => log.subscriptionCount === 0 || undefined);
  } finally {
    releaseWire(log, wire);
    await cap.close();
  }
});
