/**
 * The lifecycle at the door (docs/running.md, "The door"; docs/hooks.md
 * "Resuming a session"): task_acceptance none / single / queue, queue_depth, after_task exit /
 * sleep, the busy / closing / session-ended / stopped rejections with their exact texts, the
 * deciding task deciding `mur run`'s status and exit code, lanes, threaded conversations.
 */
import assert from "node:assert/strict";
import { writeCapsule } from "../helpers/capsule.ts";
import { collect, streamRequest } from "../helpers/sse.ts";
import { startMur } from "../helpers/mur.ts";
import {
  call,
  capsule,
  ended,
  list,
  message,
  post,
  rpcBody,
  submit,
  traceOf,
  waitTask,
} from "./helpers.ts";
import { inprocCapsule } from "./inproc.ts";
import { until } from "../helpers/until.ts";

const BUSY = "task rejected: capsule is busy";
const CLOSING = "task rejected: the session is closing";
const ENDED = "task rejected: the session ended before this task started";
const STOPPED = "task rejected: the session was stopped before this task started";

/**
 * A task that runs until the test says: its first turn waits in a shell command for a `release`
 * file in the session's workdir (`release(cap)`), however long the test's other steps take.
 */
function gated(then: Record<string, unknown>) {
  const wait = "until [ -e release ]; do sleep 0.05; done";
  return {
    turns: [
      { steps: [{ tool_call: { id: "gate", name: "bash", input: { command: wait } } }] },
      { steps: [then] },
    ],
  };
}

/** Lets every gated task of the capsule go on. */
function release(cap: { ready: { workdir: string } }): Promise<void> {
  return Deno.writeTextFile(`${cap.ready.workdir}/release`, "");
}

/** Gated tasks run a shell command. */
const SHELL = { capabilities: { shell: { allow: ["bash"] } } };

const script = {
  tasks: [
    { match: "^slowfail", ...gated({ error: "scripted failure" }) },
    { match: "^slowok", ...gated({ text: "slow ok" }) },
    // Never ends by itself within a test: canceled, stopped or signalled.
    { match: "^slow", turns: [{ steps: [{ text: "slow", delay_ms: 600_000 }] }] },
    { match: "^fail", turns: [{ steps: [{ error: "scripted failure" }] }] },
    { turns: [{ steps: [{ text: "ok" }] }] },
  ],
};

Deno.test("task_acceptance none: the launch task runs, every message is refused -32004, then the capsule exits", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "none" },
    script,
    args: ["--task", "slowok launch"],
    extra: SHELL,
  });
  try {
    const card = await (await fetch(cap.base + "/.well-known/agent-card.json")).json();
    assert.equal(card.capabilities.streaming, false);
    assert.deepEqual(card.skills, []);
    assert.equal(card.capabilities.extensions[0].params.peerTasks, false);
    const launch = await list(cap.base);
    assert.equal(
      launch.totalSize,
      1,
      "the launch task is listed from the moment of the --json line",
    );
    for (const id of ["n", 4]) {
      const a = await call(cap.base, "SendMessage", message("hello"), { id });
      assert.equal(a.json.id, id);
      assert.equal(a.json.error.code, -32004, a.text);
      assert.equal(
        a.json.error.message,
        "this capsule takes no tasks: its lifecycle.task_acceptance is none",
      );
      assert.equal(a.json.error.data[0].reason, "UNSUPPORTED_OPERATION");
      const s = await call(cap.base, "SendStreamingMessage", message("hello"), { id });
      assert.equal(s.headers.get("content-type"), "application/json");
      assert.equal(s.json.error.code, -32004, s.text);
    }
    assert.equal((await list(cap.base)).totalSize, 1, "nothing was started");
    await release(cap);
    const out = await ended(cap);
    assert.equal(out.code, 0, out.stderr);
  } finally {
    await cap.close();
  }
});

