/**
 * The `[Capsule]` block on the process transport (docs/running.md "What the model is told"): the
 * real Claude Code CLI, run by `mur run`, is handed the block and the manifest's prompt through
 * its own `--system-prompt`, and the fake Anthropic endpoint it calls (scripts/fakes/
 * claude_endpoint.ts) receives them, block first, on every call of a task that calls a capsule
 * tool (two calls) — the CLI's own side calls (its prompt-suggestion call) aside.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { capsuleBlock } from "../../src/drivers/capsule_block.ts";
import { readTrace, send, startProcessCapsule, stateOf, streamTask } from "./helpers.ts";

const PROMPT = "You are a test capsule. Réponds brièvement — 短く.";

Deno.test("capsule block, claude-code: every conversation call's system prompt starts with the block, then the manifest's prompt", async () => {
  const claude = await ensureCli("claude-code");
  const endpoint = startClaudeEndpoint();
  const pc = await startProcessCapsule({
    driver: "claude-code",
    command: claude,
    env: [`ANTHROPIC_BASE_URL=${endpoint.url}`, "ANTHROPIC_API_KEY=sk-ant-fake"],
    shell: ["bash"],
    systemPrompt: PROMPT,
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  try {
    const events = await streamTask(pc.cap, send('MCPTEST {"command":"echo hi"}'));
    assert.equal(stateOf(events.at(-1)!), "TASK_STATE_COMPLETED");
    const calls = endpoint.requests.filter((r) =>
      r.body !== null && !r.userText.includes("Reply with ONLY the suggestion")
    );
    assert.ok(calls.length >= 2, `a tool call and the answer: ${calls.length} call(s)`);
    const block = capsuleBlock({ name: "harnessed", version: "0.1.0" }, "process");
    for (const c of calls) {
      const system = c.body!.system as Array<{ text: string }> | string;
      const text = typeof system === "string" ? system : system.map((b) => b.text).join("\n");
      const at = text.indexOf(block + PROMPT);
      assert.ok(at >= 0, `the block and prompt are not in the system prompt:\n${text}`);
      // Nothing of the CLI's own before it but its fixed preamble line(s), never the prompt.
      assert.ok(!text.slice(0, at).includes(PROMPT), text);
    }
    const start = (await readTrace(pc.cap)).find((e) => e.event_type === "session_start")!;
    assert.equal(
      start.system_prompt_sha256,
      createHash("sha256").update(PROMPT, "utf8").digest("hex"),
    );
  } finally {
    await pc.close();
    await endpoint.close();
  }
});
