/**
 * The `[Capsule]` block on the process transport (docs/running.md "What the model is told"): the
 * real Claude Code CLI, run by `mur run`, is handed the block and the manifest's prompt through
 * its own `--system-prompt`, and the fake Anthropic endpoint it calls (scripts/fakes/
 * claude_endpoint.ts) receives them, block first, on every call of a task that calls a capsule
 * tool (two calls) — the CLI's own side calls (its prompt-suggestion call) aside. Codex has no
 * system-prompt option: the same text heads the prompt its endpoint receives.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { startCodexEndpoint } from "../../scripts/fakes/codex_endpoint.ts";
import { codexHome } from "../helpers/codex_home.ts";
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

Deno.test("capsule block, codex: the block and the manifest's prompt head the input its endpoint receives", async () => {
  const codex = await ensureCli("codex");
  const endpoint = startCodexEndpoint();
  const pc = await startProcessCapsule({
    driver: "codex",
    command: codex,
    env: async (home) => (await codexHome(home, endpoint.url)).env,
    systemPrompt: PROMPT,
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  try {
    const events = await streamTask(pc.cap, send("say hello"), { ms: 60_000 });
    assert.equal(stateOf(events.at(-1)!), "TASK_STATE_COMPLETED");
    const block = capsuleBlock({ name: "harnessed", version: "0.1.0" }, "process");
    const calls = endpoint.requests.filter((r) =>
      JSON.stringify(r.body?.input).includes("say hello")
    );
    assert.ok(calls.length >= 1);
    for (const c of calls) {
      const input = JSON.stringify(c.body?.input);
      const at = input.indexOf(JSON.stringify(block + PROMPT).slice(1, -1));
      assert.ok(at >= 0, `the block and prompt are not in the input:\n${input}`);
      assert.ok(at < input.indexOf("say hello"), "before the task");
    }
  } finally {
    await pc.close();
    await endpoint.close();
  }
});
