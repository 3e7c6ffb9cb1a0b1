/**
 * `transport: process, driver: claude-code` end to end: the real Claude Code CLI (installed by
 * the test setup; a failed install fails this test) run by `mur run --json`, offline against
 * the fake Anthropic endpoint (scripts/fakes/claude_endpoint.ts), with its own HOME and
 * CLAUDE_CODE_MAX_RETRIES. Tasks go in through the door as SendStreamingMessage with the stream
 * extension activated; what comes out is checked against docs/protocol.md "Frames" and "Event order
 * within a task", and trace.jsonl against the harness_* records.
 *
 * One capsule (queue + sleep, threaded) runs the tasks one after another, which keeps the suite
 * short: each task is a fresh harness process anyway.
 */
import assert from "node:assert/strict";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { startCapsule } from "../helpers/capsule.ts";
import {
  contextIdOf,
  frames,
  messageOf,
  readTrace,
  send,
  shape,
  startProcessCapsule,
  stateOf,
  streamTask,
  taskIdOf,
  traceOf,
  until,
} from "./helpers.ts";
import { ARTIFACT_FRAME_KEYS } from "../helpers/sse.ts";

const DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1";
const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";

function texts(fs: Record<string, unknown>[], kind: "text" | "thinking"): string {
  return fs.filter((f) => f.frame === kind && f.final === false).map((f) => f.text).join("");
}

