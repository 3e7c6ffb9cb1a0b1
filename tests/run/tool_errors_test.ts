/**
 * Tool calls that cannot run are results the model sees, not failures of the session: a command
 * tool whose program is missing at run time, and a tool the manifest never declared. Each shows
 * as an `artifact` frame with `isError: true`, the task goes on to its next turn, and the session
 * ends `status: ok`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { collect, frameOf, type SseEvent, streamRequest } from "../helpers/sse.ts";
import { manifest, ofType, readTrace, spawnRun } from "./helpers.ts";

type Frame = Record<string, unknown>;

/** Runs a capsule in human mode while watching its session; returns the artifacts and the end. */
async function runWatched(m: Record<string, unknown>, script: Record<string, unknown>, files = {}) {
  const run = await spawnRun({ manifest: m, script, files, args: ["--task", "go", "-v"] });
  try {
    const url = (await run.line())!.slice("murmur: url ".length);
    await run.line(); // session:
    const workdir = (await run.line())!.slice("workdir: ".length);
    // The script's first step waits, so this watch attaches long before the capsule exits; it
    // replays from 0 anyway, and ends with the stream when the process exits.
    const res = await streamRequest(
      `http://${url.replace("localhost", "127.0.0.1")}`,
      "murmur.WatchSession",
      {},
      { "Last-Event-ID": "0" },
    );
    const events = await collect(res, (e: SseEvent) => {
      const su = (e.data.result as { statusUpdate?: { status: { state: string } } })?.statusUpdate;
      return su?.status.state === "TASK_STATE_COMPLETED" ||
        su?.status.state === "TASK_STATE_FAILED";
    }, 20_000).catch((e) => {
      throw new Error(`watch: ${e}`);
    });
    const end = await run.end();
    const artifacts = events.map(frameOf).filter((f): f is Frame => f?.frame === "artifact");
    return {
      end,
      artifacts,
      trace: await readTrace(`${workdir}/trace.jsonl`),
      result: await Deno.readTextFile(`${workdir}/out/result.txt`),
    };
  } finally {
    await run.close();
  }
}

Deno.test("a command tool whose program is missing at run time: an error result, the session goes on to ok", async () => {
  const r = await runWatched(
    manifest({
      // advisory: the model removes the tool's program from the capsule's folder, read-only to a
      // contained command (docs/containment.md).
      containment: "advisory",
      capabilities: { shell: { allow: ["bash"] } },
      tools: [
        {
          name: "ghost",
          description: "a program that is not installed",
          input_schema: { type: "object" },
          command: ["mur-test-no-such-program-7f3a"],
        },
        {
          name: "vanishing",
          description: "a program removed after the manifest was loaded",
          input_schema: { type: "object" },
          command: ["./tools/vanish.sh"],
        },
      ],
    }),
    {
      tasks: [{
        turns: [
          {
            steps: [
              { delay_ms: 1000 },
              // The workdir is <capsule>/workdir/<session>: remove the tool's program now.
              {
                tool_call: {
                  id: "c0",
                  name: "bash",
                  input: { command: "rm ../../tools/vanish.sh" },
                },
              },
            ],
          },
          {
            steps: [
              { tool_call: { id: "c1", name: "ghost", input: { city: "Paris" } } },
              { tool_call: { id: "c2", name: "vanishing", input: {} } },
            ],
          },
          { steps: [{ text: "carried on" }] },
        ],
      }],
    },
    { "tools/vanish.sh": "#!/bin/sh\necho should-not-run\n" },
  );
  assertEquals(r.end.code, 0, r.end.stderr);
  assertEquals(r.end.stdout.trimEnd().split("\n").at(-1), "status: ok");
  const [rm, ghost, vanishing] = r.artifacts;
  assertEquals(r.artifacts.length, 3);
  assertEquals([rm.toolName, rm.isError, rm.exitCode], ["bash", false, 0]);
  assertEquals([ghost.toolName, ghost.toolCallId, ghost.isError], ["ghost", "c1", true]);
  assert.match(String(ghost.content), /mur-test-no-such-program-7f3a/);
  assertEquals(ghost.exitCode, null);
  assertEquals([vanishing.toolName, vanishing.toolCallId, vanishing.isError], [
    "vanishing",
    "c2",
    true,
  ]);
  assert.match(String(vanishing.content), /vanish\.sh/);
  assert.ok(!String(vanishing.content).includes("should-not-run"));
  assertEquals(r.result, "carried on");
  const calls = ofType(r.trace, "tool_call");
  assertEquals(calls.map((c) => c.status), ["ok", "error", "error"]);
  assertEquals(
    ofType(r.trace, "inference").length,
    3,
    "the model was asked again after the errors",
  );
});

Deno.test("an undeclared tool called by the model: artifact names the allowlist, isError, the session goes on", async () => {
  const r = await runWatched(
    manifest({ capabilities: { shell: { allow: ["bash"] } } }),
    {
      tasks: [{
        turns: [
          {
            steps: [{ delay_ms: 1000 }, {
              tool_call: { id: "u1", name: "x", input: { anything: 1 } },
            }],
          },
          { steps: [{ text: "fine without it" }] },
        ],
      }],
    },
  );
  assertEquals(r.end.code, 0, r.end.stderr);
  assertEquals(r.end.stdout.trimEnd().split("\n").at(-1), "status: ok");
  assertEquals(r.artifacts.length, 1);
  const a = r.artifacts[0];
  assertEquals([a.toolName, a.toolCallId, a.isError], ["x", "u1", true]);
  assert.match(String(a.content), /tool 'x' is not declared in manifest allowlist/);
  assertEquals(r.result, "fine without it");
  const calls = ofType(r.trace, "tool_call");
  assertEquals(calls.map((c) => [c.tool_name, c.status]), [["x", "error"]]);
  assertEquals(ofType(r.trace, "shell").length, 0);
});
