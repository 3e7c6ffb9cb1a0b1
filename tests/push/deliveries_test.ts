/**
 * The deliveries' bounds in one process (src/push/deliveries.ts): a real event log, real lanes and
 * a receiver on loopback that accepts connections and never answers. Each lane keeps its first
 * event in flight and at most its queue's depth waiting; all lanes together keep at most the
 * session's depth, dropping each lane's oldest beyond it; the end of the session counts every
 * event not delivered and gives the session's waiting count back.
 */
import assert from "node:assert/strict";
import { frameInput } from "../../src/events/emit.ts";
import { EventLog } from "../../src/events/log.ts";
import { Deliveries } from "../../src/push/deliveries.ts";
import { newSecret, Signer } from "../../src/push/signing.ts";
import type { TraceEventType } from "../../src/trace_events.ts";
import { until } from "../helpers/until.ts";

Deno.test("deliveries: per-lane and per-session queue bounds, drops oldest first, all counted at the end", async () => {
  const hang = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const c of hang) held.push(c);
    } catch { /* closed */ }
  })();
  const url = new URL(`http://127.0.0.1:${(hang.addr as Deno.NetAddr).port}/hook`);
  const log = new EventLog();
  const lines: { type: TraceEventType; f: Record<string, unknown> }[] = [];
  const d = new Deliveries({
    log,
    signer: await Signer.of(newSecret()),
    allowPrivate: true,
    trace: (type, f) => lines.push({ type, f: f as Record<string, unknown> }),
    queueDepth: 10,
    sessionDepth: 25,
    drainMs: 50,
  });
  try {
    const task = { id: "tsk_a", contextId: "ctx_a" };
    for (let i = 0; i < 3; i++) {
      d.attach(`k${i}`, {
        id: `c${i}`,
        taskId: task.id,
        url,
        caller: "",
        activated: true,
      });
    }
    // Another task's events reach no lane.
    for (let i = 0; i < 5; i++) {
      log.append(frameInput({ id: "tsk_b", contextId: "ctx_b" }, "TASK_STATE_WORKING", {
        frame: "text",
        text: "b",
        final: false,
      }));
    }
    for (let i = 0; i < 40; i++) {
      log.append(
        frameInput(task, "TASK_STATE_WORKING", { frame: "text", text: "a", final: false }),
      );
    }
    // The first event of each lane is in flight; the other 39 × 3 met the bounds.
    await until("the events routed", () => d.waiting === 25 ? true : undefined);
    const t = await d.finish();
    assert.equal(d.waiting, 0, "the session's waiting count given back");
    const ends = lines.filter((l) => l.type === "push_end").map((l) => l.f);
    assert.deepEqual(ends.map((e) => [e.config_id, e.how, e.undelivered]), [
      ["c0", "session_ended", 1 + 9],
      ["c1", "session_ended", 1 + 8],
      ["c2", "session_ended", 1 + 8],
    ]);
    const ids = (e: Record<string, unknown>) => e.undelivered_event_ids as number[];
    // tsk_b took ids 1–5; tsk_a 6–45. In flight: 6; waiting: the newest, oldest dropped first.
    assert.deepEqual(ids(ends[0]), [6, ...range(37, 45)]);
    assert.deepEqual(ids(ends[1]), [6, ...range(38, 45)]);
    assert.deepEqual(ids(ends[2]), [6, ...range(38, 45)]);
    assert.equal(t.undelivered, 28);
    assert.equal(t.dropped, 39 * 3 - 25);
    const dropped = lines.filter((l) => l.type === "push_dropped").map((l) => l.f);
    assert.equal(dropped.reduce((n, l) => n + (l.dropped as number), 0), 39 * 3 - 25);
  } finally {
    hang.close();
    for (const c of held) {
      try {
        c.close();
      } catch { /* gone */ }
    }
    await accepting;
  }
});

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}