Deno.test("claude-code through mur run: text, thinking, bridged shell, threaded resume with a suggestion, forget, 429 retries, cancel, death", async (t) => {
  const claude = await ensureCli("claude-code");
  const endpoint = startClaudeEndpoint({ slowDeltaMs: 150 });
  const pc = await startProcessCapsule({
    driver: "claude-code",
    command: claude,
    env: [
      `ANTHROPIC_BASE_URL=${endpoint.url}`,
      "ANTHROPIC_API_KEY=sk-ant-fake",
      "CLAUDE_CODE_MAX_RETRIES=2",
    ],
    shell: ["bash"],
    readOnly: ["docs"],
    lifecycle: { conversation: "threaded" },
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  const { cap } = pc;
  try {
    await t.step("the card: streaming, and quota / suggested-prompt after artifact", async () => {
      const res = await fetch(`${cap.base}/.well-known/agent-card.json`);
      const card = await res.json();
      assert.equal(card.capabilities.streaming, true, "Claude Code streams text");
      const ext = card.capabilities.extensions.find((e: { uri: string }) => e.uri === STREAM_URI);
      assert.deepEqual(ext.params.frames, [
        "text",
        "thinking",
        "tool-call-started",
        "tool-call-progress",
        "tool-progress",
        "artifact",
        "quota",
        "suggested-prompt",
        "gap",
        "lagged",
        "connection-ack",
        "capsule-closed",
      ]);
    });

    await t.step("a text task streams, completes, and counts the harness's usage", async () => {
      const events = await streamTask(cap, send("hello"));
      assert.deepEqual(shape(events), [
        "task:TASK_STATE_SUBMITTED",
        "status:WORKING:inference turn 1",
        "frame:text",
        "frame:text",
        "frame:text",
        "frame:text:final",
        "artifact:response",
        "status:COMPLETED:task completed",
      ]);
      const fs = frames(events);
      assert.equal(texts(fs, "text"), "Hello from the fake server.");
      assert.deepEqual(fs.at(-1), { frame: "text", text: "", final: true });
      const id = taskIdOf(events);
      const got = await cap.rpc("GetTask", { id });
      const task = got.result as { artifacts: { parts: { text: string }[] }[] };
      assert.equal(task.artifacts[0].parts[0].text, "Hello from the fake server.");
      // The system prompt reached the model behind the [Capsule] block (capsule_prompt_test.ts).
      const call = endpoint.requests.find((r) => r.userText.includes("hello"))!;
      assert.match(JSON.stringify(call.body?.system), /\[Capsule\][\s\S]*test capsule\./);

      const end = await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
      assert.equal(end.exit_status, "ok");
      assert.equal(end.turns, 1);
      assert.deepEqual([end.input_tokens, end.output_tokens], [12, 9]);
      const types = (await readTrace(cap)).filter((l) => l.task_id === id).map((l) => l.event_type);
      for (const want of ["harness_start", "harness_session", "inference", "harness_exit"]) {
        assert.ok(types.includes(want), `${want} in ${types.join(" ")}`);
      }
      const [inf] = await traceOf(cap, id, "inference");
      assert.equal(inf.decision, "end_turn");
      assert.equal(inf.turn, 0);
      const [start] = await traceOf(cap, id, "harness_start");
      assert.equal(start.driver, "claude-code");
      assert.equal(start.session_mode, "new");
    });

    await t.step("thinking streams as thinking frames inside the one turn", async () => {
      const events = await streamTask(cap, send("THINKTEST"));
      const fs = frames(events);
      assert.equal(texts(fs, "thinking"), "Let me think about it.");
      assert.equal(texts(fs, "text"), "Thought it through.");
      const s = shape(events);
      assert.equal(s.filter((x) => x.startsWith("status:WORKING:inference turn")).length, 1);
      assert.ok(s.indexOf("frame:thinking") > s.indexOf("status:WORKING:inference turn 1"));
      assert.ok(s.indexOf("frame:thinking") < s.indexOf("frame:text"));
      assert.equal(s.at(-1), "status:COMPLETED:task completed");
    });

    await t.step(
      "a bridged shell call: started, progress, a fenced artifact, the next turn",
      async () => {
        const events = await streamTask(cap, send('MCPTEST {"command":"echo hi"}'));
        // A second model call in one harness process may bring a suggestion; timing decides.
        assert.deepEqual(shape(events).filter((s) => s !== "frame:suggested-prompt"), [
          "task:TASK_STATE_SUBMITTED",
          "status:WORKING:inference turn 1",
          "frame:text",
          "frame:text:final",
          "frame:tool-call-started",
          "frame:tool-call-progress",
          "frame:artifact",
          "status:WORKING:inference turn 2",
          "frame:text",
          "frame:text",
          "frame:text:final",
          "artifact:response",
          "status:COMPLETED:task completed",
        ]);
        const fs = frames(events);
        const started = fs.find((f) => f.frame === "tool-call-started")!;
        assert.equal(started.toolName, "bash");
        assert.match(String(started.toolCallId), /^toolu_fake_/);
        const progress = fs.filter((f) => f.frame === "tool-call-progress");
        assert.equal(
          progress.at(-1)!.inputBytes,
          new TextEncoder().encode('{"command":"echo hi"}').length,
        );
        const art = fs.find((f) => f.frame === "artifact")!;
        assert.deepEqual(Object.keys(art), ARTIFACT_FRAME_KEYS);
        assert.equal(art.toolName, "bash");
        assert.equal(art.toolCallId, started.toolCallId);
        assert.equal(art.fenceSource, "tool:bash");
        assert.match(
          String(art.content),
          /^<untrusted-content source=tool:bash>\n[\s\S]*Exit code: 0[\s\S]*hi[\s\S]*<\/untrusted-content>$/,
        );
        assert.equal(art.isError, false);
        assert.equal(art.exitCode, null, "a process capsule reports no exit code");
        assert.equal(art.truncated, false);
        assert.deepEqual(art.attachments, []);
        assert.equal(typeof art.durationMs, "number");

        const id = taskIdOf(events);
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const [call] = await traceOf(cap, id, "tool_call");
        assert.equal(call.tool_name, "bash");
        assert.equal(call.tool_call_id, started.toolCallId);
        assert.equal(call.status, "ok");
        assert.equal(call.duration_ms, art.durationMs);
        const [sh] = await traceOf(cap, id, "shell");
        assert.equal(sh.exit_code, 0);
        const turns = await traceOf(cap, id, "inference");
        assert.deepEqual(turns.map((l) => [l.turn, l.decision, l.tool_name]), [
          [0, "tool_call", "bash"],
          [1, "end_turn", null],
        ]);
        const [end] = await traceOf(cap, id, "task_end");
        assert.deepEqual([end.turns, end.tool_calls, end.shell_calls], [2, 1, 1]);
      },
    );

    await t.step(
      "a read_only refusal is one isError artifact, from the harness's report",
      async () => {
        const events = await streamTask(cap, send('MCPTEST {"command":"echo pwned > docs/a.md"}'));
        const s = shape(events).filter((x) => x !== "frame:suggested-prompt");
        assert.equal(s.filter((x) => x === "frame:artifact").length, 1, s.join(" "));
        assert.equal(s.at(-1), "status:COMPLETED:task completed");
        const art = frames(events).find((f) => f.frame === "artifact")!;
        assert.equal(art.isError, true);
        assert.equal(art.fenceSource, null, "the tool server refused it: no fence");
        assert.match(String(art.content), /read-only path 'docs'/);
        const id = taskIdOf(events);
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const [call] = await traceOf(cap, id, "tool_call");
        assert.equal(call.status, "error");
        assert.deepEqual(await traceOf(cap, id, "shell"), [], "the command never ran");
      },
    );

    let ctx = "";
    let sid = "";
    await t.step(
      "a second task in a threaded context resumes the harness session and gets a suggested prompt",
      async () => {
        const first = await streamTask(cap, send("remember PINEAPPLE"));
        assert.equal(stateOf(first.at(-1)!), "TASK_STATE_COMPLETED");
        ctx = contextIdOf(first);
        const firstId = taskIdOf(first);
        await until("task_end", async () => (await traceOf(cap, firstId, "task_end"))[0]);
        sid = String((await traceOf(cap, firstId, "harness_session"))[0].harness_session_id);

        const second = await streamTask(cap, send("again", { contextId: ctx }));
        assert.equal(contextIdOf(second), ctx);
        const id = taskIdOf(second);
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const [start] = await traceOf(cap, id, "harness_start");
        assert.equal(start.session_mode, "resume");
        assert.equal(start.harness_session_id, sid);
        const again = endpoint.requests.find((r) => r.userText.includes("again"))!;
        assert.match(JSON.stringify(again.body?.messages), /PINEAPPLE/, "the history came along");
        const s = shape(second);
        const sp = frames(second).find((f) => f.frame === "suggested-prompt");
        assert.deepEqual(sp, { frame: "suggested-prompt", text: "Run the test suite" });
        // Read while the harness exits, and before the task's answer and final status.
        assert.ok(s.indexOf("frame:suggested-prompt") > s.indexOf("frame:text:final"));
        assert.ok(s.indexOf("frame:suggested-prompt") < s.indexOf("artifact:response"));
        assert.equal(s.at(-1), "status:COMPLETED:task completed");
      },
    );

    await t.step(
      "forgetSession in the door extension's metadata starts the context afresh",
      async () => {
        const res = await fetch(`${cap.base}/`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "a2a-version": "1.0",
            "A2A-Extensions": STREAM_URI,
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: "f1",
            method: "SendStreamingMessage",
            params: send("start over", {
              contextId: ctx,
              metadata: { [DOOR_URI]: { forgetSession: true } },
            }),
          }),
        });
        assert.equal(res.headers.get("a2a-extensions"), `${DOOR_URI}, ${STREAM_URI}`);
        const text = await res.text();
        assert.match(text, /TASK_STATE_COMPLETED/);
        const id = String(JSON.parse(text.split("\n")[0].slice(6)).result.task.id);
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const [forgot] = await traceOf(cap, id, "harness_session_forgotten");
        assert.equal(forgot.context_id, ctx);
        assert.equal(forgot.harness_session_id, sid);
        const [start] = await traceOf(cap, id, "harness_start");
        assert.equal(start.session_mode, "new");
        assert.notEqual(start.harness_session_id, sid);
      },
    );

    await t.step(
      "429s: harness_retry lines in the trace, no frame, a classified failure",
      async () => {
        const events = await streamTask(cap, send("FAIL429 please"));
        const id = taskIdOf(events);
        const s = shape(events);
        assert.equal(s.length, 2, `only the opening task and the final status: ${s}`);
        const last = events.at(-1)!;
        assert.equal(stateOf(last), "TASK_STATE_FAILED");
        assert.match(
          messageOf(last)!,
          /^error\[E-RUN-033\]: the harness turn failed \(quota\): .*429/,
        );
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const retries = await traceOf(cap, id, "harness_retry");
        assert.deepEqual(retries.map((r) => [r.attempt, r.reason]), [
          [1, "rate_limit (429)"],
          [2, "rate_limit (429)"],
        ]);
        const [failed] = await traceOf(cap, id, "harness_failed");
        assert.equal(failed.kind, "quota");
        const got = await cap.rpc("GetTask", { id });
        const status =
          (got.result as { status: { state: string; message: { parts: { text: string }[] } } })
            .status;
        assert.equal(status.state, "TASK_STATE_FAILED");
        assert.equal(status.message.parts[0].text, messageOf(last));
      },
    );

    await t.step(
      "cancel mid-stream: the harness is interrupted and the task is canceled",
      async () => {
        let canceled: Promise<Record<string, unknown>> | null = null;
        const events = await streamTask(cap, send("SLOWTEST"), {
          onEvent: (e) => {
            const r = e.data.result as Record<string, Record<string, unknown>>;
            const f = (r.statusUpdate?.metadata as Record<string, unknown> | undefined)?.[
              STREAM_URI
            ] as Record<string, unknown> | undefined;
            if (f?.frame === "text" && !canceled) {
              canceled = cap.rpc("CancelTask", { id: r.statusUpdate.taskId as string });
            }
          },
        });
        assert.ok(canceled, "a text frame arrived before the cancel");
        const answer = await canceled! as { result: { status: { state: string } } };
        assert.equal(answer.result.status.state, "TASK_STATE_CANCELED");
        const last = events.at(-1)!;
        assert.equal(stateOf(last), "TASK_STATE_CANCELED");
        assert.equal(messageOf(last), "task canceled");
        const fs = frames(events);
        assert.ok(!texts(fs, "text").includes("tick 39"), "the stream stopped early");
        assert.ok(!fs.some((f) => f.frame === "suggested-prompt"));
        const id = taskIdOf(events);
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const [intr] = await traceOf(cap, id, "harness_interrupt");
        assert.equal(intr.method, "stdin-message");
        assert.equal(intr.delivered, true);
        const [exit] = await traceOf(cap, id, "harness_exit");
        assert.equal(exit.cause, "canceled");
        assert.equal(exit.killed, false);
      },
    );

    await t.step("a harness that dies mid-turn: a classified failure", async () => {
      let killed = false;
      const events = await streamTask(cap, send("SLOWTEST"), {
        onEvent: async (e) => {
          const r = e.data.result as Record<string, Record<string, unknown>>;
          const f = (r.statusUpdate?.metadata as Record<string, unknown> | undefined)?.[
            STREAM_URI
          ] as Record<string, unknown> | undefined;
          if (f?.frame !== "text" || killed) return;
          killed = true;
          const id = r.statusUpdate.taskId as string;
          const [start] = await traceOf(cap, id, "harness_start");
          Deno.kill(start.pid as number, "SIGKILL");
        },
      });
      assert.ok(killed);
      const last = events.at(-1)!;
      assert.equal(stateOf(last), "TASK_STATE_FAILED");
      assert.match(
        messageOf(last)!,
        /^error\[E-RUN-033\]: the harness turn failed \(harness-error\): .*SIGKILL/,
      );
      const id = taskIdOf(events);
      await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
      const [failed] = await traceOf(cap, id, "harness_failed");
      assert.equal(failed.kind, "harness-error");
      const [tf] = await traceOf(cap, id, "task_failed");
      assert.equal(tf.error_code, "E-RUN-033");
    });

    await t.step("the capsule still takes work after a cancel and a death", async () => {
      const events = await streamTask(cap, send("hello again"));
      assert.equal(stateOf(events.at(-1)!), "TASK_STATE_COMPLETED");
    });
  } finally {
    await pc.close();
    await endpoint.close();
  }
});

Deno.test("forgetSession on an http capsule is refused -32602", async () => {
  const cap = await startCapsule({
    manifest: { name: "plain", version: "0.1.0", lifecycle: { task_acceptance: "queue" } },
    script: { tasks: [{ turns: [{ steps: [{ text: "hi" }] }] }] },
  });
  try {
    const answer = await cap.rpc(
      "SendMessage",
      send("hello", { metadata: { [DOOR_URI]: { forgetSession: true } } }),
    );
    const error = answer.error as { code: number; message: string };
    assert.equal(error.code, -32602);
    assert.match(error.message, /forget.*inference\.transport: process/);
  } finally {
    await cap.close();
  }
});
