/**
 * Steering a running task (docs/approvals.md "Steering"): the card lists the extension; a
 * message naming a WORKING task with the extension's marker is read before the task's next model
 * call — after a tool call, or as one more turn when the model had stopped — and SendMessage
 * answers how it was taken, the stream shows `steer-taken`, the trace `steer_taken`; without the
 * marker the message is refused -32004 as before; one the task ends without reading is told so.
 * The model is held at a known point by a shell command (or an on-inference hook) waiting for a
 * file the test writes, so nothing depends on timing.
 */
import assert from "node:assert/strict";
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import { collect, frameOf, streamRequest } from "../helpers/sse.ts";
import { startFakeProvider } from "../../scripts/fakes/server.ts";
import { until } from "../helpers/until.ts";
import { call, message, submit, traceOf, waitTask } from "./helpers.ts";

const STEER_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-steer-v1";
/** A shell command that returns once the test writes `go` in the workdir (bounded: 120 s). */
const HOLD =
  "i=0; while [ ! -f go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo held";

const working = (t: { status: { state: string } }) => t.status.state === "TASK_STATE_WORKING";
const ended = (t: { status: { state: string } }) =>
  ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(t.status.state);

function steer(taskId: string, text: string, extra: Record<string, unknown> = {}) {
  return message(text, { taskId, metadata: { [STEER_URI]: {} }, ...extra });
}

function manifest(extra: Record<string, unknown> = {}) {
  return {
    name: "steered",
    version: "0.1.0",
    // A held command must not move to the background on a slow machine (shell_grace_secs).
    lifecycle: {
      task_acceptance: "queue",
      after_task: "sleep",
      queue_depth: 5,
      shell_grace_secs: 300,
    },
    capabilities: { shell: { allow: ["bash"] } },
    ...extra,
  };
}

const hold = (id: string) => ({
  steps: [{ tool_call: { id, name: "bash", input: { command: HOLD } } }],
});

/** The steer reached the task (its history holds it): the door took it. */
async function inHistory(cap: Capsule, taskId: string, text: string): Promise<void> {
  await until("the steer in the task's history", async () => {
    const h = await call(cap.base, "GetTask", { id: taskId, historyLength: 10 });
    const msgs = (h.json?.result?.history ?? []) as { parts: { text?: string }[] }[];
    return msgs.some((m) => m.parts.some((p) => p.text === text)) || undefined;
  });
}

/** The steer's answer, once the test released the held command. */
async function steerWhileHeld(cap: Capsule, taskId: string, text: string) {
  const answer = call(cap.base, "SendMessage", steer(taskId, text));
  // The steer waits on the task; the command is released only once the door took it.
  await inHistory(cap, taskId, text);
  await Deno.writeTextFile(`${cap.ready.workdir}/go`, "");
  return await answer;
}

