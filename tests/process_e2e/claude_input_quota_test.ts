/**
 * `transport: process, driver: claude-code` end to end, the subscription side: the real Claude
 * Code CLI under OAuth-style auth against the fake endpoint sending the unified rate-limit
 * headers, with `request-input` offered over the tool bridge. The harness asks a question
 * through the bridge, the task waits in TASK_STATE_INPUT_REQUIRED, a SendMessage naming the task
 * answers it, and the harness carries on with the reply; the rate-limit headers become a `quota`
 * frame.
 */
import assert from "node:assert/strict";
import { RATE_LIMIT_RESETS, startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { collect, streamRequest } from "../helpers/sse.ts";
import {
  frameOf,
  frames,
  messageOf,
  send,
  shape,
  type SseEvent,
  startProcessCapsule,
  stateOf,
  streamTask,
  taskIdOf,
  traceOf,
  until,
} from "./helpers.ts";

const FENCED_REPLY = "<untrusted-content source=tool:request-input>\nParis\n</untrusted-content>";

Deno.test("claude-code through mur run: request-input over the bridge → input-required, the reply resumes it; rate-limit headers → quota", async () => {
  const claude = await ensureCli("claude-code");
  const endpoint = startClaudeEndpoint({ rateLimitHeaders: true });
  const pc = await startProcessCapsule({
    driver: "claude-code",
    command: claude,
    env: [
      `ANTHROPIC_BASE_URL=${endpoint.url}`,
      "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake",
      "CLAUDE_CODE_MAX_RETRIES=0",
    ],
    tools: [{ builtin: "request-input" }],
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  const { cap } = pc;
  try {
    // The stream ends at the live TASK_STATE_INPUT_REQUIRED status.
    const first = await streamTask(cap, send('MCPTEST {"prompt":"Which city?"}'));
    const id = taskIdOf(first);
    const last = first.at(-1)!;
    assert.equal(stateOf(last), "TASK_STATE_INPUT_REQUIRED");
    assert.equal(messageOf(last), "Which city?");
    const before = shape(first).filter((s) => s !== "frame:quota");
    assert.deepEqual(before, [
      "task:TASK_STATE_SUBMITTED",
      "status:WORKING:inference turn 1",
      "frame:text",
      "frame:text:final",
      "frame:tool-call-started",
      "frame:tool-call-progress",
      "status:INPUT_REQUIRED:Which city?",
    ]);
    const started = frames(first).find((f) => f.frame === "tool-call-started")!;
    assert.equal(started.toolName, "request-input", "the capsule's name, no mcp__ prefix");

    const waiting = await cap.rpc("GetTask", { id });
    const wt = waiting.result as {
      status: { state: string };
      artifacts: { name: string; parts: { text: string }[] }[];
    };
    assert.equal(wt.status.state, "TASK_STATE_INPUT_REQUIRED");
    assert.deepEqual(wt.artifacts.map((a) => [a.name, a.parts[0].text]), [
      ["prompt", "Which city?"],
    ]);

    // The reply: a SendMessage naming the task; it answers once the task has settled again.
    const answered = await cap.rpc("SendMessage", send("Paris", { taskId: id }));
    const task = (answered.result as {
      task: { status: { state: string }; artifacts: { parts: { text: string }[] }[] };
    }).task;
    assert.equal(task.status.state, "TASK_STATE_COMPLETED");
    assert.equal(task.artifacts[0].parts[0].text, `Tool said: ${FENCED_REPLY}`);
    // The harness's next model call carried the fenced reply as the tool result.
    const followUp = endpoint.requests.find((r) =>
      JSON.stringify(r.body?.messages ?? []).includes("source=tool:request-input")
    );
    assert.ok(followUp, "the reply reached the model through the harness");

    // The whole task, as a watcher replaying the session reads it.
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "Last-Event-ID": "0",
    });
    const isEnd = (e: SseEvent) => {
      const su = (e.data.result as Record<string, Record<string, unknown>>)?.statusUpdate;
      return su?.taskId === id && stateOf(e) === "TASK_STATE_COMPLETED" && !frameOf(e);
    };
    const all = await collect(res, isEnd, 15_000);
    const mine = all.filter((e) =>
      (e.data.result as Record<string, Record<string, unknown>>)?.statusUpdate?.taskId === id ||
      (e.data.result as Record<string, Record<string, unknown>>)?.artifactUpdate?.taskId === id
    );
    const s = shape(mine).filter((x) => x !== "frame:quota");
    const at = (x: string) => s.indexOf(x);
    assert.ok(at("status:INPUT_REQUIRED:Which city?") >= 0, s.join(" "));
    assert.equal(at("status:WORKING:resumed"), at("status:INPUT_REQUIRED:Which city?") + 1);
    assert.equal(at("frame:artifact"), at("status:WORKING:resumed") + 1, s.join(" "));
    assert.ok(at("status:WORKING:inference turn 2") > at("frame:artifact"));
    assert.equal(s.at(-2), "artifact:response");
    assert.equal(s.at(-1), "status:COMPLETED:task completed");
    const art = frames(mine).find((f) => f.frame === "artifact")!;
    assert.equal(art.toolName, "request-input");
    assert.equal(art.toolCallId, started.toolCallId);
    assert.equal(art.fenceSource, "tool:request-input");
    assert.equal(art.content, FENCED_REPLY);
    assert.equal(art.isError, false);

    // Subscription windows: one quota frame per harness process that saw the headers change.
    const quota = frames(mine).filter((f) => f.frame === "quota");
    assert.ok(quota.length >= 1, `a quota frame in ${shape(mine).join(" ")}`);
    const windows = quota[0].windows as Record<string, unknown>[];
    assert.deepEqual(windows.find((w) => w.name === "five-hour"), {
      name: "five-hour",
      used: 0.91,
      resetsAtMs: RATE_LIMIT_RESETS.fiveHour * 1000,
      windowMinutes: 300,
      state: "warning",
    });
    assert.deepEqual(windows.find((w) => w.name === "seven-day"), {
      name: "seven-day",
      used: 0.2,
      resetsAtMs: RATE_LIMIT_RESETS.sevenDay * 1000,
      windowMinutes: 10080,
      state: "ok",
    });
    // Carried on a WORKING status, before the task's answer.
    const carrier = mine.find((e) => frameOf(e)?.frame === "quota")!;
    assert.equal(stateOf(carrier), "TASK_STATE_WORKING");

    await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
    const [session] = await traceOf(cap, id, "harness_session");
    assert.equal(session.auth, "subscription");
    const [call] = await traceOf(cap, id, "tool_call");
    assert.equal(call.tool_name, "request-input");
    assert.equal(call.status, "ok");
  } finally {
    await pc.close();
    await endpoint.close();
  }
});
