/**
 * Reference §7.1 pre-dispatch order: required fields (`tool_input_refused`), then read_only
 * (`protected_path_denied`), then the policy hook (`call_denied`). A call refused by the first
 * two never reaches the hook.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, STREAM_URI, streamRequest } from "../helpers/sse.ts";

Deno.test("pre-dispatch order: missing fields and read_only refuse before the policy hook runs", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "order",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] }, filesystem: { read_only: ["docs"] } },
      tools: [{
        name: "weather",
        description: "weather",
        input_schema: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
        command: ["./tools/weather.sh"],
      }],
      hooks: [{
        name: "gate",
        binding: "on-tool-call",
        commit_policy: "deny",
        command: ["./hooks/gate.sh"],
      }, {
        name: "shellgate",
        binding: "on-shell",
        commit_policy: "deny",
        command: ["./hooks/gate.sh"],
      }],
    },
    files: {
      "tools/weather.sh": "#!/bin/sh\ncat >/dev/null\necho sunny\n",
      // Records every call it sees, and denies it.
      "hooks/gate.sh":
        '#!/bin/sh\ncat >> "$MURMUR_WORKDIR/gate-calls.jsonl"\necho >> "$MURMUR_WORKDIR/gate-calls.jsonl"\necho \'{"deny":"not today"}\'\n',
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [
              { tool_call: { id: "t1", name: "weather", input: {} } },
              { tool_call: { id: "t2", name: "bash", input: { command: "echo x > docs/a.txt" } } },
              { tool_call: { id: "t3", name: "weather", input: { city: "Paris" } } },
            ],
          },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  try {
    const evs = await collect(
      await streamRequest(cap.base, "SendStreamingMessage", userMessage("go"), {
        "A2A-Extensions": STREAM_URI,
      }),
    );
    const arts = evs.map(frameOf).filter((f) => f?.frame === "artifact");
    // t1 (missing field) has a frame; t2 (read_only) and t3 (hook) are policy refusals: none.
    assertEquals(arts.map((a) => a!.toolCallId), ["t1"]);
    assertEquals(arts[0]!.isError, true);
    assert((arts[0]!.content as string).includes("'city'"));

    const trace = (await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const refused = trace.filter((e) => e.event_type === "tool_input_refused");
    assertEquals(refused.map((e) => e.tool_call_id), ["t1"]);
    assertEquals(refused[0].missing, ["city"]);
    const denied = trace.filter((e) => e.event_type === "protected_path_denied");
    assertEquals(denied.length, 1);
    assertEquals(denied[0].rule, "docs");
    const hook = trace.filter((e) => e.event_type === "call_denied");
    assertEquals(hook.map((e) => e.target), ["weather"]);
    // The hook saw only the call that passed the first two checks.
    const calls = (await Deno.readTextFile(`${cap.ready.workdir}/gate-calls.jsonl`)).trim()
      .split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assertEquals(calls.length, 1);
    assertEquals(calls[0].input, { city: "Paris" });
    // Every call still has its failed tool_call line.
    const tc = trace.filter((e) => e.event_type === "tool_call");
    assertEquals(tc.map((e) => [e.tool_call_id, e.status]), [["t1", "error"], ["t2", "error"], [
      "t3",
      "error",
    ]]);
  } finally {
    await cap.close();
  }
});
