/**
 * harness_attempt.ts's mapping from a harness's parts to events, trace lines and the attempt's
 * end, on the paths the real CLIs cannot be made to take on demand: a harness killed on cancel,
 * the runtime's max_turns stop, a lost session, a request-input timeout, hook artifacts of a
 * tool-calling turn, a suggestion on a canceled task. The harness here is a test double that
 * yields a fixed list of parts (the real CLIs are in tests/process_e2e/ and
 * tests/drivers/process/).
 */
import assert from "node:assert/strict";
import type {
  AttemptOutcome,
  AttemptRequest,
  HarnessDriver,
  HarnessPart,
} from "../../src/drivers/harness.ts";
import type { ToolCall } from "../../src/drivers/types.ts";
import type { ArtifactFrame } from "../../src/events/frames.ts";
import { EventLog } from "../../src/events/log.ts";
import { IdSource } from "../../src/ids.ts";
import type { Manifest } from "../../src/manifest/types.ts";
import { processManifest } from "../helpers/process_manifest.ts";
import { HarnessAttempt, KILLED_ON_CANCEL } from "../../src/session/harness_attempt.ts";
import { type InferenceEvent, NO_HOOKS } from "../../src/session/hooks_api.ts";
import { Registry } from "../../src/session/registry.ts";
import { type LoopDeps, TaskCounters, type TaskRun } from "../../src/session/task_run.ts";
import { TraceWriter } from "../../src/trace_writer.ts";
import type { HarnessTraceFields } from "../../src/trace_events.ts";
import type { ToolResult } from "../../src/tools/types.ts";

/** The tool pipeline as the harness's bridge calls it: a call of a 1-based turn. */
type LoopDispatch = (
  call: ToolCall,
  turn: number,
) => Promise<{ result: ToolResult; inputTimedOut: boolean }>;

const STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1";

function manifest(): Manifest {
  return processManifest("/x", { conversation: "threaded" });
}

/** A harness that yields `parts` (the last a result), optionally calling the tool dispatch. */
function fakeHarness(
  parts: (req: AttemptRequest) => AsyncIterable<HarnessPart>,
  forgotten: string[] = [],
): HarnessDriver & { requests: AttemptRequest[] } {
  const requests: AttemptRequest[] = [];
  return {
    kind: "harness",
    name: "claude-code",
    model: "",
    streamsText: true,
    requests,
    attempt(req) {
      requests.push(req);
      return parts(req);
    },
    forgetSession(contextId) {
      forgotten.push(contextId);
      return Promise.resolve("sess-old");
    },
    close: () => Promise.resolve(),
  };
}

function result(outcome: AttemptOutcome, turns = 1): HarnessPart {
  return { type: "result", outcome, turns, sessionId: "sess-1" };
}

async function rig(
  driver: HarnessDriver,
  opts: {
    forget?: boolean;
    reopenCount?: number;
    dispatch?: LoopDispatch;
    inference?: (ev: InferenceEvent) => ArtifactFrame[];
  } = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "mur-ha-" });
  const log = new EventLog();
  const registry = new Registry(log);
  const trace = new TraceWriter(`${dir}/trace.jsonl`, "ses_t");
  const task = registry.create({
    text: "do it",
    origin: "user",
    source: "a2a",
    trusted: true,
    forgetSession: opts.forget,
  });
  registry.status(task, "TASK_STATE_WORKING");
  const counters = new TaskCounters();
  const hookFrames: ArtifactFrame[] = [];
  const deps: LoopDeps = {
    manifest: manifest(),
    registry,
    trace,
    sessionEventId: () => "evt_session",
    tools: { specs: () => [], dispatch: () => Promise.reject(new Error("no tools")) },
    hooks: {
      ...NO_HOOKS,
      inference: (ev) => Promise.resolve(opts.inference?.(ev) ?? []),
    },
    workdir: {
      root: dir,
      session: dir,
      trace: `${dir}/trace.jsonl`,
      resultFile: `${dir}/out/result.txt`,
      logs: `${dir}/logs`,
      bootstrapLog: `${dir}/logs/bootstrap.log`,
    },
    histories: new Map(),
    warn: () => {},
    clock: Date.now,
    ids: new IdSource(),
  };
  const dispatch = opts.dispatch ?? (() => Promise.reject(new Error("no tools")));
  const pipeline = {
    run: async (_run: TaskRun, call: ToolCall, turn: number) => {
      const out = await dispatch(call, turn);
      return {
        message: {
          toolCallId: call.id,
          toolName: call.name,
          content: out.result.content,
          isError: out.result.isError,
        },
        ...out,
      };
    },
  };
  const attempt = new HarnessAttempt(deps, driver, pipeline, []);
  const taskRun: TaskRun = {
    task,
    messages: [{ role: "user", content: "do it" }],
    counters,
    taskEvt: "evt_task",
    reopenCount: opts.reopenCount ?? 0,
    hookFrames,
  };
  const run = () => attempt.run(taskRun);
  return {
    task,
    counters,
    hookFrames,
    run,
    /** The activated form of every event written, in order. */
    events: () =>
      log.replay(0).entries.map((e) => JSON.parse(new TextDecoder().decode(e.activated))),
    frames: () =>
      log.replay(0).entries.map((e) => JSON.parse(new TextDecoder().decode(e.activated)))
        .map((r) => r.statusUpdate?.metadata?.[STREAM_URI])
        .filter((f) => f && typeof f.frame === "string"),
    trace: async () => {
      trace.close();
      const text = await Deno.readTextFile(`${dir}/trace.jsonl`);
      await Deno.remove(dir, { recursive: true });
      return text.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    },
  };
}

