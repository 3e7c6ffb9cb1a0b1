import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  createScriptedDriver,
  DEFAULT_SCRIPT,
  loadScript,
  parseScript,
  type Script,
  type Sleep,
  splitChunks,
} from "../../src/drivers/scripted.ts";
import type { DriverPart, TaskRef, TurnRequest } from "../../src/drivers/types.ts";
import { abortableSleep } from "../../src/abortable_sleep.ts";
import { MurError } from "../../src/errors.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

function task(text: string, over: Partial<TaskRef> = {}): TaskRef {
  return { id: `task_${crypto.randomUUID()}`, contextId: "ctx_1", text, ...over };
}

function request(t: TaskRef, turn = 1, over: Partial<TurnRequest> = {}): TurnRequest {
  return {
    messages: [{ role: "user", content: t.text }],
    tools: [],
    maxTokens: 8192,
    task: t,
    turn,
    ...over,
  };
}

async function collect(
  it: AsyncIterable<DriverPart>,
  onPart?: (p: DriverPart, i: number) => void,
): Promise<DriverPart[]> {
  const out: DriverPart[] = [];
  for await (const p of it) {
    onPart?.(p, out.length);
    out.push(p);
  }
  return out;
}

function texts(parts: DriverPart[]): string[] {
  return parts.flatMap((p) => p.type === "text-delta" ? [p.text] : []);
}

function last(parts: DriverPart[]): DriverPart {
  return parts[parts.length - 1];
}

/** A sleep that returns at once and records what it was asked to wait. */
function recordingSleep(log: string[]): Sleep {
  return (ms) => {
    log.push(`sleep ${ms}`);
    return Promise.resolve();
  };
}

const never = new AbortController().signal;

/** Fails the test rather than hanging when a stream does not end. */
async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function expectMurError(e: unknown, code: string, includes: string[]): true {
  assert.ok(e instanceof MurError, `expected a MurError, got ${e}`);
  assert.equal(e.code, code, e.message);
  for (const s of includes) assert.ok(e.message.includes(s), `'${e.message}' lacks '${s}'`);
  return true;
}

// ---- the built-in script

Deno.test("DEFAULT_SCRIPT answers any task with one short text and ends the turn", async () => {
  const d = createScriptedDriver(DEFAULT_SCRIPT);
  assert.equal(d.name, "scripted");
  assert.equal(d.model, "scripted");
  const t = task("anything at all");
  const parts = await collect(d.turn(request(t), never));
  assert.deepEqual(texts(parts), ["Hello from the scripted model."]);
  assert.deepEqual(last(parts), { type: "finish", stopReason: "end_turn", maxTokensCut: false });
  // The second turn of the same task has nothing left: an empty answer.
  const again = await collect(d.turn(request(t, 2), never));
  assert.deepEqual(texts(again), []);
  assert.deepEqual(last(again), { type: "finish", stopReason: "end_turn", maxTokensCut: false });
});

// ---- step kinds

Deno.test("text, thinking and usage steps become their parts in order", async () => {
  const d = createScriptedDriver({
    tasks: [{
      turns: [{
        steps: [
          { thinking: "hmm" },
          { text: "a" },
          { text: "b" },
          { usage: { input_tokens: 7, output_tokens: 3 } },
        ],
      }],
    }],
  });
  const parts = await collect(d.turn(request(task("x")), never));
  assert.deepEqual(parts, [
    { type: "reasoning-delta", text: "hmm" },
    { type: "text-delta", text: "a" },
    { type: "text-delta", text: "b" },
    { type: "usage", inputTokens: 7, outputTokens: 3 },
    { type: "finish", stopReason: "end_turn", maxTokensCut: false },
  ]);
});