Deno.test("task_acceptance single: one task, the next rejected busy (not kept), then the capsule exits", async () => {
  const cap = await capsule({ lifecycle: { task_acceptance: "single" }, script, extra: SHELL });
  try {
    const first = await submit(cap.base, "slowok one");
    assert.equal(first.status.state, "TASK_STATE_SUBMITTED");
    for (const id of ["b", 2]) {
      const a = await call(
        cap.base,
        "SendMessage",
        message("two", {}, { returnImmediately: true }),
        {
          id,
        },
      );
      const t = a.json.result.task;
      assert.equal(a.json.id, id);
      assert.equal(t.status.state, "TASK_STATE_REJECTED");
      assert.deepEqual(t.status.message.parts, [{ text: BUSY, mediaType: "text/plain" }]);
      assert.equal(t.status.message.messageId, `msg_${t.id}_status`);
      assert.equal(t.status.message.role, "ROLE_AGENT");
      assert.equal(t.status.message.taskId, t.id);
      assert.match(t.status.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal((await call(cap.base, "GetTask", { id: t.id })).json.error.code, -32001);
      // A blocking send is refused at once too.
      const b = await call(cap.base, "SendMessage", message("three"));
      assert.equal(b.json.result.task.status.state, "TASK_STATE_REJECTED");
    }
    assert.equal((await list(cap.base)).totalSize, 1);
    await release(cap);
    const out = await ended(cap);
    assert.equal(out.code, 0, out.stderr);
  } finally {
    await cap.close();
  }
});

/** `mur run` in human mode: the announced port, then the status line at the end. */
async function humanRun(args: string[], send: (base: string) => Promise<void>) {
  const dir = await writeCapsule({
    manifest: { name: "door", version: "0.1.0", lifecycle: { task_acceptance: "single" } },
    script,
  });
  const mur = await startMur({
    args: ["run", "--manifest", dir, ...args],
    env: { MURMUR_HOME: `${dir}/.home`, NO_COLOR: "1" },
    removeOnClose: [dir],
  });
  try {
    await mur.out.find((l) => l.startsWith("session: "), 30_000);
    const port = /murmur: url localhost:(\d+)/.exec(mur.out.text())![1];
    await send(`http://127.0.0.1:${port}`);
    const { code, stdout, stderr } = await mur.end(30_000);
    return { code, stdout, stderr };
  } finally {
    await mur.close();
  }
}

Deno.test("the deciding task decides mur run's status line and exit code (single)", async () => {
  const ok = await humanRun([], async (base) => {
    await call(base, "SendMessage", message("fine"));
  });
  assert.equal(ok.code, 0);
  assert.match(ok.stdout, /\nstatus: ok\n$/);
  const failed = await humanRun([], async (base) => {
    const a = await call(base, "SendMessage", message("fail now"));
    assert.equal(a.json.result.task.status.state, "TASK_STATE_FAILED", a.text);
  });
  assert.equal(failed.code, 1);
  assert.match(failed.stdout, /\nstatus: failed\n$/);
  assert.match(failed.stderr, /error\[E-RUN-040\]/);
  const canceled = await humanRun([], async (base) => {
    const t = await submit(base, "slow one");
    await waitTask(base, t.id, (x) => x.status.state === "TASK_STATE_WORKING");
    await call(base, "CancelTask", { id: t.id });
  });
  assert.equal(canceled.code, 1);
  assert.match(canceled.stdout, /\nstatus: canceled\n$/);
});

Deno.test("queue + exit: tasks run in turn until the queue is empty; the last one decides", async () => {
  for (
    const [first, second, code] of [
      ["slowok a", "fail b", 1],
      ["slowfail a", "fine b", 0],
    ] as const
  ) {
    const cap = await capsule({
      lifecycle: { task_acceptance: "queue", after_task: "exit", queue_depth: 2 },
      script,
      extra: SHELL,
    });
    try {
      const a = await submit(cap.base, first);
      const b = await submit(cap.base, second);
      await release(cap);
      const out = await ended(cap);
      assert.equal(out.code, code, `${first} / ${second}: ${out.stderr}`);
      const starts = (await traceOf(cap)).filter((e) => e.event_type === "task_start");
      assert.deepEqual(starts.map((e) => e.task_id), [a.id, b.id]);
    } finally {
      await cap.close();
    }
  }
});

Deno.test("queue + sleep: stays up between tasks; SIGTERM rejects queued tasks as ended and cancels the running one", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 2 },
    script,
  });
  try {
    const one = await submit(cap.base, "fine");
    await waitTask(cap.base, one.id, (t) => t.status.state === "TASK_STATE_COMPLETED");
    const slow = await submit(cap.base, "slow running");
    await waitTask(cap.base, slow.id, (t) => t.status.state === "TASK_STATE_WORKING");
    const queued = await submit(cap.base, "queued");
    const third = await submit(cap.base, "queued too");
    const busy = await submit(cap.base, "no room");
    assert.equal(busy.status.state, "TASK_STATE_REJECTED");
    assert.equal(busy.status.message?.parts[0].text, BUSY);
    // A blocking caller finds no room either (two queued already): rejected busy at once.
    const blocked = await call(cap.base, "SendMessage", message("blocked", { taskId: undefined }));
    assert.equal(blocked.json.result.task.status.state, "TASK_STATE_REJECTED");
    assert.equal(blocked.json.result.task.status.message?.parts[0].text, BUSY);
    cap.kill("SIGTERM");
    const out = await ended(cap);
    // The running task is canceled, but a sleeping capsule's A2A tasks never decide the status
    // (docs/running.md): status ok, exit 0.
    assert.equal(out.code, 0, out.stderr);
    assert.equal((await traceOf(cap)).at(-1)?.exit_status, "ok");
    const ends = (await traceOf(cap)).filter((e) => e.event_type === "task_end");
    assert.deepEqual(ends.map((e) => [e.task_id, e.exit_status]).at(-1), [slow.id, "canceled"]);
    const rejected = (await traceOf(cap)).filter((e) => e.event_type === "task_rejected");
    assert.deepEqual(
      rejected.map((e) => e.task_id).sort(),
      [queued.id, third.id].sort(),
    );
    for (const e of rejected) {
      assert.equal(e.reason, ENDED);
      assert.equal(e.cause, "session_ended");
    }
  } finally {
    await cap.close();
  }
});

