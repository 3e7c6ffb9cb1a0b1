/**
 * Queue lanes (docs/door.md): user > peer > bg, arrival order within a lane, a running task
 * never interrupted; the lane is on task_start.
 */
import assert from "node:assert/strict";
import { userMessage } from "../helpers/capsule.ts";
import { endCapsule, ofType, startCapsule, traceOf, until } from "./helpers.ts";

Deno.test("lanes: a peer task queued after bg tasks runs before them; bg tasks run in arrival order", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "lanes",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
      exports: { peer_tasks: { accept: true } },
    },
    script: {
      tasks: [
        { match: "first", turns: [{ steps: [{ delay_ms: 1200 }, { text: "slow" }] }] },
        { turns: [{ steps: [{ text: "quick" }] }] },
      ],
    },
  });
  try {
    const send = async (text: string, origin?: string) => {
      const r = await cap.rpc(
        "SendMessage",
        { ...userMessage(text), configuration: { returnImmediately: true } },
        { headers: origin ? { "x-murmur-task-origin": origin } : {} },
      );
      return (r.result as { task: { id: string } }).task.id;
    };
    const first = await send("first");
    await until(async () => {
      const t = await cap.rpc("GetTask", { id: first });
      const st = ((t.result as Record<string, unknown>).status as { state: string }).state;
      return st === "TASK_STATE_WORKING" ? true : undefined;
    });
    const b1 = await send("b1"); // no header: origin event, bg lane
    const c1 = await send("c1", "completion"); // bg lane
    const p1 = await send("p1", "peer"); // peer lane, arrives last
    const u1 = await send("u1", "user"); // a claimed user origin is read as event: bg
    await until(
      async () => {
        const tr = await traceOf(cap.ready.workdir);
        return ofType(tr, "task_end").length === 5 ? true : undefined;
      },
      15_000,
      "five tasks ended",
    );
    await endCapsule(cap);
    const starts = ofType(await traceOf(cap.ready.workdir), "task_start");
    assert.deepEqual(
      starts.map((s) => [s.task_id, s.origin, s.lane]),
      [
        [first, "event", "bg"],
        [p1, "peer", "peer"],
        [b1, "event", "bg"],
        [c1, "completion", "bg"],
        [u1, "event", "bg"],
      ],
    );
  } finally {
    await cap.close();
  }
});
