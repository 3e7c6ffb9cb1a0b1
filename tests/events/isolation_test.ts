/**
 * A connection's faults are its own (view.ts `#guard`): an error while framing or writing for one
 * connection closes that connection with one stderr line, and the appender (the task's loop), the
 * other connections and the log go on. The fault is injected the way a framing bug would strike:
 * the shared wire of one request id throws.
 */
import { setImmediate } from "node:timers";
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { EventLog } from "../../src/events/log.ts";
import { ConnectionFault, openView } from "../../src/events/view.ts";
import { acquireWire, releaseWire } from "../../src/events/wire.ts";
import { appendMany, input } from "./helpers.ts";

// The subscription's once-per-macrotask call is a setImmediate; one queued after it runs after it.
const macrotask = () => new Promise<void>((r) => setImmediate(r));
const dec = new TextDecoder();

/** Reads a view's stream to its end; resolves with its text, or the error that broke it. */
async function readAll(
  body: ReadableStream<Uint8Array>,
): Promise<{ text: string; error?: unknown }> {
  const reader = body.getReader();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += dec.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

function numberedIds(text: string): number[] {
  return [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
}

function watch(log: EventLog, requestId: string | number, warn: (l: string) => void) {
  return openView({
    kind: "watch",
    log,
    requestId,
    activated: true,
    heartbeatMs: 3_600_000,
    lastEventId: 0,
    warn,
  });
}

/** A wire whose framing throws from the `at`-th event it frames on. */
function faultyWire(log: EventLog, requestId: string | number, at: number) {
  const w = acquireWire(log, requestId, true);
  const into = w.into.bind(w);
  let n = 0;
  w.into = (e, out) => {
    if (++n >= at) throw new RangeError("offset is out of bounds (injected)");
    return into(e, out);
  };
  return w;
}

for (const burst of ["urgent", "batched"] as const) {
  Deno.test(`isolation: a fault framing one connection's ${burst} write closes it alone; the appender and the others go on`, async () => {
    const log = new EventLog();
    const warnings: string[] = [];
    const warn = (l: string) => warnings.push(l);
    const held = faultyWire(log, "bad", 5);
    const bad = readAll(watch(log, "bad", warn));
    const good = [readAll(watch(log, "good", warn)), readAll(watch(log, 7, warn))];
    await macrotask();
    assertEquals(log.subscriptionCount, 3);
    if (burst === "urgent") {
      // One synchronous burst of 300: the views are written from inside `append`, on the
      // appender's own stack, each time a queue nears its capacity.
      appendMany(log, 300);
    } else {
      for (let i = 0; i < 30; i++) {
        appendMany(log, 10);
        await macrotask();
      }
    }
    await macrotask();
    assertEquals(log.subscriptionCount, 2, "the faulted connection let go of its subscription");
    // The log takes events as before and the other connections get every one of them.
    appendMany(log, 20);
    log.close();
    const b = await bad;
    assert.ok(b.error instanceof ConnectionFault, `the faulted stream breaks: ${b.error}`);
    assert.ok((b.error as Error).cause instanceof RangeError);
    // Erroring the stream drops what was queued in it: the client sees the break at once.
    const before = numberedIds(b.text);
    assertEquals(before, [1, 2, 3, 4].slice(0, before.length));
    for (const g of await Promise.all(good)) {
      assertEquals(g.error, undefined);
      assertEquals(numberedIds(g.text), Array.from({ length: 320 }, (_, i) => i + 1));
    }
    assertEquals(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      /^stream: connection \d+ \(murmur\.WatchSession, request id "bad"\) closed after a fault in its own write: RangeError: offset is out of bounds \(injected\)$/,
    );
    releaseWire(log, held);
  });
}

Deno.test("isolation: a fault in a task stream's write closes that connection only", async () => {
  const log = new EventLog();
  const warnings: string[] = [];
  appendMany(log, 3, { taskId: "tsk_x" });
  const held = faultyWire(log, "bad", 1);
  const opening = {
    task: { id: "tsk_x", contextId: "ctx_a", status: { state: "TASK_STATE_WORKING" } },
  };
  const bad = readAll(openView({
    kind: "subscribe",
    log,
    requestId: "bad",
    activated: true,
    heartbeatMs: 3_600_000,
    taskId: "tsk_x",
    // deno-lint-ignore no-explicit-any
    opening: opening as any,
    warn: (l) => warnings.push(l),
  }));
  const good = readAll(watch(log, "good", (l) => warnings.push(l)));
  log.append(input({ taskId: "tsk_x", n: 4 }));
  await macrotask();
  log.close();
  assert.ok((await bad).error instanceof ConnectionFault);
  assertEquals(numberedIds((await good).text), [1, 2, 3, 4]);
  assertEquals(warnings.length, 1);
  assert.match(warnings[0], /\(SubscribeToTask, request id "bad", task tsk_x\)/);
  releaseWire(log, held);
});

Deno.test("isolation: a subscription listener that throws anyway is cut off and reported; the others are still called", async () => {
  const log = new EventLog();
  const reported: unknown[] = [];
  const onError = (e: ErrorEvent) => {
    e.preventDefault();
    reported.push(e.error);
  };
  globalThis.addEventListener("error", onError);
  try {
    const bad = log.subscribe();
    bad.listen({
      ready() {
        throw new Error("listener bug");
      },
    });
    const good = log.subscribe();
    let taken = 0;
    good.listen({ ready: () => taken += good.take().entries.length });
    appendMany(log, 200); // urgent calls inside append: append must not throw
    await macrotask();
    appendMany(log, 5);
    await macrotask();
    assertEquals(taken, 205);
    assert.ok(bad.ended, "the throwing listener's subscription is closed");
    assertEquals(log.subscriptionCount, 1);
    assertEquals(reported.map((e) => (e as Error).message), ["listener bug"]);
    good.close();
  } finally {
    globalThis.removeEventListener("error", onError);
  }
});