Deno.test("a blocking SendMessage on a queued task answers its rejection when the session ends", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 2 },
    script,
  });
  try {
    const slow = await submit(cap.base, "slow running");
    await waitTask(cap.base, slow.id, (t) => t.status.state === "TASK_STATE_WORKING");
    const waiting = call(cap.base, "SendMessage", message("queued and waiting"));
    // The caller waits on its task from the moment the task exists (one synchronous step).
    await until(
      "the blocking call's task",
      async () => (await list(cap.base)).tasks.length === 2 ? true : undefined,
    );
    cap.kill("SIGTERM");
    const a = await waiting;
    const t = a.json.result.task;
    assert.equal(t.status.state, "TASK_STATE_REJECTED", a.text);
    assert.equal(t.status.message.parts[0].text, ENDED);
    await ended(cap);
  } finally {
    await cap.close();
  }
});

Deno.test("SIGTERM on an idle sleeping capsule: status ok, exit 0", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script,
  });
  try {
    const t = await submit(cap.base, "fail quickly");
    await waitTask(cap.base, t.id, (x) => x.status.state === "TASK_STATE_FAILED");
    cap.kill("SIGTERM");
    const out = await ended(cap);
    assert.equal(out.code, 0, "a sleeping capsule's tasks do not decide: " + out.stderr);
  } finally {
    await cap.close();
  }
});

