/**
 * A hook declared `output: data` (docs/hooks.md "Data artifacts") on a real capsule: a blocking
 * on-inference hook's `artifact` answer becomes a `data` artifact of the task after each turn —
 * an `artifactUpdate` on the stream at once and an artifact GetTask lists, its JSON kept as sent
 * (multi-byte text too) — while a hook without the declaration still answers an `artifact` frame
 * only.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { frameOf } from "../helpers/sse.ts";
import { getTask, hookScript, streamTask, taskIdOf } from "../session/helpers.ts";

type R = Record<string, Record<string, unknown>>;

Deno.test("output: data hook: each turn's answer is a data artifact on the stream and in GetTask; a text hook stays a frame", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "data-hook",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      tools: [{ name: "noop", description: "does nothing", command: "true" }],
      hooks: [
        {
          name: "stats",
          binding: "on-inference",
          output: "data",
          command: ["./hooks/stats.sh"],
        },
        { name: "note", binding: "on-inference", command: ["./hooks/note.sh"] },
      ],
    },
    files: {
      // The turn number read off the event: each answer is the turn's own.
      "hooks/stats.sh": hookScript(
        `turn=$(printf '%s' "$in" | sed -n 's/.*"turn":\\([0-9]*\\).*/\\1/p')\n` +
          `printf '{"artifact":{"turn":%s,"label":"naïve ✓","rows":[1,2]}}' "$turn"`,
      ),
      "hooks/note.sh": hookScript(`echo '{"artifact":{"note":"text"}}'`),
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "c1", name: "noop", input: {} } }] },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  try {
    const events = await streamTask(cap, "go");
    const id = taskIdOf(events);
    const results = events.map((e) => e.data.result as R);
    const updates = results.filter((r) => r.artifactUpdate).map((r) => r.artifactUpdate);
    // deno-lint-ignore no-explicit-any
    const arts = updates.map((u) => u.artifact as any);
    const data = arts.filter((a) => a.name === "stats");
    assert.deepEqual(data.map((a) => a.artifactId), ["data-1", "data-2"]);
    assert.deepEqual(data.map((a) => a.parts), [
      [{ data: { turn: 0, label: "naïve ✓", rows: [1, 2] }, mediaType: "application/json" }],
      [{ data: { turn: 1, label: "naïve ✓", rows: [1, 2] }, mediaType: "application/json" }],
    ]);
    assert.ok(updates.every((u) => u.taskId === id));
    // The first data artifact is on the stream before the second turn's status.
    const first = results.findIndex((r) =>
      r.artifactUpdate?.artifact &&
      (r.artifactUpdate.artifact as { name: string }).name === "stats"
    );
    const turn2 = results.findIndex((r) =>
      JSON.stringify(r.statusUpdate ?? {}).includes("inference turn 2")
    );
    assert.ok(first >= 0 && turn2 > first, `data-1 at ${first}, turn 2 at ${turn2}`);
    // The text hook: an artifact frame, never an artifact of the task.
    assert.ok(!arts.some((a) => a.name === "note"));
    const frames = events.map(frameOf).filter((f) => f !== undefined);
    const noteFrames = frames.filter((f) => f.frame === "artifact" && f.toolName === "note");
    // One per turn, written when the attempt ends.
    assert.equal(noteFrames.length, 2, JSON.stringify(frames));
    assert.ok(!frames.some((f) => f.frame === "artifact" && f.toolName === "stats"));

    const task = await getTask(cap, id);
    // deno-lint-ignore no-explicit-any
    const listed = (task.artifacts as any[]).map((a) => [a.name, a.artifactId]);
    assert.deepEqual(listed, [["response", "response"], ["stats", "data-1"], ["stats", "data-2"]]);
    // deno-lint-ignore no-explicit-any
    assert.deepEqual((task.artifacts as any[])[2].parts, data[1].parts);
  } finally {
    await cap.close();
  }
});