Deno.test("a tool_call streams start, its input JSON in `chunks` pieces, then the call", async () => {
  const input = { city: "Paris", days: [1, 2, 3], note: "a longer value to split" };
  const d = createScriptedDriver({
    tasks: [{
      turns: [{ steps: [{ tool_call: { id: "toolu_9", name: "weather", input, chunks: 5 } }] }],
    }],
  });
  const parts = await collect(d.turn(request(task("x")), never));
  assert.deepEqual(parts[0], { type: "tool-input-start", id: "toolu_9", toolName: "weather" });
  const deltas = parts.filter((p) => p.type === "tool-input-delta");
  assert.equal(deltas.length, 5);
  for (const p of deltas) assert.equal(p.id, "toolu_9");
  assert.equal(deltas.map((p) => p.delta).join(""), JSON.stringify(input));
  assert.deepEqual(parts[6], {
    type: "tool-call",
    call: { id: "toolu_9", name: "weather", input },
  });
  assert.equal(parts[7].type, "usage");
  assert.deepEqual(parts[8], { type: "finish", stopReason: "tool_use", maxTokensCut: false });
  assert.equal(parts.length, 9);
});

Deno.test("a tool_call without chunks, id or input sends one delta `{}` and a default id", async () => {
  const d = createScriptedDriver({
    tasks: [{
      turns: [{ steps: [{ text: "x" }] }, {
        steps: [{ tool_call: { name: "ls" } }, { tool_call: { name: "pwd" } }],
      }],
    }],
  });
  const t = task("x");
  await collect(d.turn(request(t), never));
  const parts = await collect(d.turn(request(t, 2), never));
  const calls = parts.flatMap((p) => p.type === "tool-call" ? [p.call] : []);
  assert.deepEqual(calls, [
    { id: "toolu_scripted_2_1", name: "ls", input: {} },
    { id: "toolu_scripted_2_2", name: "pwd", input: {} },
  ]);
  const deltas = parts.filter((p) => p.type === "tool-input-delta");
  assert.deepEqual(deltas, [
    { type: "tool-input-delta", id: "toolu_scripted_2_1", delta: "{}" },
    { type: "tool-input-delta", id: "toolu_scripted_2_2", delta: "{}" },
  ]);
});

Deno.test("a consumer mutating a call's input does not change the next play", async () => {
  const script: Script = {
    tasks: [{ turns: [{ steps: [{ tool_call: { id: "t", name: "n", input: { a: 1 } } }] }] }],
  };
  const d = createScriptedDriver(script);
  for (let i = 0; i < 2; i++) {
    const parts = await collect(d.turn(request(task("x")), never));
    const call = parts.find((p) => p.type === "tool-call");
    assert.ok(call?.type === "tool-call");
    assert.deepEqual(call.call.input, { a: 1 });
    call.call.input.a = 99;
  }
});

Deno.test("splitChunks never splits a code point and never sends an empty piece", () => {
  assert.deepEqual(splitChunks("{}", 4), ["{", "}"]);
  assert.deepEqual(splitChunks('"é😀x"', 5), ['"', "é", "😀", "x", '"']);
  assert.deepEqual(splitChunks("abcdefg", 3), ["abc", "de", "fg"]);
  assert.deepEqual(splitChunks("abc", 1), ["abc"]);
});

// ---- matching

const MATCHING: Script = {
  tasks: [
    { match: "^weather", turns: [{ steps: [{ text: "weather-1" }] }] },
    { match: "weather", turns: [{ steps: [{ text: "weather-2" }] }] },
    { match_message_id: "^probe-", turns: [{ steps: [{ text: "probed" }] }] },
    { match: "both", match_message_id: "^m-", turns: [{ steps: [{ text: "both" }] }] },
    { turns: [{ steps: [{ text: "fallback" }] }] },
    { match: "unreachable", turns: [{ steps: [{ text: "after fallback" }] }] },
  ],
};

async function answer(script: Script, t: TaskRef): Promise<string[]> {
  return texts(await collect(createScriptedDriver(script).turn(request(t), never)));
}

Deno.test("match is a regex on the task text; the first matching entry wins", async () => {
  assert.deepEqual(await answer(MATCHING, task("weather in Paris")), ["weather-1"]);
  assert.deepEqual(await answer(MATCHING, task("what weather in Paris")), ["weather-2"]);
});

