/**
 * Approvals on the wire (docs/approvals.md): a shell call the manifest's `approvals:` policy
 * covers waits in TASK_STATE_INPUT_REQUIRED with a readable status and the approval data part;
 * only the operator's token answers it, on a public door too (there the approval token mur
 * mints for it, which a contained tool cannot read; a plain caller, a peer credential, a watcher token, a new task carrying
 * an answer, a stale hash and a text reply are refused and change nothing); approve runs the
 * call, deny and a timeout do not and the model reads the denial as the call's result; the
 * trace has `approval_requested` / `approval_resolved`.
 */
import assert from "node:assert/strict";
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import { collect, frameOf, streamRequest } from "../helpers/sse.ts";
import { until } from "../helpers/until.ts";
import { runMur } from "../cli/helpers.ts";
import { call, message, submit, traceOf, waitTask } from "./helpers.ts";

const LINE = "echo pushed > pushed.txt";
const LINE_2 = "echo second > second.txt";

function script() {
  const push = (id: string, command: string) => ({
    steps: [{ tool_call: { id, name: "bash", input: { command } } }],
  });
  return {
    tasks: [
      { match: "^first", turns: [push("c1", LINE), { steps: [{ text: "first done" }] }] },
      { match: "^second", turns: [push("c2", LINE_2), { steps: [{ text: "second done" }] }] },
      { match: "^free", turns: [push("c3", "echo free > free.txt"), { steps: [{ text: "ok" }] }] },
      { turns: [{ steps: [{ text: "plain" }] }] },
    ],
  };
}

function manifest(extra: Record<string, unknown>, timeout = 60) {
  return {
    name: "gated",
    version: "0.1.0",
    lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 5 },
    capabilities: { shell: { allow: ["bash"] } },
    approvals: {
      timeout_secs: timeout,
      tools: { bash: { approve: "ask", commands: ["echo pushed *", "echo second*"] } },
    },
    ...extra,
  };
}

