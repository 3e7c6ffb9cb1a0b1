/**
 * Seed 000 "Heartbeat": `:heartbeat` then a blank line, every interval from the connection's
 * open, not reset by events, never numbered or replayed, written even while a shell command
 * blocks the turn. `MURMUR_HEARTBEAT_MS` sets the interval.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule, userMessage } from "../helpers/capsule.ts";

Deno.test("heartbeats arrive at the configured cadence during a 3-second shell command, in their exact wire form", async () => {
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
    const opened = Date.now();
    await cap.rpc("SendMessage", {
      ...userMessage("sleep"),
      configuration: { returnImmediately: true },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const beats: number[] = [];
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline && !text.includes("TASK_STATE_COMPLETED")) {
      const { value, done } = await reader.read();
      if (done) break;
      const before = (text.match(/:heartbeat\n\n/g) ?? []).length;
      text += value;
      const after = (text.match(/:heartbeat\n\n/g) ?? []).length;
      for (let i = before; i < after; i++) beats.push(Date.now() - opened);
    }
    await reader.cancel();
    // ~3 s of shell at 250 ms: at least 8 beats, none numbered, each alone between blank lines.
    assert(beats.length >= 8, `only ${beats.length} heartbeats: ${beats}`);
    assert(!/id: \d+\n:heartbeat/.test(text));
    for (const block of text.split("\n\n")) {
      if (block.includes(":heartbeat")) assertEquals(block, ":heartbeat");
    }
    // cadence from open, not reset by events: the n-th beat near n × 250 ms
    for (let i = 0; i < beats.length; i++) {
      assert(beats[i] >= (i + 1) * 250 - 60, `beat ${i + 1} at ${beats[i]} ms`);
    }
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