Deno.test("match_message_id is a regex on the message id that started the task", async () => {
  assert.deepEqual(await answer(MATCHING, task("hi", { messageId: "probe-17" })), ["probed"]);
  assert.deepEqual(await answer(MATCHING, task("hi", { messageId: "x-probe-17" })), ["fallback"]);
  // A task.md launch has no message id: it never matches a message-id entry.
  assert.deepEqual(await answer(MATCHING, task("hi")), ["fallback"]);
});

Deno.test("an entry with match and match_message_id needs both to match", async () => {
  assert.deepEqual(await answer(MATCHING, task("both", { messageId: "m-1" })), ["both"]);
  assert.deepEqual(await answer(MATCHING, task("both", { messageId: "z-1" })), ["fallback"]);
  assert.deepEqual(await answer(MATCHING, task("neither", { messageId: "m-1" })), ["fallback"]);
});

Deno.test("an entry without match keys is a fallback; entries after it are never reached", async () => {
  assert.deepEqual(await answer(MATCHING, task("unreachable")), ["fallback"]);
});

Deno.test("no matching entry: the model ends with an empty answer", async () => {
  const script: Script = { tasks: [{ match: "^only$", turns: [{ steps: [{ text: "x" }] }] }] };
  const t = task("something else");
  const parts = await collect(createScriptedDriver(script).turn(request(t), never));
  assert.deepEqual(texts(parts), []);
  assert.equal(parts.length, 2);
  assert.equal(parts[0].type, "usage");
  assert.deepEqual(parts[1], { type: "finish", stopReason: "end_turn", maxTokensCut: false });
  // An empty script behaves the same.
  const empty = await collect(createScriptedDriver({ tasks: [] }).turn(request(t), never));
  assert.deepEqual(last(empty), { type: "finish", stopReason: "end_turn", maxTokensCut: false });
});

// ---- turns and the per-task cursor

Deno.test("turns play in order, one per call, then run out into empty answers", async () => {
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "one" }] }, { steps: [{ text: "two" }] }] }],
  });
  const t = task("x");
  const seen: string[][] = [];
  for (let i = 1; i <= 4; i++) seen.push(texts(await collect(d.turn(request(t, i), never))));
  assert.deepEqual(seen, [["one"], ["two"], [], []]);
});

Deno.test("each task has its own cursor; a reopened attempt continues where the task stopped", async () => {
  const d = createScriptedDriver({
    tasks: [{
      turns: [{ steps: [{ text: "one" }] }, { steps: [{ text: "two" }] }, {
        steps: [{ text: "three" }],
      }],
    }],
  });
  const a = task("a");
  const b = task("b");
  assert.deepEqual(texts(await collect(d.turn(request(a, 1), never))), ["one"]);
  assert.deepEqual(texts(await collect(d.turn(request(b, 1), never))), ["one"]);
  // Task a ends, is reopened (same task id, a new attempt): the next unplayed turn plays.
  assert.deepEqual(texts(await collect(d.turn(request(a, 2), never))), ["two"]);
  assert.deepEqual(texts(await collect(d.turn(request(a, 3), never))), ["three"]);
  assert.deepEqual(texts(await collect(d.turn(request(b, 2), never))), ["two"]);
  // A new driver starts every task afresh.
  const fresh = createScriptedDriver({ tasks: [{ turns: [{ steps: [{ text: "one" }] }] }] });
  assert.deepEqual(texts(await collect(fresh.turn(request(a, 4), never))), ["one"]);
});

Deno.test("a cancelled turn counts as played: the next call plays the next turn", async () => {
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "one" }] }, { steps: [{ text: "two" }] }] }],
  });
  const t = task("x");
  const ac = new AbortController();
  ac.abort();
  assert.deepEqual(await collect(d.turn(request(t), ac.signal)), []);
  assert.deepEqual(texts(await collect(d.turn(request(t, 2), never))), ["two"]);
});

// ---- delays and repeats

