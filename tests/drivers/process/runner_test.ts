/**
 * The generic harness runner with a stand-in harness (fixtures/fake_harness.sh) that speaks
 * Claude Code's stream-json: a normal run, a death mid-turn, a hang (inactivity), an interrupt
 * ignored (kill after grace) and obeyed, the turn budget, a missing binary, sessions.
 */
import assert from "node:assert/strict";
import { createHarnessDriver, type HarnessDriver } from "../../../src/drivers/process/mod.ts";
import type { InferenceConfig } from "../../../src/manifest/types.ts";
import { alive, collect, request, resultOf, traces } from "./helpers.ts";

const FAKE = new URL("./fixtures/fake_harness.sh", import.meta.url).pathname;

async function driver(
  mode: string,
  over: Partial<InferenceConfig> = {},
  limits = {},
): Promise<{ d: HarnessDriver; dir: string }> {
  const dir = await Deno.makeTempDir();
  const cfg: InferenceConfig = {
    transport: "process",
    driver: "claude-code",
    command: FAKE,
    env: [`FAKE_MODE=${mode}`],
    maxTurns: 10,
    maxTokens: 1000,
    systemPromptSource: "none",
    idleTimeoutSecs: 120,
    ...over,
  };
  const d = createHarnessDriver(cfg, {
    workdir: dir,
    baseDir: dir,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir },
    limits: { inactivityMs: 2_000, interruptGraceMs: 400, exitGraceMs: 1_500, ...limits },
  });
  return { d, dir };
}