async function* list(parts: HarnessPart[]): AsyncIterable<HarnessPart> {
  for (const p of parts) yield await Promise.resolve(p);
}

Deno.test("harness attempt: parts become statuses, frames, trace lines, counters and the end", async () => {
  const driver = fakeHarness(() =>
    list([
      // A fake harness: only the line's type matters here.
      {
        type: "trace",
        eventType: "harness_start",
        fields: { pid: 1 } as HarnessTraceFields["harness_start"],
      },
      { type: "turn-start", turn: 1 },
      { type: "reasoning-delta", text: "hmm" },
      { type: "text-delta", text: "" },
      { type: "text-delta", text: "Hi" },
      { type: "text-final" },
      { type: "tool-input-start", id: "t1", toolName: "echo" },
      { type: "tool-input-progress", id: "t1", inputBytes: 9 },
      {
        type: "tool-result",
        toolCallId: "t1",
        toolName: "echo",
        content: "<untrusted-content source=tool:echo>\nx\n</untrusted-content>",
        isError: false,
        fenceSource: "tool:echo",
        durationMs: 5,
      },
      { type: "turn-end", turn: 1, decision: "tool_call", toolName: "echo" },
      { type: "turn-start", turn: 2 },
      { type: "turn-end", turn: 2, decision: "end_turn", toolName: null },
      { type: "usage", inputTokens: 30, outputTokens: 7 },
      { type: "quota", windows: [{ name: "five-hour", used: 0.5 }] },
      { type: "suggested-prompt", text: "Run the tests" },
      result({ status: "completed", text: "Done.", lastSegmentStreamedText: false }, 2),
    ])
  );
  const hookArt = (n: number): ArtifactFrame => ({
    frame: "artifact",
    toolName: `hook-${n}`,
    content: "{}",
    fenceSource: null,
    toolCallId: null,
    isError: false,
    durationMs: null,
    exitCode: null,
    truncated: false,
    attachments: [],
  });
  const r = await rig(driver, { inference: (ev) => [hookArt(Number(ev.turn))] });
  const end = await r.run();
  assert.deepEqual(end, { kind: "completed", reply: "Done.", replyStreamed: false });
  // Only the last (end_turn) turn's hook artifacts are forwarded; the loop writes them.
  assert.deepEqual(r.hookFrames.map((f) => f.toolName), ["hook-1"]);
  const { turns, inputTokens, outputTokens } = r.counters;
  assert.deepEqual({ turns, inputTokens, outputTokens }, {
    turns: 2,
    inputTokens: 30,
    outputTokens: 7,
  });
  const statuses = r.events().filter((e) => !e.statusUpdate?.metadata).map((e) =>
    e.statusUpdate.status.message?.parts[0].text
  );
  assert.deepEqual(statuses, [undefined, "inference turn 1", "inference turn 2"]);
  assert.deepEqual(r.frames(), [
    { frame: "thinking", text: "hmm", final: false },
    { frame: "text", text: "Hi", final: false },
    { frame: "text", text: "", final: true },
    { frame: "tool-call-started", toolCallId: "t1", toolName: "echo" },
    { frame: "tool-call-progress", toolCallId: "t1", inputBytes: 9 },
    {
      frame: "artifact",
      toolName: "echo",
      content: "<untrusted-content source=tool:echo>\nx\n</untrusted-content>",
      fenceSource: "tool:echo",
      toolCallId: "t1",
      isError: false,
      durationMs: 5,
      exitCode: null,
      truncated: false,
      attachments: [],
    },
    { frame: "quota", windows: [{ name: "five-hour", used: 0.5 }] },
    { frame: "suggested-prompt", text: "Run the tests" },
  ]);
  const lines = await r.trace();
  assert.deepEqual(lines.map((l) => l.event_type), ["harness_start", "inference", "inference"]);
  assert.equal(lines[0].task_id, r.task.id);
  assert.equal(lines[0].parent_id, "evt_task");
  assert.deepEqual(lines.slice(1).map((l) => [l.turn, l.decision, l.tool_name, l.stop_reason]), [
    [0, "tool_call", "echo", "tool_use"],
    [1, "end_turn", null, "end_turn"],
  ]);
  const req = driver.requests[0];
  assert.deepEqual([req.resume, req.conversation, req.turnsUsed, req.maxTurns], [
    "context",
    "threaded",
    0,
    10,
  ]);
});