Deno.test("delay_ms is waited before its step: parts arrive while the turn runs", async () => {
  // The sleep is held open by the test: "late" must not come out before the test lets the
  // 150 ms pass, and "early" must already be out when the sleep starts.
  const slept: number[] = [];
  const gate = Promise.withResolvers<void>();
  const sleepStarted = Promise.withResolvers<void>();
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "early" }, { text: "late", delay_ms: 150 }] }] }],
  }, {
    sleep: (ms) => {
      slept.push(ms);
      sleepStarted.resolve();
      return gate.promise;
    },
  });
  const it = d.turn(request(task("x")), never)[Symbol.asyncIterator]();
  const first = await it.next();
  assert.deepEqual(first.value, { type: "text-delta", text: "early" });
  assert.deepEqual(slept, [], "no sleep before the first part was handed over");
  let lateOut = false;
  const second = it.next().then((r) => {
    lateOut = true;
    return r;
  });
  await bounded(sleepStarted.promise, 5000, "the delay's sleep");
  assert.deepEqual(slept, [150]);
  // The driver is parked on the test's gate: nothing else can resolve `second` meanwhile.
  await Promise.resolve();
  assert.equal(lateOut, false, "late came out before its delay ended");
  gate.resolve();
  assert.deepEqual((await bounded(second, 5000, "the late part")).value, {
    type: "text-delta",
    text: "late",
  });
});

Deno.test("delay_ms alone is a pause step; repeat repeats the delay with each repetition", async () => {
  const log: string[] = [];
  const d = createScriptedDriver({
    tasks: [{
      turns: [{
        steps: [
          { delay_ms: 5, repeat: 2 },
          { text: "t", delay_ms: 3, repeat: 3 },
          { text: "no-delay", repeat: 2 },
        ],
      }],
    }],
  }, { sleep: recordingSleep(log) });
  await collect(d.turn(request(task("x")), never), (p) => {
    if (p.type === "text-delta") log.push(p.text);
  });
  assert.deepEqual(log, [
    "sleep 5",
    "sleep 5",
    "sleep 3",
    "t",
    "sleep 3",
    "t",
    "sleep 3",
    "t",
    "no-delay",
    "no-delay",
  ]);
});

Deno.test("repeat: N writes N parts; repeated tool calls get distinct ids", async () => {
  const d = createScriptedDriver({
    tasks: [{
      turns: [{
        steps: [
          { text: "tick ", repeat: 600 },
          { thinking: "th", repeat: 3 },
          { tool_call: { id: "c", name: "n", input: { i: 1 } }, repeat: 3 },
        ],
      }],
    }],
  });
  const parts = await collect(d.turn(request(task("x")), never));
  assert.equal(texts(parts).length, 600);
  assert.ok(texts(parts).every((s) => s === "tick "));
  assert.equal(parts.filter((p) => p.type === "reasoning-delta").length, 3);
  const ids = parts.flatMap((p) => p.type === "tool-call" ? [p.call.id] : []);
  assert.deepEqual(ids, ["c", "c_2", "c_3"]);
  assert.equal(parts.filter((p) => p.type === "tool-input-start").length, 3);
  assert.deepEqual(last(parts), { type: "finish", stopReason: "tool_use", maxTokensCut: false });
});

Deno.test("a 100 000-part text stream without delays never sleeps", async () => {
  // Fast means no timer per part: the injected sleep counts every wait the driver asks for.
  // (How fast is `deno task bench`'s to say.)
  let sleeps = 0;
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "x", repeat: 100_000 }] }] }],
  }, {
    sleep: () => {
      sleeps++;
      return Promise.resolve();
    },
  });
  let count = 0;
  let finish: DriverPart | undefined;
  await bounded(
    (async () => {
      for await (const p of d.turn(request(task("x")), never)) {
        if (p.type === "text-delta") count++;
        else if (p.type === "finish") finish = p;
      }
    })(),
    60_000,
    "long stream",
  );
  assert.equal(count, 100_000);
  assert.deepEqual(finish, { type: "finish", stopReason: "end_turn", maxTokensCut: false });
  assert.equal(sleeps, 0);
});

// ---- cancel

