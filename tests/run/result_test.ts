/**
 * `out/result.txt` on every outcome (docs/running.md "Files") with the status line and exit code of README
 * "Running a capsule: `mur run`": ok → the final model text; a driver error → `error: task failed
 * (driver_error): …`; `inference.max_turns` exhausted → `error: inference loop exceeded N turns`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { manifest, ofType, readTrace, spawnRun } from "./helpers.ts";

async function launch(m: Record<string, unknown>, script: Record<string, unknown>) {
  const run = await spawnRun({ manifest: m, script, args: ["--task", "go", "-v"] });
  try {
    const end = await run.end();
    const lines = end.stdout.trimEnd().split("\n");
    const wd = lines.find((l) => l.startsWith("workdir: "))!.slice("workdir: ".length);
    return {
      ...end,
      lines,
      result: await Deno.readTextFile(`${wd}/out/result.txt`),
      trace: await readTrace(`${wd}/trace.jsonl`),
    };
  } finally {
    await run.close();
  }
}

Deno.test("result.txt: ok → the final turn's text; status: ok, exit 0", async () => {
  const r = await launch(manifest({ capabilities: { shell: { allow: ["bash"] } } }), {
    tasks: [{
      turns: [
        {
          steps: [{ text: "Checking. " }, {
            tool_call: { id: "t1", name: "bash", input: { command: "echo hi" } },
          }],
        },
        { steps: [{ text: "The answer " }, { text: "is 42." }] },
      ],
    }],
  });
  assertEquals(r.code, 0, r.stderr);
  assertEquals(r.lines.at(-1), "status: ok");
  assertEquals(r.result, "The answer is 42.");
  assertEquals(ofType(r.trace, "task_end")[0].exit_status, "ok");
  assertEquals(ofType(r.trace, "session_end")[0].exit_status, "ok");
});

Deno.test("result.txt: a scripted error → error: task failed (driver_error): …; status: failed, exit 1", async () => {
  const r = await launch(manifest(), {
    tasks: [{
      turns: [{ steps: [{ text: "partial " }, { error: "provider overloaded" }] }],
    }],
  });
  assertEquals(r.code, 1);
  assertEquals(r.lines.at(-1), "status: failed");
  assertEquals(r.result, "error: task failed (driver_error): provider overloaded");
  assert.match(r.stderr, /error\[E-RUN-040\]/);
  const failed = ofType(r.trace, "task_failed");
  assertEquals(failed.length, 1);
  assertEquals([failed[0].cause, failed[0].reason], ["driver_error", "provider overloaded"]);
  const inference = ofType(r.trace, "inference");
  assertEquals(inference.length, 1);
  assertEquals([inference[0].decision, inference[0].stop_reason], ["error", "error"]);
  assertEquals(ofType(r.trace, "task_end")[0].exit_status, "failed");
  assertEquals(ofType(r.trace, "session_end")[0].exit_status, "failed");
});

Deno.test("result.txt: max_turns 2 with a model that always calls a tool → max_turns_reached, exit 1", async () => {
  const call = (n: number) => ({
    steps: [{ tool_call: { id: `call_${n}`, name: "bash", input: { command: `echo ${n}` } } }],
  });
  const r = await launch(
    manifest({
      inference: { max_turns: 2 },
      capabilities: { shell: { allow: ["bash"] } },
    }),
    { tasks: [{ turns: [call(1), call(2), call(3), call(4)] }] },
  );
  assertEquals(r.code, 1);
  assertEquals(r.lines.at(-1), "status: max_turns_reached");
  assertEquals(r.result, "error: inference loop exceeded 2 turns");
  assert.match(r.stderr, /error\[E-RUN-040\]: .*max_turns_reached/);
  // Exactly two turns ran, each with its tool call; the third was never asked for.
  assertEquals(ofType(r.trace, "inference").map((l) => l.turn), [0, 1]);
  assertEquals(ofType(r.trace, "tool_call").map((l) => l.tool_call_id), ["call_1", "call_2"]);
  const end = ofType(r.trace, "task_end")[0];
  assertEquals([end.exit_status, end.turns, end.tool_calls], ["max_turns_reached", 2, 2]);
  assertEquals(ofType(r.trace, "session_end")[0].exit_status, "max_turns_reached");
});