Deno.test("murmur.StopSession: cancels every held task, starts nothing after; later tasks end rejected as stopped", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 3 },
    script,
  });
  try {
    const slow = await submit(cap.base, "slow running");
    await waitTask(cap.base, slow.id, (t) => t.status.state === "TASK_STATE_WORKING");
    const queued = await submit(cap.base, "queued");
    const stop = await call(cap.base, "murmur.StopSession", {}, { id: "stop" });
    assert.deepEqual(stop.json, {
      jsonrpc: "2.0",
      id: "stop",
      result: {
        sessionId: cap.ready.session_id,
        canceled: [slow.id, queued.id].sort(),
        residue: [],
      },
    });
    const q = (await call(cap.base, "GetTask", { id: queued.id })).json.result;
    assert.equal(q.status.state, "TASK_STATE_CANCELED");
    assert.equal(q.status.message.parts[0].text, "task canceled before it started");
    const r = (await call(cap.base, "GetTask", { id: slow.id })).json.result;
    assert.equal(r.status.state, "TASK_STATE_CANCELED");
    assert.equal(r.status.message.parts[0].text, "task canceled");
    assert.deepEqual((await call(cap.base, "murmur.StopSession")).json.result.canceled, []);

    // Accepted afterwards, but nothing starts.
    const late = await submit(cap.base, "fine but late");
    assert.equal(late.status.state, "TASK_STATE_SUBMITTED");
    const waiting = call(cap.base, "SendMessage", message("fine, waiting"));
    await until(
      "the blocking call's task",
      async () => (await list(cap.base)).tasks.length === 4 ? true : undefined,
    );
    // Both submits woke the task loop; neither task started (the trace below has no task_start
    // for them either).
    assert.equal(
      (await call(cap.base, "GetTask", { id: late.id })).json.result.status.state,
      "TASK_STATE_SUBMITTED",
    );
    cap.kill("SIGTERM");
    const w = await waiting;
    assert.equal(w.json.result.task.status.state, "TASK_STATE_REJECTED", w.text);
    assert.equal(w.json.result.task.status.message.parts[0].text, STOPPED);
    const out = await ended(cap);
    // The stop canceled a running A2A task of a sleeping capsule, which does not decide: ok.
    assert.equal(out.code, 0, out.stderr);
    assert.equal((await traceOf(cap)).at(-1)?.exit_status, "ok");
    const rejected = (await traceOf(cap)).filter((e) => e.event_type === "task_rejected");
    assert.equal(rejected.length, 2);
    for (const e of rejected) {
      assert.equal(e.reason, STOPPED);
      assert.equal(e.cause, "session_stopped");
    }
    const starts = (await traceOf(cap)).filter((e) => e.event_type === "task_start");
    assert.deepEqual(starts.map((e) => e.task_id), [slow.id]);
  } finally {
    await cap.close();
  }
});

Deno.test("murmur.StopSession on a single capsule ends it once the running task ended: exit 1", async () => {
  const cap = await capsule({ lifecycle: { task_acceptance: "single" }, script });
  try {
    const slow = await submit(cap.base, "slow running");
    await waitTask(cap.base, slow.id, (t) => t.status.state === "TASK_STATE_WORKING");
    const stop = await call(cap.base, "murmur.StopSession");
    assert.deepEqual(stop.json.result.canceled, [slow.id]);
    const out = await ended(cap, 10_000);
    assert.equal(out.code, 1);
  } finally {
    await cap.close();
  }
});

Deno.test("the closing window: new tasks are rejected 'the session is closing' (SendMessage and stream)", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let closingReached!: () => void;
  const reached = new Promise<void>((r) => (closingReached = r));
  const cap = await inprocCapsule(
    { name: "door", version: "0.1.0", lifecycle: { task_acceptance: "single" } },
    script,
    {
      sessionEnd: () => {
        closingReached();
        return held;
      },
    },
  );
  try {
    const done = await call(cap.base, "SendMessage", message("fine"));
    assert.equal(done.json.result.task.status.state, "TASK_STATE_COMPLETED");
    await reached;
    for (const id of ["c", 8]) {
      const a = await call(
        cap.base,
        "SendMessage",
        message("late", {}, { returnImmediately: true }),
        {
          id,
        },
      );
      const t = a.json.result.task;
      assert.equal(t.status.state, "TASK_STATE_REJECTED", a.text);
      assert.equal(t.status.message.parts[0].text, CLOSING);
      assert.equal((await call(cap.base, "GetTask", { id: t.id })).json.error.code, -32001);
      const blocking = await call(cap.base, "SendMessage", message("late too"));
      assert.equal(blocking.json.result.task.status.message.parts[0].text, CLOSING);
    }
    const res = await streamRequest(
      cap.base,
      "SendStreamingMessage",
      message("late stream"),
      {},
      5,
    );
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const events = await collect(res, () => false, 5_000);
    assert.equal(events.length, 1);
    assert.equal(events[0].id, null);
    // deno-lint-ignore no-explicit-any
    const task = (events[0].data.result as any).task;
    assert.equal(task.status.state, "TASK_STATE_REJECTED");
    assert.equal(task.status.message.parts[0].text, CLOSING);
    assert.equal((await list(cap.base)).totalSize, 1);
  } finally {
    release();
    await cap.close();
  }
});

