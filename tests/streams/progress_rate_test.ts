/**
 * docs/protocol.md "Frames": `tool-call-progress`: at most one frame per call per 250 ms, plus one
 * with the final size when the input is complete; cumulative UTF-8 bytes, never decreasing; after
 * the call's `tool-call-started` and before its `artifact`.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { collect, frameOf, STREAM_URI, streamRequest } from "../helpers/sse.ts";

Deno.test("tool-call-progress: at most one per call per 250 ms plus the final size, cumulative UTF-8 bytes", async () => {
  // Multi-byte input: bytes, not characters, are counted.
  const input = { command: "echo 'héllo wörld ✓ " + "x".repeat(60) + "'" };
  const cap = await startCapsule({
    manifest: {
      name: "progress",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{
              tool_call: { id: "slow", name: "bash", input, chunks: 16, chunk_delay_ms: 90 },
            }],
          },
          { steps: [{ text: "ok" }] },
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
    const frames = evs.map((e) => ({ f: frameOf(e), e })).filter((x) => x.f);
    const started = frames.findIndex((x) => x.f!.frame === "tool-call-started");
    const artifact = frames.findIndex((x) => x.f!.frame === "artifact");
    const prog = frames.filter((x) => x.f!.frame === "tool-call-progress");
    assert(started >= 0 && artifact > started);
    for (const p of prog) {
      const i = frames.indexOf(p);
      assert(i > started && i < artifact, "between started and artifact");
      assertEquals(p.f!.toolCallId, "slow");
    }
    // 16 pieces 90 ms apart: at least one frame before the final one. How many depends on how
    // long the input really took (a loaded machine stretches the delays), so the count is not
    // asserted: the spacing below is what the rule says, read from the frames' own timestamps.
    assert(prog.length >= 2, `${prog.length} progress frames`);
    const bytes = prog.map((p) => p.f!.inputBytes as number);
    for (let i = 1; i < bytes.length; i++) assert(bytes[i] > bytes[i - 1]);
    assertEquals(bytes[bytes.length - 1], new TextEncoder().encode(JSON.stringify(input)).length);
    // Every frame but the final one at least ~250 ms after the previous (carrier timestamps).
    const times = prog.map((p) =>
      Date.parse(
        (p.e.data.result as Record<string, Record<string, { timestamp: string }>>).statusUpdate
          .status.timestamp,
      )
    );
    for (let i = 1; i < times.length - 1; i++) {
      assert(times[i] - times[i - 1] >= 240, `frames ${i - 1}→${i}: ${times[i] - times[i - 1]} ms`);
    }
  } finally {
    await cap.close();
  }
});
