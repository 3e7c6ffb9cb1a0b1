/**
 * The turn tracker without a process: harness events in, loop-facing parts out, synchronously.
 * A hand clock drives the progress rate; a fake bridge record stands in for the tool server.
 */
import assert from "node:assert/strict";
import type { BridgeCallRecord } from "../../../src/drivers/process/bridge.ts";
import { classifyOutcome } from "../../../src/drivers/process/outcome.ts";
import { TurnTracker } from "../../../src/drivers/process/turn_tracker.ts";
import type {
  HarnessDialect,
  HarnessEvent,
  HarnessPart,
} from "../../../src/drivers/process/types.ts";

function tracker(o: { turnsUsed?: number; maxTurns?: number; sessionId?: string | null } = {}) {
  let now = 1000;
  const records: BridgeCallRecord[] = [];
  const t = new TurnTracker({
    turnsUsed: o.turnsUsed ?? 0,
    maxTurns: o.maxTurns ?? 10,
    now: () => now,
    progressIntervalMs: 250,
    sessionId: o.sessionId ?? null,
    matchCall: (id, name, args) => {
      const i = records.findIndex((r) =>
        r.callId === id || (r.name === name && JSON.stringify(r.args) === JSON.stringify(args))
      );
      return i < 0 ? null : records.splice(i, 1)[0];
    },
  });
  const feed = (...evs: HarnessEvent[]): HarnessPart[] => evs.flatMap((e) => t.handle(e));
  return { t, feed, tick: (ms: number) => (now += ms), records };
}

const types = (parts: HarnessPart[]) => parts.map((p) => p.type);

Deno.test("turn tracker: a segment opens a numbered turn, owes one final, closes on the terminal", () => {
  const { t, feed } = tracker({ turnsUsed: 2 });
  const parts = feed(
    { kind: "thinking-delta", text: "hm" },
    { kind: "thinking", text: "hm (whole block, already streamed)" },
    { kind: "text-delta", text: "Hel" },
    { kind: "text-delta", text: "lo" },
    { kind: "text", text: "Hello" },
    { kind: "turn-end", result: "Hello" },
    { kind: "turn-end", result: "a second terminal is ignored" },
  );
  assert.deepEqual(parts, [
    { type: "turn-start", turn: 3 },
    { type: "reasoning-delta", text: "hm" },
    { type: "text-delta", text: "Hel" },
    { type: "text-delta", text: "lo" },
    { type: "text-final" },
    { type: "turn-end", turn: 3, decision: "end_turn", toolName: null },
  ]);
  assert.equal(t.turns, 1);
  assert.equal(t.lastSegmentText, true);
  assert.equal(t.terminal?.kind, "turn-end");
});

Deno.test("turn tracker: a whole thinking block nothing streamed is reasoning", () => {
  const { feed } = tracker();
  assert.deepEqual(feed({ kind: "thinking", text: "plan" }), [
    { type: "turn-start", turn: 1 },
    { type: "reasoning-delta", text: "plan" },
  ]);
});

Deno.test("turn tracker: tool calls, progress at 250 ms plus the final size, results matched to the bridge", () => {
  const { t, feed, tick, records } = tracker();
  records.push({
    callId: "c1",
    idFromHarness: true,
    name: "sh",
    args: { command: "ls" },
    fenceSource: "tool:sh",
    isError: false,
    durationMs: 42,
    matched: false,
  });
  const parts = feed(
    { kind: "tool-call-started", id: "c1", name: "sh" },
    { kind: "tool-call-started", id: "c1", name: "sh" },
    { kind: "tool-call-progress", id: "c1", inputBytes: 5 },
    { kind: "tool-call-progress", id: "c1", inputBytes: 9 },
  );
  tick(250);
  parts.push(...feed({ kind: "tool-call-progress", id: "c1", inputBytes: 12 }));
  parts.push(...feed({ kind: "tool-call-progress", id: "c1", inputBytes: 20 }));
  parts.push(
    ...feed(
      { kind: "tool-call", id: "c1", name: "sh", input: '{"command":"ls"}' },
      {
        kind: "tool-result",
        id: "c1",
        output: "<untrusted-content source=tool:sh>\na\n</untrusted-content>",
        isError: false,
      },
      { kind: "tool-call", id: "c2", name: "web", input: "{}" },
    ),
  );
  assert.deepEqual(parts, [
    { type: "turn-start", turn: 1 },
    { type: "tool-input-start", id: "c1", toolName: "sh" },
    { type: "tool-input-progress", id: "c1", inputBytes: 5 },
    { type: "tool-input-progress", id: "c1", inputBytes: 12 },
    { type: "tool-input-progress", id: "c1", inputBytes: 20 },
    {
      type: "tool-result",
      toolCallId: "c1",
      toolName: "sh",
      content: "<untrusted-content source=tool:sh>\na\n</untrusted-content>",
      isError: false,
      fenceSource: "tool:sh",
      durationMs: 42,
    },
    { type: "turn-end", turn: 1, decision: "tool_call", toolName: "sh" },
    { type: "turn-start", turn: 2 },
  ]);
  assert.deepEqual(t.openCalls, ["c2"]);
  assert.equal(t.lastSegmentText, false);
});