Deno.test("an abort during delay_ms ends the stream with no further part, without waiting out the delay", async () => {
  // The delay is ten minutes: a stream that ends at all before the bound ended by the abort.
  const d = createScriptedDriver({
    tasks: [{
      turns: [{ steps: [{ text: "before" }, { text: "after", delay_ms: 600_000 }, { text: "x" }] }],
    }],
  });
  const ac = new AbortController();
  let sawBefore!: () => void;
  const before = new Promise<void>((r) => (sawBefore = r));
  const parts = bounded(
    collect(d.turn(request(task("x")), ac.signal), (p) => {
      if (p.type === "text-delta" && p.text === "before") sawBefore();
    }),
    60_000,
    "aborted turn",
  );
  await before;
  ac.abort();
  assert.deepEqual(await parts, [{ type: "text-delta", text: "before" }]);
});

Deno.test("an abort ends the stream even when the injected sleep rejects on abort", async () => {
  const rejecting: Sleep = (_ms, signal) =>
    new Promise((_, reject) => {
      signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
    });
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "a" }, { delay_ms: 1 }, { text: "b" }] }] }],
  }, { sleep: rejecting });
  const ac = new AbortController();
  const parts = await bounded(
    collect(d.turn(request(task("x")), ac.signal), () => queueMicrotask(() => ac.abort())),
    3000,
    "aborted turn",
  );
  assert.deepEqual(parts, [{ type: "text-delta", text: "a" }]);
});

Deno.test("an abort during a long undelayed stream is seen mid-stream", async () => {
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "x", repeat: 1_000_000 }] }] }],
  });
  const ac = new AbortController();
  // The abort comes from a timer, as a cancel over HTTP would: the stream must let it run.
  const timer = setTimeout(() => ac.abort(), 5);
  try {
    const parts = await bounded(
      collect(d.turn(request(task("x")), ac.signal)),
      10_000,
      "aborted stream",
    );
    assert.ok(parts.length > 0 && parts.length < 1_000_000, `${parts.length} parts`);
    assert.ok(parts.every((p) => p.type === "text-delta"), "no finish after an abort");
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("an abort while the consumer holds a part stops before the next part", async () => {
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ text: "a" }, { text: "b" }, { text: "c" }] }] }],
  });
  const ac = new AbortController();
  const parts = await collect(d.turn(request(task("x")), ac.signal), (p) => {
    if (p.type === "text-delta" && p.text === "b") ac.abort();
  });
  assert.deepEqual(texts(parts), ["a", "b"]);
  assert.equal(parts.length, 2);
});

// ---- errors and max_tokens

for (
  const [cause, expected] of [
    [undefined, "driver_error"],
    ["driver_error", "driver_error"],
    ["credential_rejected", "credential_rejected"],
    ["malformed_response", "malformed_response"],
  ] as const
) {
  Deno.test(`an error step (cause ${cause ?? "default"}) ends the turn with a ${expected} error`, async () => {
    const d = createScriptedDriver({
      tasks: [{
        turns: [{
          steps: [
            { text: "partial" },
            cause === undefined ? { error: "boom" } : { error: "boom", error_cause: cause },
            { text: "never" },
          ],
        }, { steps: [{ text: "next turn" }] }],
      }],
    });
    const t = task("x");
    const parts = await collect(d.turn(request(t), never));
    assert.deepEqual(parts, [
      { type: "text-delta", text: "partial" },
      { type: "error", cause: expected, message: "boom" },
    ]);
    // The failed turn is played; a reopened attempt continues with the next.
    assert.deepEqual(texts(await collect(d.turn(request(t, 2), never))), ["next turn"]);
  });
}

Deno.test("max_tokens: true cuts the turn at the output cap", async () => {
  const d = createScriptedDriver({
    tasks: [{
      turns: [
        { max_tokens: true, steps: [{ text: "half an ans" }] },
        { max_tokens: true, steps: [{ tool_call: { id: "c", name: "n" } }] },
        { max_tokens: false, steps: [{ text: "whole" }] },
      ],
    }],
  });
  const t = task("x");
  const one = await collect(d.turn(request(t), never));
  assert.deepEqual(texts(one), ["half an ans"]);
  assert.deepEqual(last(one), { type: "finish", stopReason: "max_tokens", maxTokensCut: true });
  const two = await collect(d.turn(request(t, 2), never));
  assert.deepEqual(last(two), { type: "finish", stopReason: "max_tokens", maxTokensCut: true });
  const three = await collect(d.turn(request(t, 3), never));
  assert.deepEqual(last(three), { type: "finish", stopReason: "end_turn", maxTokensCut: false });
});