Deno.test("steer: listed on the card; read before the next call after a tool; refused -32004 without the marker; told when not taken", async () => {
  const cap = await startCapsule({
    manifest: manifest({ inference: { max_turns: 2 } }),
    script: {
      tasks: [
        { match: "^work", turns: [hold("h1"), { steps: [{ text: "done as steered" }] }] },
        {
          match: "^last",
          turns: [
            { steps: [{ tool_call: { id: "e1", name: "bash", input: { command: "echo" } } }] },
            hold("h3"),
          ],
        },
      ],
    },
  });
  try {
    const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
    const ext = card.capabilities.extensions.find((e: { uri: string }) => e.uri === STEER_URI);
    assert.ok(ext, JSON.stringify(card.capabilities.extensions));
    assert.equal(ext.required, false);

    const t = await submit(cap.base, "work");
    await waitTask(cap.base, t.id, working);
    // Without the marker: the seed's refusal, and nothing reaches the task.
    const plain = await call(cap.base, "SendMessage", message("stop, use ssh", { taskId: t.id }));
    assert.equal(plain.json?.error?.code, -32004, plain.text);
    assert.match(plain.json.error.message, /only while it waits in TASK_STATE_INPUT_REQUIRED/);

    const res = await steerWhileHeld(cap, t.id, "use the staging branch, not main");
    const msg = res.json?.result?.message;
    assert.ok(msg, res.text);
    assert.equal(msg.role, "ROLE_AGENT");
    assert.equal(msg.taskId, t.id);
    assert.equal(msg.parts[0].text, `steer taken: task ${t.id} read it before turn 2`);
    assert.equal(msg.parts[1].data.steer, "taken");
    assert.equal(msg.parts[1].data.turn, 2);
    await waitTask(cap.base, t.id, ended);

    const trace = await traceOf(cap);
    const line = trace.find((l) => l.event_type === "steer_taken");
    assert.ok(line, "no steer_taken line");
    assert.equal(line.task_id, t.id);
    assert.equal(line.turn, 1);
    assert.equal(
      line.text_bytes,
      new TextEncoder().encode("use the staging branch, not main").length,
    );

    // The watcher sees the frame between the tool's artifact and turn 2.
    const watch = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "Last-Event-ID": "0",
    });
    const events = await collect(
      watch,
      (e) =>
        (e.data.result as { statusUpdate?: { status: { state: string } } }).statusUpdate?.status
          .state === "TASK_STATE_COMPLETED",
    );
    const seq = events.flatMap((e) => {
      const f = frameOf(e);
      if (f) return f.frame === "connection-ack" ? [] : [`frame:${f.frame}`];
      const st = (e.data.result as {
        statusUpdate?: { status: { message?: { parts: { text: string }[] } } };
      })
        .statusUpdate?.status.message?.parts[0].text;
      return st ? [st] : [];
    }).filter((s) => s !== "frame:tool-call-progress");
    const at = seq.indexOf("frame:steer-taken");
    assert.deepEqual(seq.slice(at - 1, at + 2), [
      "frame:artifact",
      "frame:steer-taken",
      "inference turn 2",
    ]);
    const steerFrame = events.map(frameOf).find((f) => f?.frame === "steer-taken")!;
    assert.equal(steerFrame.turn, 2);

    // The task's last turn is running: nothing reads the steer, and the answer says so.
    const last = await submit(cap.base, "last");
    await Deno.remove(`${cap.ready.workdir}/go`);
    // Its second and last turn (max_turns: 2) has asked for the held command.
    await until(
      "the last turn's inference line",
      async () =>
        (await traceOf(cap)).find((l) =>
          l.event_type === "inference" && l.task_id === last.id && l.turn === 1
        ),
    );
    const late = await steerWhileHeld(cap, last.id, "too late");
    assert.equal(late.json?.result?.message?.parts[1]?.data?.steer, "not_taken", late.text);
    assert.equal(
      late.json.result.message.parts[0].text,
      "steer not taken: the task ended before its next turn",
    );
    // An ended task refuses a steer as it refuses any message.
    const gone = await call(cap.base, "SendMessage", steer(last.id, "anyone?"));
    assert.equal(gone.json?.error?.code, -32004);
    assert.match(gone.json.error.message, /has ended/);
  } finally {
    await cap.close();
  }
});

Deno.test("steer: a steer waiting when the model stops is one more turn; returnImmediately answers queued", async () => {
  const cap = await startCapsule({
    manifest: manifest({
      hooks: [{ name: "hold", binding: "on-inference", command: ["./hold.sh"] }],
    }),
    script: {
      tasks: [{
        turns: [{ steps: [{ text: "first answer" }] }, { steps: [{ text: "steered answer" }] }],
      }],
    },
    // The hook holds the turn until the test says go: past the default 30 s deadline if need be.
    env: { MURMUR_HOOK_TIMEOUT_MS: "120000" },
    files: {
      "hold.sh":
        `#!/bin/sh\ncat >/dev/null\ni=0; while [ ! -f go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\necho '{}'\n`,
    },
  });
  try {
    const t = await submit(cap.base, "anything");
    await waitTask(cap.base, t.id, working);
    const q = await call(cap.base, "SendMessage", {
      ...steer(t.id, "also list the risks"),
      configuration: { returnImmediately: true },
    });
    assert.equal(q.json?.result?.message?.parts[1]?.data?.steer, "queued", q.text);
    await Deno.writeTextFile(`${cap.ready.workdir}/go`, "");
    const done = await waitTask(cap.base, t.id, ended) as {
      status: { state: string };
      artifacts: { artifactId: string; parts: { text: string }[] }[];
    };
    assert.equal(done.status.state, "TASK_STATE_COMPLETED");
    assert.equal(
      done.artifacts.find((a) => a.artifactId === "response")?.parts[0].text,
      "steered answer",
    );
  } finally {
    await cap.close();
  }
});

