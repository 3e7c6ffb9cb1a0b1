/**
 * Approvals on `transport: process` (docs/approvals.md "The policy"): the real Claude Code CLI
 * calls a mur command tool over the tool bridge; the manifest's `approvals:` holds the call, the
 * task waits in TASK_STATE_INPUT_REQUIRED with the approval's data part while the harness waits
 * on the bridge, the operator approves, the tool runs, and the harness carries on with its
 * result. The card lists no steer extension on this transport.
 */
import assert from "node:assert/strict";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { startCapsule } from "../helpers/capsule.ts";
import { messageOf, send, stateOf, streamTask, taskIdOf, until } from "./helpers.ts";

const STEER_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1";

Deno.test("claude-code through mur run: a bridged tool call waits for approval; the operator's answer lets it run", async () => {
  const claude = await ensureCli("claude-code");
  const endpoint = startClaudeEndpoint({});
  const home = await Deno.makeTempDir({ prefix: "mur-pe2e-home-" });
  const cap = await startCapsule({
    manifest: {
      name: "harnessed",
      version: "0.1.0",
      inference: {
        transport: "process",
        driver: "claude-code",
        command: claude,
        env: [
          `HOME=${home}`,
          `ANTHROPIC_BASE_URL=${endpoint.url}`,
          "ANTHROPIC_API_KEY=sk-ant-fake",
          "CLAUDE_CODE_MAX_RETRIES=0",
        ],
        max_turns: 10,
        system_prompt: "You are a test capsule.",
      },
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      tools: [{
        name: "deploy",
        description: "Deploys to an environment",
        input_schema: { type: "object", properties: { env: { type: "string" } } },
        command: ["./deploy.sh"],
      }],
      approvals: { tools: { deploy: { approve: "ask" } } },
    },
    files: { "deploy.sh": `#!/bin/sh\ncat > deployed.json\necho deployed\n` },
  }).catch(async (e) => {
    await endpoint.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
    throw e;
  });
  try {
    const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
    assert.ok(
      !card.capabilities.extensions.some((e: { uri: string }) => e.uri === STEER_URI),
      "no steer extension on the process transport",
    );
    const first = await streamTask(cap, send('MCPTEST {"env":"prod"}'));
    const id = taskIdOf(first);
    const last = first.at(-1)!;
    assert.equal(stateOf(last), "TASK_STATE_INPUT_REQUIRED");
    assert.equal(messageOf(last), 'approve deploy: {"env":"prod"}?');
    const parts = (last.data.result as {
      statusUpdate: { status: { message: { parts: { data?: Record<string, unknown> }[] } } };
    }).statusUpdate.status.message.parts;
    const detail = parts[1].data!;
    assert.equal(detail.kind, "approval");
    assert.equal(detail.tool, "deploy");
    assert.equal(detail.source, "tool");
    assert.deepEqual(detail.arguments, { env: "prod" });
    // The tool has not run.
    assert.equal(
      await Deno.stat(`${cap.ready.workdir}/deployed.json`).then(() => true, () => false),
      false,
    );

    const answered = await cap.rpc(
      "SendMessage",
      send("", {
        taskId: id,
        parts: [{ data: { approve: true, argumentsHash: detail.argumentsHash } }],
      }),
      // A public door: the operator's approval token (docs/approvals.md "Who may approve").
      { token: cap.ready.approval_token },
    );
    const task = (answered.result as { task: { status: { state: string } } }).task;
    assert.equal(task.status.state, "TASK_STATE_COMPLETED", JSON.stringify(answered));
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(`${cap.ready.workdir}/deployed.json`)),
      { env: "prod" },
    );
    // The harness's next model call carried the tool's result.
    await until(
      "the tool result at the model",
      () =>
        endpoint.requests.find((r) => JSON.stringify(r.body?.messages ?? []).includes("deployed")),
    );
  } finally {
    await cap.close();
    await endpoint.close();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