Deno.test("queue lanes: peer tasks start before bg ones; 'user' and unknown origins wait in bg", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 8 },
    script,
    // Peer tasks are taken only with consent (docs/door.md "Peer tasks and trust").
    extra: { ...SHELL, exports: { peer_tasks: { accept: true } } },
  });
  try {
    const running = await submit(cap.base, "slowok first");
    await waitTask(cap.base, running.id, (t) => t.status.state === "TASK_STATE_WORKING");
    const origin = (v?: string): { headers: Record<string, string> } => ({
      headers: v ? { "x-murmur-task-origin": v } : {},
    });
    const a = await submit(cap.base, "a", origin());
    const b = await submit(cap.base, "b", origin("peer"));
    const c = await submit(cap.base, "c", origin("user"));
    const d = await submit(cap.base, "d", origin("completion"));
    const e = await submit(cap.base, "e", origin("PEER"));
    const f = await submit(cap.base, "f", origin("schedule"));
    await release(cap);
    for (const t of [a, b, c, d, e, f]) {
      await waitTask(cap.base, t.id, (x) => x.status.state === "TASK_STATE_COMPLETED");
    }
    const starts = (await traceOf(cap)).filter((x) => x.event_type === "task_start");
    assert.deepEqual(starts.map((x) => x.task_id), [
      running.id,
      b.id,
      e.id,
      a.id,
      c.id,
      d.id,
      f.id,
    ]);
    assert.deepEqual(
      starts.map((x) => [x.origin, x.lane]),
      [
        ["event", "bg"],
        ["peer", "peer"],
        ["peer", "peer"],
        ["event", "bg"],
        ["event", "bg"],
        ["completion", "bg"],
        ["event", "bg"],
      ],
    );
    // x-murmur-task-trust is read only with peer / completion and changes no answer.
    const trusted = await call(
      cap.base,
      "SendMessage",
      message("fine"),
      { headers: { "x-murmur-task-origin": "peer", "x-murmur-task-trust": "trusted" } },
    );
    assert.equal(trusted.json.result.task.status.state, "TASK_STATE_COMPLETED");
  } finally {
    await cap.close();
  }
});

Deno.test("conversation threaded: a second task in the same contextId continues the first's history", async () => {
  for (const mode of ["threaded", "stateless"] as const) {
    const cap = await capsule({
      lifecycle: { task_acceptance: "queue", after_task: "sleep", conversation: mode },
      script,
    });
    try {
      const long = "remember this: " + "x".repeat(8_000);
      const first = await call(cap.base, "SendMessage", message(long, { contextId: "ctx-shared" }));
      assert.equal(first.json.result.task.contextId, "ctx-shared");
      const second = await call(
        cap.base,
        "SendMessage",
        message("and now?", { contextId: "ctx-shared" }),
      );
      const other = await call(
        cap.base,
        "SendMessage",
        message("elsewhere?", { contextId: "ctx-other" }),
      );
      const inference = (await traceOf(cap)).filter((x) => x.event_type === "inference");
      const tokensOf = (a: typeof first) =>
        inference.find((x) => x.task_id === a.json.result.task.id)!.input_tokens as number;
      assert.ok(tokensOf(first) >= 2_000, `first: ${tokensOf(first)}`);
      assert.ok(tokensOf(other) < 500, `other context: ${tokensOf(other)}`);
      if (mode === "threaded") {
        assert.ok(tokensOf(second) >= tokensOf(first), `second: ${tokensOf(second)}`);
      } else {
        assert.ok(tokensOf(second) < 500, `stateless second: ${tokensOf(second)}`);
      }
    } finally {
      await cap.close();
    }
  }
});

Deno.test("a raw body naming the launch task: ListTasks finds it at once (--task)", async () => {
  const cap = await capsule({
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    script,
    args: ["--task", "fine launch"],
  });
  try {
    const a = await post(cap.base, rpcBody("ListTasks", { pageSize: 5 }, "l"));
    assert.equal(a.json.result.totalSize, 1);
    const id = a.json.result.tasks[0].id;
    await waitTask(cap.base, id, (t) => t.status.state === "TASK_STATE_COMPLETED");
  } finally {
    await cap.close();
  }
});