// ---- usage

Deno.test("without a usage step the usage is estimated at ceil(chars / 4)", async () => {
  const d = createScriptedDriver({
    tasks: [{ turns: [{ steps: [{ thinking: "abc" }, { text: "defgh" }] }] }],
  });
  const t = task("0123456789");
  const req = request(t, 1, {
    system: "sys", // 3
    messages: [
      { role: "user", content: t.text }, // 10
      { role: "assistant", text: "ok", toolCalls: [{ id: "i", name: "ls", input: { a: 1 } }] }, // 2 + 2 + 7
      {
        role: "tool",
        results: [{ toolCallId: "i", toolName: "ls", content: "12345", isError: false }],
      }, // 5
    ],
  });
  const parts = await collect(d.turn(req, never));
  const usage = parts.find((p) => p.type === "usage");
  // input: 3 + 10 + 11 + 5 = 29 chars → 8; output: 3 + 5 = 8 chars → 2.
  assert.deepEqual(usage, { type: "usage", inputTokens: 8, outputTokens: 2 });
  assert.equal(parts.filter((p) => p.type === "usage").length, 1);
  assert.equal(parts[parts.length - 2], usage, "usage comes just before finish");
});

Deno.test("a usage step replaces the estimate", async () => {
  const d = createScriptedDriver({
    tasks: [{
      turns: [{ steps: [{ text: "hi" }, { usage: { input_tokens: 0, output_tokens: 0 } }] }],
    }],
  });
  const parts = await collect(d.turn(request(task("x")), never));
  assert.deepEqual(parts.filter((p) => p.type === "usage"), [
    { type: "usage", inputTokens: 0, outputTokens: 0 },
  ]);
});

// ---- loading

Deno.test("loadScript: a missing file is E-IO-001 naming the path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/nope.yaml`;
    await assert.rejects(
      loadScript(path),
      (e) => expectMurError(e, "E-IO-001", [`script file not found: ${path}`]),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadScript: a bad step is E-MAN-003 naming the file and the step's path", async () => {
  const path = `${FIXTURES}bad_step.yaml`;
  await assert.rejects(loadScript(path), (e) => {
    expectMurError(e, "E-MAN-003", [`${path}: tasks[0].turns[1].steps[2]: `]);
    assert.equal(
      (e as MurError).message,
      `${path}: tasks[0].turns[1].steps[2]: a step has one action, found text and thinking; ` +
        "split it into steps",
    );
    return true;
  });
});

Deno.test("loadScript: YAML syntax is E-MAN-002 with the file, line and column", async () => {
  const path = `${FIXTURES}bad_syntax.yaml`;
  await assert.rejects(
    loadScript(path),
    (e) => expectMurError(e, "E-MAN-002", [`${path}: YAML syntax error: `, "line 4"]),
  );
});

Deno.test("parseScript: a mis-indented line's YAML error says what the indentation did", () => {
  const text = "tasks:\n  - turns:\n      - steps:\n          - text: hi\n         - text: there\n";
  assert.throws(() => parseScript(text, "s.yaml"), (e) => {
    assert.ok(e instanceof MurError && e.code === "E-MAN-002", String(e));
    assert.match(
      e.hint ?? "",
      /^line 5 starts after 9 spaces and line 4 after 10 spaces: the keys of one section, and the items of one list, must start in the same column; line it up with its neighbours; see the scripted driver's script format/,
    );
    return true;
  });
});