Deno.test("runner: a run streams text, owes one final, completes, reads the suggestion after the result", async () => {
  const { d, dir } = await driver("ok");
  try {
    const parts = await collect(d, request());
    const types = parts.filter((p) => p.type !== "trace").map((p) => p.type);
    assert.deepEqual(types, [
      "turn-start",
      "text-delta",
      "text-delta",
      "text-final",
      "usage",
      "turn-end",
      "suggested-prompt",
      "result",
    ]);
    const r = resultOf(parts);
    assert.deepEqual(r.outcome, {
      status: "completed",
      text: "Hello",
      lastSegmentStreamedText: true,
    });
    assert.equal(r.turns, 1);
    const start = traces(parts, "harness_start")[0];
    assert.equal(start.version_tested, true);
    assert.equal(start.session_mode, "new");
    assert.ok(!JSON.stringify(start).includes("FAKE_MODE=ok"), "no argument or env values");
    const exit = traces(parts, "harness_exit")[0];
    assert.equal(exit.cause, "terminal");
    assert.equal(exit.killed, false);
    assert.equal(exit.code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a harness that dies mid-turn is a classified failure with its stderr", async () => {
  const { d, dir } = await driver("die");
  try {
    const parts = await collect(d, request());
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "E-RUN-033");
    assert.equal(r.outcome.kind, "harness-error");
    assert.match(
      r.outcome.message,
      /^the harness turn failed \(harness-error\): the harness exited with code 3/,
    );
    assert.match(r.outcome.message, /boom: lost my mind/);
    assert.equal(traces(parts, "harness_failed")[0].kind, "harness-error");
    assert.equal(traces(parts, "harness_exit")[0].cause, "eof");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: exit 0 without a result is a harness error", async () => {
  const { d, dir } = await driver("no-result");
  try {
    const r = resultOf(await collect(d, request()));
    assert.equal(r.outcome.status, "failed");
    assert.match((r.outcome as { message: string }).message, /exited without a result/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a silent harness is killed at the inactivity limit (E-RUN-035)", async () => {
  const { d, dir } = await driver("hang", {}, { inactivityMs: 500 });
  try {
    const parts = await collect(d, request(), { timeoutMs: 10_000 });
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "E-RUN-035");
    assert.match(
      r.outcome.message,
      /neither a line of output nor a tool call for 1s and was killed/,
    );
    const exit = traces(parts, "harness_exit")[0];
    assert.equal(exit.cause, "inactivity");
    assert.equal(exit.killed, true);
    const pid = traces(parts, "harness_start")[0].pid as number;
    assert.equal(alive(pid), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a harness ignoring the interrupt is killed after the grace → canceled, killed", async () => {
  const { d, dir } = await driver("ignore-interrupt");
  const ac = new AbortController();
  try {
    const parts = await collect(d, request(), {
      signal: ac.signal,
      timeoutMs: 10_000,
      onPart: (p) => {
        if (p.type === "text-delta") ac.abort();
      },
    });
    const r = resultOf(parts);
    assert.deepEqual(r.outcome, { status: "canceled", killed: true, started: true });
    const int = traces(parts, "harness_interrupt")[0];
    assert.deepEqual(int, { method: "stdin-message", delivered: true, grace_ms: 400 });
    const exit = traces(parts, "harness_exit")[0];
    assert.equal(exit.cause, "canceled");
    assert.equal(exit.killed, true);
    assert.equal(alive(traces(parts, "harness_start")[0].pid as number), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: an obeyed interrupt → canceled, not killed", async () => {
  const { d, dir } = await driver("obey-interrupt", {}, { interruptGraceMs: 5_000 });
  const ac = new AbortController();
  try {
    const parts = await collect(d, request(), {
      signal: ac.signal,
      onPart: (p) => {
        if (p.type === "text-delta") ac.abort();
      },
    });
    const r = resultOf(parts);
    assert.deepEqual(r.outcome, { status: "canceled", killed: false, started: true });
    assert.equal(traces(parts, "harness_exit")[0].killed, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a task canceled before the spawn starts nothing", async () => {
  const { d, dir } = await driver("ok");
  const ac = new AbortController();
  ac.abort();
  try {
    const parts = await collect(d, request(), { signal: ac.signal });
    assert.equal(parts.length, 1);
    assert.deepEqual(resultOf(parts).outcome, {
      status: "canceled",
      killed: false,
      started: false,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: turns count model actions; the budget stops the harness at once", async () => {
  const { d, dir } = await driver("turns");
  try {
    const all = await collect(d, request());
    assert.equal(resultOf(all).turns, 3);
    assert.deepEqual(
      all.filter((p) => p.type === "turn-start").map((p) => (p as { turn: number }).turn),
      [1, 2, 3],
    );
    const ends = all.flatMap((p) =>
      p.type === "turn-end" ? [[p.turn, p.decision, p.toolName]] : []
    );
    assert.deepEqual(ends, [[1, "tool_call", "echo"], [2, "tool_call", "echo"], [
      3,
      "end_turn",
      null,
    ]]);

    // Two turns used by an earlier attempt, a budget of 4: the third action here is one too many.
    const parts = await collect(d, request({ turnsUsed: 2, maxTurns: 4 }));
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "max_turns");
    assert.equal(r.outcome.kind, "max-turns");
    assert.equal(r.outcome.origin, "runtime");
    assert.match(r.outcome.message, /inference\.max_turns is 4/);
    assert.equal(r.turns, 2);
    assert.equal(traces(parts, "harness_exit")[0].cause, "max_turns");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a missing binary is E-RUN-006 naming where it came from", async () => {
  const { d, dir } = await driver("ok", { command: "no-such-harness-binary" });
  try {
    const parts = await collect(d, request());
    const r = resultOf(parts);
    assert.equal(r.outcome.status, "failed");
    if (r.outcome.status !== "failed") return;
    assert.equal(r.outcome.code, "E-RUN-006");
    assert.equal(
      r.outcome.message,
      "harness binary 'no-such-harness-binary', named by inference.command, was not found on this host",
    );
    assert.equal(traces(parts, "harness_start").length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: a child left behind after the result does not hold the run open", async () => {
  const { d, dir } = await driver("stray-child", {}, { exitGraceMs: 300 });
  try {
    // The stray child holds the harness's stdout for 30 s: a run that waited for it would not
    // end within the collect's 20 s bound.
    const r = resultOf(await collect(d, request(), { timeoutMs: 20_000 }));
    assert.equal(r.outcome.status, "completed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runner: threaded contexts remember the session; a reopened attempt resumes its own; forget drops it", async () => {
  const { d, dir } = await driver("ok");
  try {
    const first = await collect(d, request({ resume: "context", conversation: "threaded" }));
    assert.equal(traces(first, "harness_start")[0].session_mode, "new");
    const sid = resultOf(first).sessionId;
    assert.equal(sid, "11111111-2222-4333-8444-555555555555", "the id the harness reported wins");
    const second = await collect(
      d,
      request({
        task: { id: "tsk_b", contextId: "ctx_a", text: "again" },
        resume: "context",
        conversation: "threaded",
      }),
    );
    assert.equal(traces(second, "harness_start")[0].session_mode, "resume");
    assert.equal(traces(second, "harness_start")[0].harness_session_id, sid);
    const reopened = await collect(
      d,
      request({ task: { id: "tsk_b", contextId: "ctx_zz", text: "x" }, resume: "task" }),
    );
    assert.equal(traces(reopened, "harness_start")[0].session_mode, "resume");
    assert.equal(await d.forgetSession("ctx_a"), sid);
    assert.equal(await d.forgetSession("ctx_a"), null);
    const third = await collect(d, request({ resume: "context", conversation: "threaded" }));
    assert.equal(traces(third, "harness_start")[0].session_mode, "new");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
