/**
 * Issue 13's reproduction, on the wire: events of ordinary agent sizes (a tool printing `seq 1
 * 1500`, about 7 KiB; thinking and text chunks of 4 KiB) with watchers attached. A wire's block
 * grew from 1 KiB by doubling and a frame larger than the next block (but under the 16 KiB
 * own-buffer threshold) was written past its end: `RangeError: offset is out of bounds` killed
 * `mur run`. The frame's size includes the request id, so the streams here echo ids of many
 * lengths, strings and integers.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, type SseEvent, STREAM_URI, streamRequest } from "../helpers/sse.ts";
import { spawnMur } from "../cli/helpers.ts";

type R = Record<string, Record<string, unknown>>;

const FOUR_KIB = "a".repeat(4096);
// Multi-byte text whose UTF-8 is 4 KiB and more: 2-, 3- and 4-byte characters.
const FOUR_KIB_UTF8 = "é€😀".repeat(456);

const script = {
  tasks: [{
    turns: [
      {
        steps: [
          { thinking: FOUR_KIB, repeat: 3 },
          { text: FOUR_KIB_UTF8, repeat: 2 },
          { tool_call: { id: "toolu_seq", name: "bash", input: { command: "seq 1 1500" } } },
        ],
      },
      { steps: [{ thinking: FOUR_KIB_UTF8 }, { text: FOUR_KIB, repeat: 3 }] },
    ],
  }],
};

function stateOf(e: SseEvent): string | undefined {
  const su = (e.data.result as R)?.statusUpdate as { status?: { state?: string } } | undefined;
  return su?.status?.state;
}

function taskOf(e: SseEvent): string | undefined {
  const r = e.data.result as R;
  return (r?.statusUpdate?.taskId ?? r?.artifactUpdate?.taskId) as string | undefined;
}

// Request ids whose lengths cover a wide range of envelope sizes: strings of 0–200 characters
// and integers of 1–16 digits.
const REQUEST_IDS: (string | number)[] = [
  "s1",
  "abcde",
  "",
  ...[1, 3, 7, 13, 29, 64, 127, 200].map((n) => "r".repeat(n)),
  0,
  7,
  123456,
  9007199254740991,
];

Deno.test("large events: 7 KiB tool output and 4 KiB chunks stream to a watcher, mur watch and activated senders with ids of every length", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "large",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 32 },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script,
  });
  const watcher = await spawnMur(["watch", "--url", cap.ready.url, "--json"], {
    MURMUR_HOME: cap.home,
    NO_COLOR: "1",
  });
  try {
    // A raw WatchSession with the id of issue 21, reading from the first event.
    const watchRes = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "Last-Event-ID": "0",
    }, "abcde");
    assert.match((await watcher.err.next(30_000))!, /^\[murmur\] watching /);

    // One task per request id, each followed by its own activated SendStreamingMessage, one
    // after another (each stream ends with its task).
    const perTask = new Map<string, SseEvent[]>();
    for (const id of REQUEST_IDS) {
      const res = await streamRequest(
        cap.base,
        "SendStreamingMessage",
        userMessage(`go ${JSON.stringify(id)}`),
        { "A2A-Extensions": STREAM_URI },
        id,
      );
      assertEquals(res.status, 200);
      const events = await collect(res, () => false, 60_000);
      const first = events[0].data.result as R;
      const taskId = first.task.id as string;
      for (const e of events) assertEquals(e.data.id, id, "the request id, verbatim");
      assertEquals(stateOf(events.at(-1)!), "TASK_STATE_COMPLETED", `task for id ${id}`);
      const art = events.find((e) => frameOf(e)?.frame === "artifact");
      const content = frameOf(art!)!.content as string;
      const seq = Array.from({ length: 1500 }, (_, i) => i + 1).join("\n") + "\n";
      assert.ok(content.includes(`Stdout:\n${seq}`), "the whole 7 KiB output");
      perTask.set(taskId, events.slice(1));
    }

    // The watcher got every event from id 1, no hole, no lagged, and the same events the
    // senders got for their tasks.
    const total = [...perTask.values()].reduce((n, es) => n + es.length, 0);
    const watched = await collect(
      watchRes,
      (_e, all) => all.filter((x) => x.id !== null).length >= total,
      60_000,
    );
    const numbered = watched.filter((e) => e.id !== null);
    assertEquals(numbered.map((e) => e.id), numbered.map((_, i) => i + 1));
    assert.ok(!watched.some((e) => frameOf(e)?.frame === "lagged"));
    for (const [taskId, events] of perTask) {
      const mine = numbered.filter((e) => taskOf(e) === taskId);
      assertEquals(mine.map((e) => e.id), events.map((e) => e.id));
      assertEquals(
        mine.map((e) => e.data.result),
        events.map((e) => e.data.result),
        "same events, whatever the envelope",
      );
    }

    // The real `mur watch` in a pipe printed every one of them too.
    const lines: { id: number | null; event: unknown }[] = [];
    while (lines.filter((l) => l.id !== null).length < total) {
      const line = await watcher.out.next(60_000);
      assert.ok(line !== null, "mur watch ended early");
      lines.push(JSON.parse(line));
    }
    const wNumbered = lines.filter((l) => l.id !== null);
    assertEquals(wNumbered.map((l) => l.id), numbered.map((e) => e.id));
    assertEquals(wNumbered.map((l) => l.event), numbered.map((e) => e.data.result));

    // The capsule is alive and answers.
    const list = await cap.rpc("ListTasks", {});
    assertEquals((list.result as { tasks: unknown[] }).tasks.length, REQUEST_IDS.length);
    // A sleeping capsule ends on SIGTERM, cleanly.
    cap.kill("SIGTERM");
    const end = await cap.finished();
    assert.ok(!/Uncaught|RangeError/.test(end.stderr), end.stderr);
    assertEquals(end.code, 0, "every task completed: status ok (--json prints no status line)");
  } finally {
    watcher.kill();
    await watcher.child.status;
    await cap.close();
  }
});