Deno.test("parseScript names the exact key path of each kind of mistake", () => {
  const cases: [string, string][] = [
    ["", "s.yaml: tasks: is required"],
    ["- 1", "s.yaml: (top level): must be a mapping with tasks"],
    ["tasks: {}", "s.yaml: tasks: must be a list of task entries"],
    ["tasks: [{}]", "s.yaml: tasks[0].turns: is required"],
    ["tasks: [{turns: [{}]}]", "s.yaml: tasks[0].turns[0].steps: is required"],
    ["tasks: [{turnz: []}]", "s.yaml: tasks[0]: unknown key 'turnz' (and 1 more problem)"],
    [
      "tasks: [{turns: [], matchh: x}]",
      "s.yaml: tasks[0]: unknown key 'matchh'",
    ],
    [
      "tasks: [{match: '(', turns: []}]",
      "s.yaml: tasks[0].match: is not a valid regular expression",
    ],
    [
      "tasks: [{match_message_id: 3, turns: []}]",
      "s.yaml: tasks[0].match_message_id: must be a string",
    ],
    [
      "tasks: [{turns: [{steps: [{}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0]: a step needs one of",
    ],
    [
      "tasks: [{turns: [{steps: [{text: a, delay: 5}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0]: unknown key 'delay'",
    ],
    [
      "tasks: [{turns: [{steps: [{text: a}, {text: b, repeat: 0}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[1].repeat: must be an integer >= 1",
    ],
    [
      "tasks: [{turns: [{steps: [{delay_ms: -1}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].delay_ms: must be an integer >= 0",
    ],
    [
      "tasks: [{turns: [{steps: [{delay_ms: 1.5}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].delay_ms: must be an integer >= 0",
    ],
    [
      "tasks: [{turns: [{steps: [{text: 5}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].text: must be a string",
    ],
    [
      "tasks: [{turns: [{steps: [{text: a, error_cause: credential_rejected}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].error_cause: goes only beside error",
    ],
    [
      "tasks: [{turns: [{steps: [{error: a, error_cause: nope}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].error_cause: must be one of driver_error, " +
      "credential_rejected, malformed_response",
    ],
    [
      "tasks: [{turns: [{steps: [{tool_call: {id: a, input: {}}}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].tool_call.name: is required",
    ],
    [
      "tasks: [{turns: [{steps: [{tool_call: {name: a, input: [1]}}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].tool_call.input: must be a mapping (an object)",
    ],
    [
      "tasks: [{turns: [{steps: [{tool_call: {name: a, chunks: 0}}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].tool_call.chunks: must be an integer >= 1",
    ],
    [
      "tasks: [{turns: [{steps: [{usage: {input_tokens: 1}}]}]}]",
      "s.yaml: tasks[0].turns[0].steps[0].usage.output_tokens: is required",
    ],
    [
      "tasks: [{turns: [{max_tokens: yes please, steps: []}]}]",
      "s.yaml: tasks[0].turns[0].max_tokens: must be true or false",
    ],
  ];
  for (const [yaml, expected] of cases) {
    assert.throws(
      () => parseScript(yaml, "s.yaml"),
      (e) => {
        assert.ok(e instanceof MurError, `${yaml}: not a MurError: ${e}`);
        assert.equal(e.code, "E-MAN-003", `${yaml}: ${e.message}`);
        assert.ok(
          e.message.startsWith(expected),
          `${yaml}:\n  got      ${e.message}\n  expected ${expected}…`,
        );
        return true;
      },
      yaml,
    );
  }
});

Deno.test("parseScript accepts every key of the format", () => {
  const s = parseScript(
    `tasks:
  - match: a
    match_message_id: b
    turns:
      - max_tokens: true
        steps:
          - {text: t, delay_ms: 0, repeat: 2}
          - {thinking: th}
          - {tool_call: {id: i, name: n, input: {k: [1]}, chunks: 2}}
          - {usage: {input_tokens: 1, output_tokens: 2}}
          - {delay_ms: 3}
          - {error: e, error_cause: malformed_response}
`,
    "ok.yaml",
  );
  assert.equal(s.tasks[0].turns[0].steps.length, 6);
  assert.deepEqual(s.tasks[0].turns[0].steps[2].tool_call, {
    id: "i",
    name: "n",
    input: { k: [1] },
    chunks: 2,
  });
});

// ---- the contract's example script