Deno.test("harness attempt: a killed harness on cancel, max_turns, a lost session, a streamed last segment", async () => {
  const cases: [AttemptOutcome, Record<string, unknown>][] = [
    [{ status: "canceled", killed: true, started: true }, {
      kind: "canceled",
      message: KILLED_ON_CANCEL,
    }],
    [{ status: "canceled", killed: false, started: true }, {
      kind: "canceled",
      message: "task canceled",
    }],
    [{
      status: "failed",
      code: "max_turns",
      kind: "max-turns",
      origin: "runtime",
      message: "max_turns exceeded: the harness began turn 11 and inference.max_turns is 10",
    }, {
      kind: "max_turns",
      message: "max_turns exceeded: the harness began turn 11 and inference.max_turns is 10",
      result: "error: max_turns exceeded: the harness began turn 11 and inference.max_turns is 10",
    }],
    [{
      status: "failed",
      code: "E-RUN-036",
      kind: "session-gone",
      origin: "harness",
      message: "the harness no longer has session s",
    }, {
      kind: "failed",
      message: "error[E-RUN-036]: the harness no longer has session s",
      result: "error: error[E-RUN-036]: the harness no longer has session s",
    }],
    [{ status: "completed", text: "ok", lastSegmentStreamedText: true }, {
      kind: "completed",
      reply: "ok",
      replyStreamed: true,
    }],
  ];
  for (const [outcome, want] of cases) {
    const r = await rig(fakeHarness(() => list([result(outcome)])), { reopenCount: 1 });
    assert.deepEqual(await r.run(), want);
    const lines = await r.trace();
    const failed = lines.find((l) => l.event_type === "task_failed");
    if (outcome.status === "failed" && outcome.code !== "max_turns") {
      assert.equal(failed?.error_code, outcome.code);
      assert.equal(failed?.cause, "driver_error");
    } else {
      assert.equal(failed, undefined);
    }
  }
});

Deno.test("harness attempt: a reopened attempt resumes its task's session; forgetSession only on the first", async () => {
  const forgotten: string[] = [];
  const d1 = fakeHarness(
    () => list([result({ status: "completed", text: "", lastSegmentStreamedText: false })]),
    forgotten,
  );
  const first = await rig(d1, { forget: true });
  await first.run();
  assert.deepEqual(forgotten, [first.task.contextId]);
  const lines = await first.trace();
  const f = lines.find((l) => l.event_type === "harness_session_forgotten")!;
  assert.deepEqual([f.context_id, f.harness_session_id], [first.task.contextId, "sess-old"]);

  const d2 = fakeHarness(
    () => list([result({ status: "completed", text: "", lastSegmentStreamedText: false })]),
    forgotten,
  );
  const reopened = await rig(d2, { forget: true, reopenCount: 1 });
  await reopened.run();
  await reopened.trace();
  assert.equal(forgotten.length, 1, "a reopened attempt forgets nothing");
  assert.equal(d2.requests[0].resume, "task");
});

Deno.test("harness attempt: a request-input wait that times out stops the harness and fails input-timeout", async () => {
  let signalSeen: AbortSignal | null = null;
  const driver = fakeHarness(async function* (req) {
    yield { type: "turn-start", turn: 1 };
    const res = await req.dispatch(
      { id: "t1", name: "request-input", input: {} },
      new AbortController().signal,
    );
    assert.equal(res.isError, true);
    yield { type: "turn-end", turn: 1, decision: "tool_call", toolName: "request-input" };
    yield result({ status: "canceled", killed: false, started: true });
  });
  const origAttempt = driver.attempt;
  driver.attempt = (req, signal) => {
    signalSeen = signal;
    return origAttempt(req, signal);
  };
  const timedOut: ToolResult = {
    content: "input-timeout: no reply arrived",
    fenceSource: null,
    isError: true,
    exitCode: null,
    truncated: false,
    durationMs: 10,
    images: [],
  };
  const r = await rig(driver, {
    dispatch: (_call, turn) => {
      assert.equal(turn, 1);
      return Promise.resolve({ result: timedOut, inputTimedOut: true });
    },
  });
  const end = await r.run();
  assert.deepEqual(end, {
    kind: "failed",
    message: "input-timeout",
    result: "error: input-timeout",
  });
  assert.equal(signalSeen!.aborted, true, "the harness was told to stop");
  const lines = await r.trace();
  assert.equal(lines.find((l) => l.event_type === "task_failed")?.cause, "input_timeout");
});

Deno.test("harness attempt: no suggested prompt on a canceled task; a driver that throws still ends the attempt", async () => {
  const r = await rig(fakeHarness(async function* () {
    r.task.abort.abort();
    yield { type: "suggested-prompt", text: "Next?" };
    yield result({ status: "canceled", killed: false, started: true });
  }));
  assert.equal((await r.run()).kind, "canceled");
  assert.deepEqual(r.frames(), []);
  await r.trace();

  const t = await rig(fakeHarness(async function* () {
    yield { type: "turn-start", turn: 1 };
    throw new Error("boom");
  }));
  const end = await t.run();
  assert.equal(end.kind, "failed");
  assert.match(end.message!, /^error\[E-RUN-034\]: the process driver failed: boom$/);
  await t.trace();
});
