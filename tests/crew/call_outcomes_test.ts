/**
 * Every way a `call-member` call can end is an answer the caller's model reads (docs/crews.md):
 * a member that fails, one that refuses the caller (403), one that never answers within
 * `lifecycle.delegation_deadline_secs` (its task is then canceled), one killed mid-task, a busy
 * one offered the task again until it takes it, and a caller canceled while its calls are out
 * (the members' tasks end CANCELED).
 */
import assert from "node:assert/strict";
import { readConversation } from "../helpers/conversation.ts";
import { until } from "../helpers/until.ts";
import {
  caller,
  callTurn,
  type Capsule,
  closeAll,
  entry,
  follow,
  gated,
  member,
  release,
  traceOf,
  writeCrew,
} from "./helpers.ts";

// deno-lint-ignore no-explicit-any
type Line = Record<string, any>;

async function memberTask(cap: Capsule, id: string) {
  const a = await cap.rpc("GetTask", { id });
  // deno-lint-ignore no-explicit-any
  return (a as any).result as { status: { state: string } };
}

/** The conversation record as one string per message. */
async function conversation(cap: Capsule, ctx: string): Promise<string[]> {
  const msgs = await readConversation(cap.ready.workdir, ctx);
  return msgs.map((m) => `${m.role}: ${JSON.stringify(m)}`);
}