Deno.test("docs/scripted.md example: weather task thinks, talks, waits, calls a tool, then answers", async () => {
  const script = await loadScript(`${FIXTURES}contract_example.yaml`);
  // One log of the parts and the sleeps, in the order they happened.
  const log: string[] = [];
  const d = createScriptedDriver(script, { sleep: recordingSleep(log) });
  const t = task("What is the weather in Paris?", { messageId: "msg-1" });
  const one = await bounded(
    collect(d.turn(request(t), never), (p) => log.push(p.type)),
    5000,
    "weather turn",
  );
  const input = JSON.stringify({ city: "Paris" });
  assert.deepEqual(one.slice(0, 3), [
    { type: "reasoning-delta", text: "The user wants the weather." },
    { type: "text-delta", text: "Let me check. " },
    { type: "tool-input-start", id: "toolu_01", toolName: "weather" },
  ]);
  const deltas = one.slice(3, 7);
  assert.ok(deltas.every((p) => p.type === "tool-input-delta" && p.id === "toolu_01"));
  assert.equal(deltas.map((p) => p.type === "tool-input-delta" ? p.delta : "").join(""), input);
  assert.deepEqual(one[7], {
    type: "tool-call",
    call: { id: "toolu_01", name: "weather", input: { city: "Paris" } },
  });
  assert.equal(one[8].type, "usage");
  assert.deepEqual(one[9], { type: "finish", stopReason: "tool_use", maxTokensCut: false });
  assert.equal(one.length, 10);
  // The 50 ms delay is waited after the text and before the tool call starts.
  assert.deepEqual(log.slice(0, 4), [
    "reasoning-delta",
    "text-delta",
    "sleep 50",
    "tool-input-start",
  ]);

  const two = await collect(d.turn(request(t, 2), never));
  assert.deepEqual(texts(two), ["It is sunny in Paris."]);
  assert.deepEqual(last(two), { type: "finish", stopReason: "end_turn", maxTokensCut: false });
  const three = await collect(d.turn(request(t, 3), never));
  assert.deepEqual(texts(three), []);
});

Deno.test("docs/scripted.md example: a probe- message id gets 'probed'", async () => {
  const d = createScriptedDriver(await loadScript(`${FIXTURES}contract_example.yaml`));
  const parts = await collect(d.turn(request(task("anything", { messageId: "probe-1" })), never));
  assert.deepEqual(texts(parts), ["probed"]);
});

Deno.test("docs/scripted.md example: the fallback ticks 600 times, reports usage, then fails", async () => {
  const log: string[] = [];
  const d = createScriptedDriver(await loadScript(`${FIXTURES}contract_example.yaml`), {
    sleep: recordingSleep(log),
  });
  const t = task("something else");
  const one = await collect(d.turn(request(t), never));
  assert.equal(texts(one).length, 600);
  assert.ok(texts(one).every((s) => s === "tick "));
  assert.equal(log.length, 600);
  assert.ok(log.every((l) => l === "sleep 1"));
  assert.deepEqual(one.slice(600), [
    { type: "usage", inputTokens: 120, outputTokens: 600 },
    { type: "finish", stopReason: "end_turn", maxTokensCut: false },
  ]);
  const two = await collect(d.turn(request(t, 2), never));
  assert.deepEqual(two, [{ type: "error", cause: "driver_error", message: "provider overloaded" }]);
});

Deno.test("docs/scripted.md example: the fallback's 1 ms delays go to the real timer", async () => {
  // Every delay reaches the default sleep, the abortable timer (tests/abortable_sleep_test.ts
  // shows it waits on the timer queue); no duration is measured here.
  const waits: number[] = [];
  const d = createScriptedDriver(await loadScript(`${FIXTURES}contract_example.yaml`), {
    sleep: (ms, signal) => {
      waits.push(ms);
      return abortableSleep(ms, signal);
    },
  });
  const parts = await bounded(collect(d.turn(request(task("other")), never)), 20_000, "ticks");
  assert.equal(texts(parts).length, 600);
  assert.equal(waits.length, 600);
  assert.ok(waits.every((ms) => ms === 1));
});