Deno.test("turn tracker: a result whose report dropped the fence has no fence source; an unknown call is noted", () => {
  const { feed, records } = tracker();
  records.push({
    callId: "bridge_1",
    idFromHarness: false,
    name: "sh",
    args: { command: "ls" },
    fenceSource: "tool:sh",
    isError: false,
    durationMs: 7,
    matched: false,
  });
  const parts = feed(
    {
      kind: "tool-result",
      id: "x9",
      name: "sh",
      input: { command: "ls" },
      output: "a",
      isError: false,
    },
    { kind: "tool-result", id: "y1", output: "?", isError: true },
  );
  const results = parts.filter((p) => p.type === "tool-result");
  assert.deepEqual(results.map((p) => [p.toolName, p.fenceSource, p.durationMs]), [
    ["sh", null, 7],
    ["unknown", null, null],
  ]);
  assert.deepEqual(
    parts.filter((p) => p.type === "trace").map((p) =>
      p.eventType === "harness_note" ? p.fields.text : p.eventType
    ),
    ["a tool result with no matching call: y1"],
  );
});

Deno.test("turn tracker: the turn budget stops the run at the action that would exceed it", () => {
  const { t, feed } = tracker({ turnsUsed: 9, maxTurns: 10 });
  const parts = feed(
    { kind: "tool-call", id: "a", name: "sh", input: "{}" },
    { kind: "tool-result", id: "a", output: "ok", isError: false },
  );
  assert.equal(t.stopped, null);
  assert.deepEqual(types(parts), ["turn-start", "tool-result", "turn-end"]);
  const more = feed({ kind: "text", text: "x" });
  assert.deepEqual(types(more), ["turn-start"]);
  assert.deepEqual(t.stopped, {
    status: "failed",
    code: "max_turns",
    kind: "max-turns",
    origin: "runtime",
    message: "max_turns exceeded: the harness began turn 11 and inference.max_turns is 10",
  });
});

Deno.test("turn tracker: sessions to remember, the api-key warning once, no suggestion after an interrupt", () => {
  const { t, feed } = tracker({ sessionId: "planned" });
  const parts = feed(
    { kind: "session-started", id: "s1", auth: "api-key" },
    { kind: "session-started", id: "s1", auth: "api-key" },
  );
  assert.deepEqual(
    parts.filter((p) => p.type === "trace").map((p) => p.eventType),
    ["harness_session", "harness_warning", "harness_session"],
  );
  assert.equal(t.takeRemember(), "s1");
  assert.equal(t.takeRemember(), null);
  t.rememberPlannedAtEnd();
  assert.equal(t.takeRemember(), null, "a session the harness named is not replaced");

  const quiet = tracker({ sessionId: "planned" });
  quiet.feed({ kind: "turn-end", result: "" });
  assert.equal(quiet.t.takeRemember(), "planned");
  quiet.t.rememberPlannedAtEnd();
  assert.equal(quiet.t.takeRemember(), null, "remembered once");

  assert.deepEqual(types(feed({ kind: "suggested-prompt", text: "next?" })), ["suggested-prompt"]);
  t.interrupted = true;
  assert.deepEqual(feed({ kind: "suggested-prompt", text: "next?" }), []);
});

Deno.test("outcome: terminal events, runtime stops, interrupts and a lost session", () => {
  const dialect = {
    classifyExit: (e: { code: number | null }) =>
      e.code === 0
        ? { kind: "turn-end", result: "from exit" }
        : { kind: "turn-failed", failureKind: "harness-error", message: "exit 2" },
  } as unknown as HarnessDialect;
  const base = {
    stopped: null,
    interrupted: false,
    killedOnCancel: false,
    terminal: null,
    exit: { code: 0, signal: null, stderrTail: "" },
    resumedSilently: false,
    sessionId: "s",
    lastSegmentText: true,
  };
  assert.deepEqual(classifyOutcome(dialect, base), {
    status: "completed",
    text: "from exit",
    lastSegmentStreamedText: true,
  });
  assert.deepEqual(classifyOutcome(dialect, { ...base, interrupted: true, killedOnCancel: true }), {
    status: "canceled",
    killed: true,
    started: true,
  });
  const failedExit = { ...base, exit: { code: 2, signal: null, stderrTail: "" } };
  assert.deepEqual(classifyOutcome(dialect, failedExit), {
    status: "failed",
    code: "E-RUN-033",
    kind: "harness-error",
    origin: "harness",
    message: "the harness turn failed (harness-error): exit 2",
  });
  assert.equal(
    (classifyOutcome(dialect, { ...failedExit, resumedSilently: true }) as { code: string }).code,
    "E-RUN-036",
  );
  assert.deepEqual(
    classifyOutcome(dialect, {
      ...base,
      terminal: { kind: "turn-failed", failureKind: "canceled", message: "SIGINT" },
    }),
    {
      status: "failed",
      code: "E-RUN-033",
      kind: "canceled",
      origin: "harness",
      message: "the harness turn failed (canceled): SIGINT",
    },
  );
});