Deno.test("call-member: a failing member, a refusing one (403) and one past the deadline are answers too", async () => {
  let failing: Capsule | undefined, guarded: Capsule | undefined, silent: Capsule | undefined;
  let lead: Capsule | undefined;
  try {
    failing = await member("failing", [{
      match: "^go",
      turns: [{ steps: [{ error: "disk on fire" }] }],
    }]);
    guarded = await member("guarded", [{ turns: [{ steps: [{ text: "never" }] }] }], {
      network: { authentication: { credentials: { reader: { scopes: ["GetTask"] } } } },
    });
    silent = await member("silent", [{
      match: "^go",
      turns: [{ steps: [{ text: "late", delay_ms: 600_000 }] }],
    }]);
    const c = await caller(["failing", "guarded", "silent"], [{
      match: "three",
      turns: [
        callTurn([["failing", "go fail"], ["guarded", "go guarded"], ["silent", "go silent"]]),
        { steps: [{ text: "waiting" }] },
        { steps: [{ text: "Lead: nobody answered." }] },
      ],
    }], { lifecycle: { delegation_deadline_secs: 2 } });
    lead = c.cap;
    const token = guarded.ready.tokens?.reader;
    assert.ok(token, JSON.stringify(guarded.ready));
    await writeCrew(c.crewFile, [
      entry("failing", failing),
      entry("guarded", guarded, token),
      entry("silent", silent),
    ]);
    const f = follow(lead, "three calls");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    assert.ok(
      f.seen.statuses.includes("waiting on call-member: 2 call(s) outstanding") ||
        f.seen.statuses.includes("waiting on call-member: 1 call(s) outstanding"),
      f.seen.statuses.join(" | "),
    );
    assert.ok(
      f.seen.statuses.includes("continuing with 2 member answer(s)"),
      f.seen.statuses.join(" | "),
    );

    const lines = (await traceOf(lead)) as Line[];
    const ends = lines.filter((l) => l.event_type === "member_call");
    const byMember = Object.fromEntries(ends.map((l) => [l.member, l]));
    assert.equal(byMember.failing.status, "failed");
    assert.match(byMember.failing.output, /disk on fire/);
    assert.equal(byMember.guarded.status, "failed");
    assert.equal(byMember.guarded.member_task_id, undefined, "never started");
    assert.equal(byMember.silent.status, "timed_out");
    assert.match(
      byMember.silent.output,
      /^silent did not answer within 2s; its task was canceled$/,
    );
    const silentTask = await memberTask(silent, byMember.silent.member_task_id);
    assert.equal(silentTask.status.state, "TASK_STATE_CANCELED");

    const convo = await conversation(lead, f.seen.contextId);
    // What the model saw of the refusal: the tool result, an error naming the door's answer.
    const tool = convo.find((m) => m.startsWith("tool: ") && m.includes("guarded"))!;
    assert.match(tool, /guarded's door answered 403 insufficient_scope: /);
    assert.match(
      tool,
      /Call mcl_[0-9a-f]{32} to guarded ended failed, with no answer from guarded/,
    );
    assert.ok(!tool.includes(guarded.ready.url), "the member's address is not shown to the model");
    // The round: the two answers that came after the turn, the refusal not repeated.
    const round = convo.filter((m) => m.startsWith("user: ") && m.includes("member:"));
    assert.equal(round.length, 1);
    assert.match(round[0], /to failing ended failed, with no answer from failing/);
    assert.match(round[0], /to silent ended timed_out, with no answer from silent/);
    assert.ok(!round[0].includes("source=member:guarded"));
    assert.match(
      round[0],
      /No answer came from: failing \(call mcl_[0-9a-f]{32}, failed\), silent/,
    );
  } finally {
    await closeAll([lead, failing, guarded, silent]);
  }
});

Deno.test("call-member: a member killed mid-task is an answer (unreachable), not a hang", async () => {
  let doomed: Capsule | undefined, lead: Capsule | undefined;
  try {
    doomed = await member("doomed", [{ match: "^work", ...gated({ text: "never" }) }]);
    const c = await caller(["doomed"], [{
      match: "kill",
      turns: [callTurn([["doomed", "work"]]), { steps: [{ text: "waiting" }] }, {
        steps: [{ text: "Lead: doomed is gone." }],
      }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("doomed", doomed)]);
    const f = follow(lead, "kill test");
    await until(
      "the call outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 1 call(s) outstanding") || undefined,
    );
    doomed.kill("SIGKILL");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const end = ((await traceOf(lead)) as Line[]).find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "unreachable");
    assert.match(end.output, /^doomed's door stopped answering: /);
    const round = (await conversation(lead, f.seen.contextId)).filter((m) =>
      m.startsWith("user: ") && m.includes("member:doomed")
    );
    assert.equal(round.length, 1);
    assert.match(round[0], /ended unreachable, with no answer from doomed/);
  } finally {
    await closeAll([lead, doomed]);
  }
});

Deno.test("call-member: a busy member (queue full) is offered the task again until it takes it", async () => {
  let busy: Capsule | undefined, lead: Capsule | undefined;
  try {
    busy = await member("busy", [
      { match: "^hold", ...gated({ text: "held" }) },
      { match: "^work", turns: [{ steps: [{ text: "BUSY-MEMBER-ANSWER" }] }] },
    ], { lifecycle: { queue_depth: 1 } });
    // One task runs and one waits: the queue (depth 1) is full.
    for (const text of ["hold one", "hold two"]) {
      const a = await busy.rpc("SendMessage", {
        message: { messageId: `m-${text}`, role: "ROLE_USER", parts: [{ text }] },
        configuration: { returnImmediately: true },
      });
      // deno-lint-ignore no-explicit-any
      assert.notEqual((a as any).result.task.status.state, "TASK_STATE_REJECTED");
    }
    const c = await caller(["busy"], [{
      match: "busy",
      turns: [callTurn([["busy", "work please"]]), { steps: [{ text: "waiting" }] }, {
        steps: [{ text: "Lead: done." }],
      }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("busy", busy)]);
    const f = follow(lead, "busy test");
    await until(
      "a busy refusal",
      async () =>
        ((await traceOf(lead!)) as Line[]).some((l) => l.event_type === "member_call_busy") ||
        undefined,
    );
    await release(busy);
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const lines = (await traceOf(lead)) as Line[];
    const busyLines = lines.filter((l) => l.event_type === "member_call_busy");
    assert.equal(busyLines[0].offer, 1);
    assert.equal(busyLines[0].message, "task rejected: capsule is busy");
    const end = lines.find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "completed");
    assert.equal(end.output, "BUSY-MEMBER-ANSWER");
    assert.equal(end.busy_offers, busyLines.length);
    const convo = await conversation(lead, f.seen.contextId);
    const tool = convo.find((m) => m.startsWith("tool: "))!;
    assert.match(tool, /\\"status\\":\\"busy\\"/);
    assert.match(tool, /busy is busy with other work and has not taken call/);
    const round = convo.filter((m) => m.startsWith("user: ") && m.includes("member:busy"));
    assert.match(round[0], /BUSY-MEMBER-ANSWER/);
    // The member ran the caller's task once (the same message id on every offer).
    const received = ((await traceOf(busy)) as Line[]).filter((l) =>
      l.event_type === "a2a_task_received" && l.message_id === `msg_${end.call_id}`
    );
    assert.equal(received.length, 1);
  } finally {
    await closeAll([lead, busy]);
  }
});

Deno.test("call-member: cancelling the caller's task cancels the members' tasks (CANCELED)", async () => {
  let a: Capsule | undefined, b: Capsule | undefined, lead: Capsule | undefined;
  try {
    a = await member("a", [{ match: "^work", ...gated({ text: "never" }) }]);
    b = await member("b", [{ match: "^work", ...gated({ text: "never" }) }]);
    const c = await caller(["a", "b"], [{
      match: "cancel",
      turns: [callTurn([["a", "work a"], ["b", "work b"]]), { steps: [{ text: "waiting" }] }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("a", a), entry("b", b)]);
    const f = follow(lead, "cancel test");
    await until(
      "both calls outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 2 call(s) outstanding") || undefined,
    );
    const canceled = await lead.rpc("CancelTask", { id: f.seen.taskId });
    // deno-lint-ignore no-explicit-any
    assert.equal((canceled as any).result.status.state, "TASK_STATE_CANCELED");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_CANCELED");
    const starts = ((await traceOf(lead)) as Line[]).filter((l) =>
      l.event_type === "member_call_start"
    );
    for (
      const [cap, s] of [[a, starts.find((l) => l.member === "a")!], [
        b,
        starts.find((l) => l.member === "b")!,
      ]] as const
    ) {
      await until(
        "the member's task canceled",
        async () =>
          (await memberTask(cap, s.member_task_id)).status.state === "TASK_STATE_CANCELED" ||
          undefined,
      );
    }
    const ends = await until("both calls recorded", async () => {
      const e = ((await traceOf(lead!)) as Line[]).filter((l) => l.event_type === "member_call");
      return e.length === 2 ? e : undefined;
    });
    for (const e of ends) {
      assert.equal(e.status, "abandoned");
      assert.match(e.output, /the calling task ended before . answered; its task was canceled/);
    }
  } finally {
    await closeAll([lead, a, b]);
  }
});

Deno.test("call-member: a token without the SubscribeToTask scope is followed with GetTask instead", async () => {
  let m: Capsule | undefined, lead: Capsule | undefined;
  try {
    m = await member("scoped", [{ match: "^work", ...gated({ text: "SCOPED answer" }) }], {
      network: {
        authentication: {
          credentials: { caller: { scopes: ["SendMessage", "GetTask", "CancelTask"] } },
        },
      },
    });
    const c = await caller(["scoped"], [{
      match: "scoped",
      turns: [callTurn([["scoped", "work"]]), { steps: [{ text: "waiting" }] }, {
        steps: [{ text: "Lead: done." }],
      }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("scoped", m, m.ready.tokens!.caller)]);
    const f = follow(lead, "scoped test");
    await until(
      "the call outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 1 call(s) outstanding") || undefined,
    );
    await release(m);
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const end = ((await traceOf(lead)) as Line[]).find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "completed");
    assert.equal(end.output, "SCOPED answer");
  } finally {
    await closeAll([lead, m]);
  }
});

Deno.test("call-member: a caller that runs out of turns with a call out cancels the member's task", async () => {
  let m: Capsule | undefined, lead: Capsule | undefined;
  try {
    m = await member("slow", [{ match: "^work", ...gated({ text: "never read" }) }]);
    const c = await caller(["slow"], [{
      match: "short",
      turns: [callTurn([["slow", "work"]]), { steps: [{ text: "never played" }] }],
    }], { maxTurns: 1 });
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("slow", m)]);
    const f = follow(lead, "short on turns");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_FAILED");
    const lines = (await traceOf(lead)) as Line[];
    const end = lines.find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "abandoned");
    assert.match(end.output, /the calling task ended before slow answered; its task was canceled/);
    // Recorded before the task's own end, and the member's task is CANCELED.
    const taskEnd = lines.findIndex((l) => l.event_type === "task_end");
    assert.ok(lines.indexOf(end) < taskEnd);
    assert.equal(lines[taskEnd].exit_status, "max_turns_reached");
    assert.equal((await memberTask(m, end.member_task_id)).status.state, "TASK_STATE_CANCELED");
  } finally {
    await closeAll([lead, m]);
  }
});

Deno.test("call-member: a member whose manifest does not accept peer tasks refuses the call 403 peer_not_accepted; it ends failed, nothing started there", async () => {
  let shy: Capsule | undefined, lead: Capsule | undefined;
  try {
    shy = await member("shy", [{ turns: [{ steps: [{ text: "never" }] }] }], { consents: false });
    const c = await caller(["shy"], [{
      match: "ask",
      turns: [callTurn([["shy", "go"]]), { steps: [{ text: "Lead: shy refused." }] }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("shy", shy)]);
    const f = follow(lead, "ask shy");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const end = ((await traceOf(lead)) as Line[]).find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "failed");
    assert.equal(end.member_task_id, undefined, "never started");
    const tool = (await conversation(lead, f.seen.contextId))
      .find((m) => m.startsWith("tool: ") && m.includes("shy"))!;
    assert.match(
      tool,
      /shy's door answered 403 peer_not_accepted: this capsule does not accept tasks from peers/,
    );
    const listed = await shy.rpc("ListTasks", {});
    assert.equal((listed.result as { totalSize: number }).totalSize, 0);
  } finally {
    await closeAll([lead, shy]);
  }
});
