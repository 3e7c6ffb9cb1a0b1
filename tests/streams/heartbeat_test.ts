/**
 * docs/protocol.md "Heartbeat": `:heartbeat` then a blank line, every interval from the
 * connection's open, not reset by events, never numbered or replayed, written even while a shell
 * command blocks the turn. `MURMUR_HEARTBEAT_MS` sets the interval.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";

Deno.test("heartbeats keep coming while a 3-second shell command blocks the turn, in their exact wire form", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "hb",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    env: { MURMUR_HEARTBEAT_MS: "250" },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "t", name: "bash", input: { command: "sleep 3" } } }] },
          { steps: [{ text: "slept" }] },
        ],
      }],
    },
  });
  try {
    const res = await fetch(cap.base + "/", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "murmur.WatchSession", params: {} }),
    });
    await cap.rpc("SendMessage", {
      ...userMessage("sleep"),
      configuration: { returnImmediately: true },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline && !text.includes("TASK_STATE_COMPLETED")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    // None numbered, each alone between blank lines.
    assert(!/id: \d+\n:heartbeat/.test(text));
    const blocks = text.split("\n\n");
    for (const block of blocks) {
      if (block.includes(":heartbeat")) assertEquals(block, ":heartbeat");
    }
    // Written while the shell command blocks the turn: a run of heartbeats with no event between
    // them (3 s of shell at 250 ms holds about twelve; four is a second of it). The cadence itself
    // (every interval from each connection's own open, not reset by events) is proven on a fake
    // clock in tests/events/heartbeat_wheel_test.ts, not against this machine's timers.
    let run = 0, longest = 0;
    for (const block of blocks) {
      if (block === ":heartbeat") longest = Math.max(longest, ++run);
      else if (block.trim() !== "") run = 0;
    }
    assert(longest >= 4, `the longest run of heartbeats is ${longest}: ${text.slice(-2000)}`);
    // Never replayed: a reconnect from 0 holds no heartbeat before its first live bytes.
    const again = await fetch(cap.base + "/", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "murmur.WatchSession", params: {} }),
    });
    const r2 = again.body!.pipeThrough(new TextDecoderStream()).getReader();
    const { value } = await r2.read();
    await r2.cancel();
    assert(!value!.includes(":heartbeat"));
  } finally {
    await cap.close();
  }
});