/** JCS of a flat object of strings, written out here apart from the runtime's code. */
async function hashOf(command: string): Promise<string> {
  const bytes = new TextEncoder().encode(`{"command":${JSON.stringify(command)}}`);
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return "sha256:" + [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function answer(taskId: string, data: Record<string, unknown>) {
  return message("", { taskId, parts: [{ data }] });
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

type Task = {
  status: { state: string };
  artifacts?: { artifactId: string; parts: { data?: Record<string, unknown>; text?: string }[] }[];
};

function approvalOf(t: Task): Record<string, unknown> | undefined {
  return t.artifacts?.find((a) => a.artifactId === "approval")?.parts[0]?.data;
}

const pending = (t: { status: { state: string } }) =>
  t.status.state === "TASK_STATE_INPUT_REQUIRED";
const ended = (t: { status: { state: string } }) =>
  ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(t.status.state);

/** The tool result the model read for call `id`: the artifact frame's content on the stream. */
async function toolResult(cap: Capsule, token: string, taskId: string): Promise<string> {
  const res = await streamRequest(cap.base, "murmur.WatchSession", {}, {
    "Last-Event-ID": "0",
    authorization: `Bearer ${token}`,
  });
  const events = await collect(res, (e) => {
    const st = (e.data.result as { statusUpdate?: { taskId: string; status: { state: string } } })
      .statusUpdate;
    return st?.taskId === taskId && ended({ status: st.status });
  });
  for (const e of events) {
    const st = (e.data.result as { statusUpdate?: { taskId: string; metadata?: unknown } })
      .statusUpdate;
    const f = (st?.metadata as Record<string, Record<string, unknown>> | undefined)?.[
      "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1"
    ];
    if (st?.taskId === taskId && f?.frame === "artifact") return String(f.content);
  }
  throw new Error(`no artifact for ${taskId}`);
}

Deno.test("approvals: only the operator's token answers, a stale hash changes nothing, approve runs the call, deny does not", async () => {
  const cap = await startCapsule({
    manifest: manifest({
      network: {
        authentication: {
          scheme: "bearer",
          credentials: {
            peer: { scopes: ["SendMessage", "GetTask", "SendStreamingMessage"] },
            watcher: { scopes: ["murmur.WatchSession", "GetTask"] },
          },
        },
      },
    }),
    script: script(),
  });
  const op = cap.ready.tokens!.operator;
  const wd = cap.ready.workdir;
  try {
    const t1 = await submit(cap.base, "first", { token: op });
    const waiting = await waitTask(cap.base, t1.id, pending, 15_000, op) as Task;
    const detail = approvalOf(waiting)!;
    const hash = await hashOf(LINE);
    assert.deepEqual(detail, {
      kind: "approval",
      tool: "bash",
      source: "shell",
      arguments: { command: LINE },
      argumentsHash: hash,
      reason: 'approvals.tools.bash.commands[0] "echo pushed *"',
    });

    // The stream's INPUT_REQUIRED status: the line a person reads, then the same data part.
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, {
      "Last-Event-ID": "0",
      authorization: `Bearer ${op}`,
    });
    const events = await collect(
      res,
      (e) =>
        (e.data.result as { statusUpdate?: { status: { state: string } } }).statusUpdate?.status
          .state === "TASK_STATE_INPUT_REQUIRED",
    );
    const st = (events.at(-1)!.data.result as {
      statusUpdate: { status: { message: { parts: Record<string, unknown>[] } } };
    }).statusUpdate.status;
    assert.deepEqual(st.message.parts, [
      { text: `approve bash: ${LINE}?`, mediaType: "text/plain" },
      { data: detail, mediaType: "application/json" },
    ]);

    const refusals: [string, unknown, RegExp][] = [];
    const peer = await call(
      cap.base,
      "SendMessage",
      answer(t1.id, { approve: true, argumentsHash: hash }),
      {
        token: cap.ready.tokens!.peer,
      },
    );
    refusals.push([
      "peer",
      peer.json?.error,
      /only the operator answers an approval; credential 'peer' cannot/,
    ]);
    const watcher = await call(
      cap.base,
      "SendMessage",
      answer(t1.id, { approve: true, argumentsHash: hash }),
      {
        token: cap.ready.tokens!.watcher,
      },
    );
    assert.equal(watcher.status, 403, watcher.text);
    const stale = await call(
      cap.base,
      "SendMessage",
      answer(t1.id, { approve: true, argumentsHash: await hashOf("echo pushed > other.txt") }),
      { token: op },
    );
    refusals.push([
      "stale hash",
      stale.json?.error,
      /is not the pending approval's \(sha256:[0-9a-f]{64}\)/,
    ]);
    const text = await call(cap.base, "SendMessage", message("yes, go ahead", { taskId: t1.id }), {
      token: op,
    });
    refusals.push([
      "text reply",
      text.json?.error,
      /waits for an approval of its bash call; answer with a data part/,
    ]);
    const notBool = await call(
      cap.base,
      "SendMessage",
      answer(t1.id, { approve: "yes", argumentsHash: hash }),
      { token: op },
    );
    refusals.push([
      "approve not a boolean",
      notBool.json?.error,
      /`approve` must be true or false/,
    ]);
    for (const [what, error, re] of refusals) {
      assert.ok(error, `${what}: not refused`);
      assert.match((error as { message: string }).message, re, what);
    }
    // A message that arrives as a task carrying an answer is a new task, never an approval.
    const asTask = await call(cap.base, "SendMessage", {
      ...message("", { parts: [{ data: { approve: true, argumentsHash: hash } }] }),
      configuration: { returnImmediately: true },
    }, { token: op });
    assert.ok(asTask.json?.result?.task?.id, asTask.text);
    assert.notEqual(asTask.json.result.task.id, t1.id);

    // Nothing changed: still waiting, the call has not run, no resolution traced.
    const still = await call(cap.base, "GetTask", { id: t1.id }, { token: op });
    assert.equal(still.json.result.status.state, "TASK_STATE_INPUT_REQUIRED");
    assert.equal(await exists(`${wd}/pushed.txt`), false);
    assert.equal(
      (await traceOf(cap)).filter((l) => l.event_type === "approval_resolved").length,
      0,
    );

    // The operator approves: the call runs and the task completes.
    const ok = await call(
      cap.base,
      "SendMessage",
      answer(t1.id, { approve: true, argumentsHash: hash }),
      { token: op },
    );
    assert.ok(ok.json?.result?.task, ok.text);
    await waitTask(cap.base, t1.id, ended, 15_000, op);
    assert.equal(
      (await call(cap.base, "GetTask", { id: t1.id }, { token: op })).json.result.status.state,
      "TASK_STATE_COMPLETED",
    );
    assert.equal(await Deno.readTextFile(`${wd}/pushed.txt`), "pushed\n");

    // A second call denied with a reason: it never runs, and the model reads the denial.
    const t2 = await submit(cap.base, "second", { token: op });
    await waitTask(cap.base, t2.id, pending, 15_000, op);
    const no = await call(
      cap.base,
      "SendMessage",
      answer(t2.id, {
        approve: false,
        argumentsHash: await hashOf(LINE_2),
        reason: "not on a Monday",
      }),
      { token: op },
    );
    assert.ok(no.json?.result?.task, no.text);
    await waitTask(cap.base, t2.id, ended, 15_000, op);
    assert.equal(await exists(`${wd}/second.txt`), false);
    assert.equal(
      await toolResult(cap, op, t2.id),
      "denied by the operator: not on a Monday. The call did not run; do not repeat it unchanged",
    );

    // A call no pattern covers runs without asking.
    const t3 = await submit(cap.base, "free", { token: op });
    await waitTask(cap.base, t3.id, ended, 15_000, op);
    assert.equal(await Deno.readTextFile(`${wd}/free.txt`), "free\n");

    const trace = await traceOf(cap);
    const lines = trace.filter((l) => String(l.event_type).startsWith("approval_"));
    assert.deepEqual(
      lines.map((l) => [l.event_type, l.task_id, l.outcome ?? null, l.by ?? null, l.reason]),
      [
        [
          "approval_requested",
          t1.id,
          null,
          null,
          'approvals.tools.bash.commands[0] "echo pushed *"',
        ],
        ["approval_resolved", t1.id, "approved", "operator", undefined],
        [
          "approval_requested",
          t2.id,
          null,
          null,
          'approvals.tools.bash.commands[1] "echo second*"',
        ],
        ["approval_resolved", t2.id, "denied", "operator", "not on a Monday"],
      ],
    );
    assert.equal(lines[0].arguments_hash, hash);
    assert.equal(lines[1].parent_id, lines[0].event_id);

    // `mur trace show` lists each wait and how it ended; `steps` names them in the tree.
    const show = await runMur(["trace", "show", `${wd}/trace.jsonl`]);
    assert.equal(show.code, 0, show.stderr);
    const rows = show.stdout.split("\n");
    const at = rows.indexOf("Approvals");
    assert.ok(at >= 0, show.stdout);
    assert.match(
      rows[at + 1],
      /^ {2}tsk [0-9a-f]{6} {2}turn 1 {2}bash {2}approved by operator after \d/,
    );
    assert.match(rows[at + 1], /asked by approvals\.tools\.bash\.commands\[0\] "echo pushed \*"$/);
    assert.match(rows[at + 2], /turn 1 {2}bash {2}denied by operator after .*“not on a Monday”/);
    const steps = await runMur(["trace", "steps", `${wd}/trace.jsonl`]);
    assert.match(steps.stdout, /approval_resolved bash {2}approved by operator/);
  } finally {
    await cap.close();
  }
});

Deno.test("approvals: a public door takes the answer only with the operator's approval token (mur approve presents it); a contained tool cannot read it; a cancel ends the wait; on-approval hooks hear both ends", async () => {
  // The test's mur home is `.murmur-home` in the capsule folder, two up from the workdir the
  // model's shell starts in (`workdir/<session>`): there, only containment keeps it from the shell.
  const base = script();
  const peek = `printf 'env:%s home:%s\\n' "$(env | grep -c 'mdt1\\.')" ` +
    `"$(cat ../../.murmur-home/running/*.json 2>&1 | grep -c approval_token)"`;
  const cap = await startCapsule({
    manifest: manifest({
      hooks: [{ name: "notify", binding: "on-approval", command: ["./notify.sh"] }],
      // Peers' tasks accepted, so a peer's answer passes the door's consent and meets the
      // approval's own rule (without consent the gate refuses it first: docs/door.md).
      exports: { peer_tasks: { accept: true } },
    }),
    script: {
      tasks: [{
        match: "^peek",
        turns: [{ steps: [{ tool_call: { id: "k", name: "bash", input: { command: peek } } }] }, {
          steps: [{ text: "peeked" }],
        }],
      }, ...base.tasks],
    },
    files: {
      "notify.sh": `#!/bin/sh\nin=$(cat)\nprintf '%s\\n' "$in" >> approvals.jsonl\necho '{}'\n`,
    },
  });
  const wd = cap.ready.workdir;
  const home = cap.home;
  try {
    assert.equal(`${cap.dir}/workdir/${cap.ready.session_id}`, wd);
    assert.equal(home, `${cap.dir}/.murmur-home`);
    // The token: in the readiness line and the running record, nowhere a contained tool reads.
    const token = cap.ready.approval_token!;
    assert.match(token, /^mdt1\./);
    assert.equal(cap.ready.tokens, undefined);
    const record = JSON.parse(
      await Deno.readTextFile(`${home}/running/${cap.ready.session_id}.json`),
    );
    assert.equal(record.approval_token, token);
    const start = (await traceOf(cap)).find((l) => l.event_type === "session_start");
    assert.equal(start?.containment_achieved, "scoped");
    const p = await submit(cap.base, "peek");
    await waitTask(cap.base, p.id, ended);
    assert.match(await toolResult(cap, "none", p.id), /\nStdout:\nenv:0 home:0\n/);
    // The same command on the host, from the same folder, does read it: the path is right.
    const host = await new Deno.Command("bash", { args: ["-c", peek], cwd: wd }).output();
    assert.equal(new TextDecoder().decode(host.stdout), "env:0 home:1\n");

    const t1 = await submit(cap.base, "first");
    await waitTask(cap.base, t1.id, pending);
    const yes = answer(t1.id, { approve: true, argumentsHash: await hashOf(LINE) });
    // Any caller that reaches the port (the model's own curl among them): refused, with where
    // the operator's token is; so is a token the session did not mint, and a named peer.
    const plain = await call(cap.base, "SendMessage", yes);
    assert.equal(plain.json?.error?.code, -32004, plain.text);
    assert.equal(
      plain.json.error.message,
      `only the operator answers an approval, and on this public door that takes the operator's token: approval_token in the session's running record, ${home}/running/${cap.ready.session_id}.json, as Authorization: Bearer <token> (mur approve and mur deny present it)`,
    );
    const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    const wrong = await call(cap.base, "SendMessage", yes, { token: forged });
    assert.equal(wrong.json?.error?.code, -32004, wrong.text);
    const peer = await call(cap.base, "SendMessage", yes, {
      headers: { "x-murmur-task-origin": "peer", authorization: `Bearer ${token}` },
    });
    assert.match(
      peer.json?.error?.message ?? peer.text,
      /only the operator answers an approval; a caller that names itself a peer cannot/,
    );
    assert.equal(peer.json.error.code, -32004);
    const still = await call(cap.base, "GetTask", { id: t1.id });
    assert.equal(still.json?.result?.status?.state, "TASK_STATE_INPUT_REQUIRED", still.text);
    assert.equal(await exists(`${wd}/pushed.txt`), false);
    // The rest of the public door stays public: GetTask above took no token.
    const ok = await runMur(["approve", t1.id.slice(-6)], { MURMUR_HOME: home });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^approved ${t1.id}: bash ${LINE}`));
    await waitTask(cap.base, t1.id, ended);
    assert.equal(await Deno.readTextFile(`${wd}/pushed.txt`), "pushed\n");

    const t2 = await submit(cap.base, "second");
    await waitTask(cap.base, t2.id, pending);
    const canceled = await call(cap.base, "CancelTask", { id: t2.id });
    assert.equal(canceled.json?.result?.status?.state, "TASK_STATE_CANCELED", canceled.text);
    const resolved = await until("the canceled wait's line", async () => {
      const r = (await traceOf(cap)).filter((l) => l.event_type === "approval_resolved");
      return r.length === 2 ? r : undefined;
    });
    assert.deepEqual(resolved.map((l) => [l.outcome, l.by ?? null]), [
      ["approved", "operator"],
      ["canceled", null],
    ]);
    assert.equal(await exists(`${wd}/second.txt`), false);

    // The on-approval hook heard each wait begin and end, in order.
    const heard = await until("four on-approval events", async () => {
      const text = await Deno.readTextFile(`${wd}/approvals.jsonl`).catch(() => "");
      const evs = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
      return evs.length === 4 ? evs : undefined;
    });
    assert.deepEqual(
      heard.map((e) => [e.event, e.phase, e.task_id, e.tool_name, e.outcome ?? null, e.by ?? null]),
      [
        ["on-approval", "requested", t1.id, "bash", null, null],
        ["on-approval", "resolved", t1.id, "bash", "approved", "operator"],
        ["on-approval", "requested", t2.id, "bash", null, null],
        ["on-approval", "resolved", t2.id, "bash", "canceled", null],
      ],
    );
    assert.equal(heard[0].prompt, `approve bash: ${LINE}?`);
    assert.equal(heard[0].arguments_hash, await hashOf(LINE));
  } finally {
    await cap.close();
  }
});

Deno.test("approvals: a wait nobody answers is denied after approvals.timeout_secs and the model goes on", async () => {
  const cap = await startCapsule({ manifest: manifest({}, 1), script: script() });
  try {
    const t1 = await submit(cap.base, "first");
    await waitTask(cap.base, t1.id, pending);
    await waitTask(cap.base, t1.id, ended);
    const got = await call(cap.base, "GetTask", { id: t1.id });
    // The model read the denial and answered on its next turn.
    assert.equal(got.json.result.status.state, "TASK_STATE_COMPLETED");
    assert.equal(await exists(`${cap.ready.workdir}/pushed.txt`), false);
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
    const events = await collect(
      res,
      (e) =>
        (e.data.result as { statusUpdate?: { status: { state: string } } }).statusUpdate?.status
          .state === "TASK_STATE_COMPLETED",
    );
    const contents = events.flatMap((e) => {
      const f = frameOf(e);
      return f?.frame === "artifact" ? [f.content] : [];
    });
    assert.deepEqual(contents, [
      "denied: no one approved this call within approvals.timeout_secs (1 s), so it did not run",
    ]);
    const resolved = (await traceOf(cap)).filter((l) => l.event_type === "approval_resolved");
    assert.deepEqual(resolved.map((l) => [l.outcome, l.by]), [["expired", undefined]]);
  } finally {
    await cap.close();
  }
});
