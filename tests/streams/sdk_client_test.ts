/**
 * The real `@a2a-js/sdk` 1.3.0 client consumes our streams without error: `sendMessageStream` and
 * `resubscribeTask` (SubscribeToTask) of a tool-calling task, on plain connections.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import { startCapsule } from "../helpers/capsule.ts";

function message(text: string) {
  return {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text" as const, value: text }, mediaType: "text/plain" }],
  };
}

Deno.test("@a2a-js/sdk client: sendMessageStream and resubscribeTask of a tool-calling task", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "sdk",
      version: "0.1.0",
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      capabilities: { shell: { allow: ["bash"] } },
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [
              { text: "Checking. " },
              { tool_call: { id: "toolu_x", name: "bash", input: { command: "echo sdk" } } },
              { delay_ms: 300 },
            ],
          },
          { steps: [{ delay_ms: 300 }, { text: "It printed sdk." }] },
        ],
      }],
    },
  });
  try {
    const client = await new ClientFactory().createFromUrl(cap.base);
    const cases: string[] = [];
    let taskId = "";
    let finalState: number | undefined;
    let answer = "";
    // deno-lint-ignore no-explicit-any
    for await (const ev of client.sendMessageStream({ message: message("run it") } as any)) {
      // deno-lint-ignore no-explicit-any
      const p = (ev as any).payload;
      cases.push(p.$case);
      if (p.$case === "task") taskId = p.value.id;
      if (p.$case === "statusUpdate") finalState = p.value.status.state;
      if (p.$case === "artifactUpdate") {
        answer = p.value.artifact.parts.map((x: { content: { value: string } }) => x.content.value)
          .join("");
      }
    }
    assertEquals(cases[0], "task");
    assert(cases.includes("statusUpdate"));
    assertEquals(finalState, TaskState.TASK_STATE_COMPLETED);
    assertEquals(answer, "It printed sdk.");

    // Resubscribe to a second task while it works.
    const params = { message: message("again"), configuration: { returnImmediately: true } };
    // deno-lint-ignore no-explicit-any
    const sent = await client.sendMessage(params as any);
    // deno-lint-ignore no-explicit-any
    const id2 = (sent as any).id ?? (sent as any).payload?.value?.id;
    assert(typeof id2 === "string" && id2 !== taskId, JSON.stringify(sent));
    const seen: string[] = [];
    let last: number | undefined;
    // deno-lint-ignore no-explicit-any
    for await (const ev of client.resubscribeTask({ id: id2 } as any)) {
      // deno-lint-ignore no-explicit-any
      const p = (ev as any).payload;
      seen.push(p.$case);
      if (p.$case === "statusUpdate") last = p.value.status.state;
    }
    assertEquals(seen[0], "task");
    assertEquals(last, TaskState.TASK_STATE_COMPLETED);
  } finally {
    await cap.close();
  }
});
