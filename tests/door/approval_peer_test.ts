/**
 * A peer capsule never approves (docs/approvals.md "Who may approve"): on a formation member's
 * door, another member's edge token starts a task whose call waits for approval; that member's
 * answer is refused even for its own task, and the operator's token is taken. In process (the
 * door on a real socket) so the formation's key can mint the edge token a member would present.
 */
import assert from "node:assert/strict";
import { mintEdgeToken } from "../../src/door/auth.ts";
import { startDoor } from "../../src/door/server.ts";
import { createDriver } from "../../src/drivers/mod.ts";
import { newId } from "../../src/ids.ts";
import { loadManifest } from "../../src/manifest/load.ts";
import { NO_HOOKS } from "../../src/session/hooks_api.ts";
import { Session } from "../../src/session/session.ts";
import { prepareWorkdir } from "../../src/session/workdir.ts";
import { ToolBox } from "../../src/tools/toolbox.ts";
import { writeCapsule } from "../helpers/capsule.ts";
import { call, message, waitTask } from "./helpers.ts";

Deno.test("approvals: a formation member's edge token is refused, the operator's taken", async () => {
  const dir = await writeCapsule({
    manifest: {
      name: "member-b",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
      approvals: { tools: { bash: { approve: "ask" } } },
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "c", name: "bash", input: { command: "echo hi" } } }] },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  const { manifest } = await loadManifest(dir);
  const id = newId("ses");
  const session = new Session({
    id,
    manifest,
    workdir: prepareWorkdir(manifest, id),
    driver: await createDriver(manifest),
    tools: new ToolBox({
      capabilities: manifest.capabilities,
      tools: manifest.tools,
      shellGraceSecs: manifest.lifecycle.shellGraceSecs,
    }),
    hooks: NO_HOOKS,
    idleTimeoutMs: 30_000,
    warn: () => {},
  });
  await session.begin({});
  const key = crypto.getRandomValues(new Uint8Array(32));
  const formationId = newId("frm");
  const door = await startDoor({
    session,
    bind: "127.0.0.1",
    port: 0,
    tools: [],
    streamsText: true,
    heartbeatMs: 15_000,
    warn: () => {},
    formation: { formationId, member: "b", key },
  });
  const running = session.run();
  const base = `http://127.0.0.1:${door.port}`;
  try {
    const peer = await mintEdgeToken(key, formationId, "a", "b");
    const op = door.tokens!.operator;
    const sent = await call(
      base,
      "SendMessage",
      message("call it", {}, { returnImmediately: true }),
      { token: peer },
    );
    const taskId = sent.json?.result?.task?.id as string;
    assert.ok(taskId, sent.text);
    // The member sees its own task waiting, and reads the approval's hash from it.
    const waiting = await waitTask(
      base,
      taskId,
      (t) => t.status.state === "TASK_STATE_INPUT_REQUIRED",
      15_000,
      peer,
    ) as { artifacts: { artifactId: string; parts: { data: { argumentsHash: string } }[] }[] };
    const hash = waiting.artifacts.find((a) => a.artifactId === "approval")!.parts[0].data
      .argumentsHash;
    const yes = message("", { taskId, parts: [{ data: { approve: true, argumentsHash: hash } }] });
    const refused = await call(base, "SendMessage", yes, { token: peer });
    assert.equal(refused.json?.error?.code, -32004, refused.text);
    assert.match(
      refused.json.error.message,
      /only the operator answers an approval; credential 'member a' cannot/,
    );
    const still = await call(base, "GetTask", { id: taskId }, { token: op });
    assert.equal(still.json.result.status.state, "TASK_STATE_INPUT_REQUIRED");

    const ok = await call(base, "SendMessage", yes, { token: op });
    assert.ok(ok.json?.result?.task, ok.text);
    const done = await waitTask(
      base,
      taskId,
      (t) => t.status.state === "TASK_STATE_COMPLETED",
      15_000,
      op,
    );
    assert.equal(done.status.state, "TASK_STATE_COMPLETED");
  } finally {
    session.shutdown();
    await running;
    if (!session.log.closed) session.log.close();
    await door.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