Deno.test("steer: the model's provider receives the steer in its next request, after the tool result", async () => {
  const fake = startFakeProvider({
    kind: "openai-chat",
    apiKey: "sk-fake-steer",
    turns: [
      { steps: [{ toolCall: { id: "call_1", name: "bash", input: { command: HOLD } } }] },
      { steps: [{ text: "ok, staging" }] },
    ],
  });
  const cap = await startCapsule({
    manifest: manifest({
      inference: {
        transport: "http",
        driver: "openai-compatible",
        model: "llama3.2",
        endpoint: fake.baseURL,
        api_key: "sk-fake-steer",
      },
    }),
  });
  try {
    const t = await submit(cap.base, "deploy it");
    await waitTask(cap.base, t.id, working);
    const res = await steerWhileHeld(cap, t.id, "deploy to staging — not prod ✓");
    assert.equal(res.json?.result?.message?.parts[1]?.data?.steer, "taken", res.text);
    await waitTask(cap.base, t.id, ended);
    assert.equal(fake.requests.length, 2);
    const msgs = fake.requests[1].body!.messages as { role: string; content: unknown }[];
    const tool = msgs.findIndex((m) => m.role === "tool");
    assert.ok(tool > 0, JSON.stringify(msgs));
    const after = msgs.slice(tool + 1);
    assert.equal(after.length, 1, JSON.stringify(after));
    assert.equal(after[0].role, "user");
    assert.match(String(after[0].content), /deploy to staging — not prod ✓$/);
    // The first request had no such message.
    assert.ok(!JSON.stringify(fake.requests[0].body).includes("staging"));
  } finally {
    await cap.close();
    await fake.close();
  }
});

Deno.test("steer: SendStreamingMessage with the marker follows the task, its steer-taken frame included", async () => {
  const cap = await startCapsule({
    manifest: manifest(),
    script: { tasks: [{ turns: [hold("s1"), { steps: [{ text: "streamed, steered" }] }] }] },
  });
  try {
    const t = await submit(cap.base, "anything");
    await waitTask(cap.base, t.id, working);
    const res = await streamRequest(
      cap.base,
      "SendStreamingMessage",
      steer(t.id, "keep it short"),
      {
        "A2A-Extensions":
          "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1",
      },
    );
    assert.equal(res.status, 200);
    const events = collect(
      res,
      (e) =>
        (e.data.result as { statusUpdate?: { status: { state: string } } }).statusUpdate?.status
          .state === "TASK_STATE_COMPLETED",
    );
    // The steer reached the task's history before the held command is released.
    await inHistory(cap, t.id, "keep it short");
    await Deno.writeTextFile(`${cap.ready.workdir}/go`, "");
    const got = await events;
    const first = got[0].data.result as { task?: { id: string } };
    assert.equal(first.task?.id, t.id);
    const f = got.map(frameOf).find((x) => x?.frame === "steer-taken");
    assert.ok(f, "no steer-taken frame on the stream");
    assert.equal(f.turn, 2);
  } finally {
    await cap.close();
  }
});

for (
  const [driver, kind, model] of [
    ["anthropic", "anthropic", "claude-haiku-4-5"],
    ["openai", "openai-responses", "gpt-5-mini"],
  ] as const
) {
  Deno.test(`steer: on ${driver}, the next request carries the steer after the tool result`, async () => {
    const fake = startFakeProvider({
      kind,
      apiKey: "sk-fake-steer",
      turns: [
        { steps: [{ toolCall: { id: "call_1", name: "bash", input: { command: HOLD } } }] },
        { steps: [{ text: "ok" }] },
      ],
    });
    const cap = await startCapsule({
      manifest: manifest({
        inference: { driver, model, endpoint: fake.baseURL, api_key: "sk-fake-steer" },
      }),
    });
    try {
      const t = await submit(cap.base, "deploy it");
      await waitTask(cap.base, t.id, working);
      const res = await steerWhileHeld(cap, t.id, "use the blue–green switch ✓");
      assert.equal(res.json?.result?.message?.parts[1]?.data?.steer, "taken", res.text);
      await waitTask(cap.base, t.id, ended);
      assert.equal(fake.requests.length, 2);
      // Whatever the wire form, the steer comes after the tool's result in the second request.
      const body = JSON.stringify(fake.requests[1].body);
      const result = body.lastIndexOf("held");
      const steered = body.indexOf("use the blue–green switch ✓");
      assert.ok(result > 0 && steered > result, body.slice(0, 4000));
      assert.ok(!JSON.stringify(fake.requests[0].body).includes("blue–green"));
    } finally {
      await cap.close();
      await fake.close();
    }
  });
}
