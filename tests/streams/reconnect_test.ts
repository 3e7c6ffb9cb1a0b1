/**
 * docs/protocol.md "Replay": a watcher that reconnects with the id of the last event it received
 * gets exactly the events written after it. No loss, no repeats, across many reconnects.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { readSse, streamRequest } from "../helpers/sse.ts";

Deno.test("no loss across reconnects: a watcher that hangs up every few dozen events receives every event of a 1,000-event session exactly once, in order", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "reconnect",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    },
    script: { tasks: [{ turns: [{ steps: [{ text: "e", repeat: 996, delay_ms: 1 }] }] }] },
  });
  try {
    await cap.rpc("SendMessage", {
      ...userMessage("go"),
      configuration: { returnImmediately: true },
    });
    const total = 996 + 4;
    const got: number[] = [];
    let last = 0;
    let reconnects = 0;
    const deadline = Date.now() + 60_000;
    while (last < total && Date.now() < deadline) {
      const res = await streamRequest(cap.base, "murmur.WatchSession", {}, {
        "Last-Event-ID": String(last),
      });
      const quota = 20 + Math.floor(Math.random() * 40);
      let n = 0;
      for await (const e of readSse(res.body!)) {
        if (e.id === null) {
          // connection-ack; a gap would mean loss
          const md = JSON.stringify(e.data);
          assert(!md.includes('"frame":"gap"'), "no gap: the ring still held everything");
          continue;
        }
        got.push(e.id);
        last = e.id;
        if (++n >= quota || last === total) break;
      }
      reconnects++;
    }
    assertEquals(got, Array.from({ length: total }, (_, i) => i + 1));
    assert(reconnects >= 10, `only ${reconnects} reconnects`);
  } finally {
    await cap.close();
  }
});
