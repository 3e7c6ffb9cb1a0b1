/**
 * `call-member` on real processes (docs/crews.md): one turn calls two members, the task waits
 * with seed 000's exact statuses while their answers are out, and goes on once with both answers
 * fenced `member:<name>` in one user message of the conversation record; both traces name each
 * other's ids.
 */
import assert from "node:assert/strict";
import { readConversation } from "../helpers/conversation.ts";
import { runMur } from "../cli/helpers.ts";
import { TcpProxy } from "../helpers/tcp_proxy.ts";
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

Deno.test("call-member: two calls in one turn, the waiting statuses, one continuation with both fenced answers", async () => {
  let alpha: Capsule | undefined, beta: Capsule | undefined, lead: Capsule | undefined;
  try {
    alpha = await member("alpha", [{ match: "^sum", ...gated({ text: "ALPHA says 4" }) }]);
    beta = await member("beta", [{ match: "^color", ...gated({ text: "BETA says teal" }) }]);
    const c = await caller(["alpha", "beta"], [{
      match: "both",
      turns: [
        callTurn([["alpha", "sum 2+2"], ["beta", "color please"]]),
        { steps: [{ text: "I asked both." }] },
        { steps: [{ text: "Lead: 4 and teal." }] },
      ],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("alpha", alpha), entry("beta", beta)]);
    const f = follow(lead, "both members please");
    await until(
      "both calls outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 2 call(s) outstanding") || undefined,
    );
    await release(alpha);
    await until(
      "one call outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 1 call(s) outstanding") || undefined,
    );
    await release(beta);
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const waits = f.seen.statuses.filter((s) => !s.startsWith("inference turn"));
    assert.deepEqual(waits, [
      "waiting on call-member: 2 call(s) outstanding",
      "waiting on call-member: 1 call(s) outstanding",
      "continuing with 2 member answer(s)",
    ]);

    // The conversation record: the tool results, then ONE user message with both answers.
    const msgs = await readConversation(lead.ready.workdir, f.seen.contextId);
    const text = (m: { content?: unknown }) =>
      typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");
    const withAnswers = msgs.filter((m) => m.role === "user" && text(m).includes("member:"));
    assert.equal(withAnswers.length, 1, JSON.stringify(msgs, null, 1));
    const round = text(withAnswers[0]);
    assert.match(
      round,
      /<untrusted-content source=member:alpha>\nALPHA says 4\n<\/untrusted-content>/,
    );
    assert.match(
      round,
      /<untrusted-content source=member:beta>\nBETA says teal\n<\/untrusted-content>/,
    );
    assert.match(round, /\[call-member\] call mcl_[0-9a-f]{32} to alpha ended completed:/);
    assert.ok(round.indexOf("member:alpha") < round.indexOf("member:beta"), "arrival order");
    assert.equal(msgs.at(-1)!.role, "assistant");

    // Both traces name each other: the caller's member task id is the member's task, whose
    // message id names the call.
    const lt = await traceOf(lead);
    const starts = lt.filter((l) => l.event_type === "member_call_start");
    assert.equal(starts.length, 2);
    for (const [name, cap] of [["alpha", alpha], ["beta", beta]] as const) {
      const s = starts.find((l) => l.member === name)!;
      const mt = await traceOf(cap);
      const got = mt.find((l) => l.event_type === "a2a_task_received")!;
      assert.equal(got.task_id, s.member_task_id);
      assert.equal(got.message_id, `msg_${s.call_id}`);
      const start = mt.find((l) => l.event_type === "task_start")!;
      assert.equal(start.origin, "peer");
      assert.equal(start.lane, "peer");
      const end = lt.find((l) => l.event_type === "member_call" && l.call_id === s.call_id)!;
      assert.equal(end.status, "completed");
      assert.equal(end.member_task_id, s.member_task_id);
    }
    const cont = lt.filter((l) => l.event_type === "task_continued");
    assert.equal(cont.length, 1);
    assert.deepEqual(
      [...(cont[0].member_calls as string[])].sort(),
      starts.map((s) => s.call_id as string).sort(),
    );

    // `mur trace steps` shows the link from both sides: caller task → member task.
    const alphaStart = starts.find((l) => l.member === "alpha")!;
    const callerSteps = await runMur(["trace", "steps", lead.ready.workdir]);
    assert.equal(callerSteps.code, 0, callerSteps.stderr);
    assert.match(
      callerSteps.stdout,
      new RegExp(
        `\n    member_call_start ${alphaStart.call_id}  → alpha task ${alphaStart.member_task_id}\n`,
      ),
    );
    assert.ok(
      callerSteps.stdout.includes("\n      task_continued  2 member answer(s), 0 delegation"),
      callerSteps.stdout,
    );
    const memberSteps = await runMur(["trace", "steps", alpha.ready.workdir]);
    assert.match(
      memberSteps.stdout,
      new RegExp(`\n  called by ${alphaStart.call_id}  task ${alphaStart.member_task_id}\n`),
    );
  } finally {
    await closeAll([lead, alpha, beta]);
  }
});

Deno.test("call-member: a dropped stream is resumed with Last-Event-ID and the answer still arrives", async () => {
  let alpha: Capsule | undefined, lead: Capsule | undefined;
  const proxyHolder: { p?: TcpProxy } = {};
  try {
    // Two gates: events after the first one reach the follower (it holds an event id), the
    // cut comes while the second one holds the task.
    const gate = (file: string) => ({
      steps: [{
        tool_call: {
          name: "bash",
          input: { command: `until [ -e ${file} ]; do sleep 0.05; done` },
        },
      }],
    });
    alpha = await member("alpha", [{
      match: "^sum",
      turns: [gate("first"), gate("release"), { steps: [{ text: "ALPHA after the cut" }] }],
    }]);
    const proxy = proxyHolder.p = TcpProxy.start(Number(new URL(alpha.base).port));
    const c = await caller(["alpha"], [{
      match: "cut",
      turns: [callTurn([["alpha", "sum 1+1"]]), { steps: [{ text: "waiting" }] }, {
        steps: [{ text: "Lead: got it." }],
      }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [{ name: "alpha", url: proxy.base }]);
    const f = follow(lead, "cut test");
    await until(
      "the call outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 1 call(s) outstanding") || undefined,
    );
    await Deno.writeTextFile(`${alpha.ready.workdir}/first`, "");
    // A numbered event of the member's task has reached the follower: its resume has an id.
    await until(
      "an event id delivered to the follower",
      () => proxy.forwardedIds.some((id) => id > 0) || undefined,
    );
    // The trace can run ahead of the stream: cut only once an event id went through to the
    // follower, or it has no id to resume from (a loaded CI machine showed it).
    await until(
      "an event id sent through to the follower",
      () => proxy.forwardedIds.length > 0 || undefined,
    );
    proxy.cut();
    await until("a resume with Last-Event-ID", () => proxy.lastEventIds.length > 0 || undefined);
    await release(alpha);
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    assert.ok(proxy.lastEventIds[0] > 0, String(proxy.lastEventIds));
    const end = (await traceOf(lead)).find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "completed");
    assert.equal(end.output, "ALPHA after the cut");
  } finally {
    await proxyHolder.p?.close();
    await closeAll([lead, alpha]);
  }
});

Deno.test("call-member: a second call to a member whose answer is out, and a member not in the list, are refused", async () => {
  let alpha: Capsule | undefined, lead: Capsule | undefined;
  try {
    alpha = await member("alpha", [{ match: "^sum", ...gated({ text: "ALPHA once" }) }]);
    const c = await caller(["alpha"], [{
      match: "twice",
      turns: [
        callTurn([["alpha", "sum 1"], ["alpha", "sum 2"], ["gamma", "anything"]]),
        { steps: [{ text: "waiting" }] },
        { steps: [{ text: "Lead: once." }] },
      ],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("alpha", alpha)]);
    const f = follow(lead, "twice please");
    await until(
      "the call outstanding",
      () => f.seen.statuses.includes("waiting on call-member: 1 call(s) outstanding") || undefined,
    );
    await release(alpha);
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const msgs = await readConversation(lead.ready.workdir, f.seen.contextId);
    // deno-lint-ignore no-explicit-any
    const results = msgs.find((m) => m.role === "tool")!.results as any[];
    assert.equal(results.length, 3);
    const [first, second, third] = results.map((r) => JSON.stringify(r));
    assert.match(first, /\\"status\\":\\"started\\"/);
    assert.match(
      second,
      /alpha has not yet answered call mcl_[0-9a-f]{32} from this task, so nothing was sent/,
    );
    assert.match(third, /'gamma' is not a member this capsule may call; it may call: alpha/);
    // One call reached the member.
    const received = (await traceOf(alpha)).filter((l) => l.event_type === "a2a_task_received");
    assert.equal(received.length, 1);
  } finally {
    await closeAll([lead, alpha]);
  }
});

Deno.test("call-member: a 64 KiB answer of multi-byte text is cut between characters, never inside one", async () => {
  let big: Capsule | undefined, lead: Capsule | undefined;
  try {
    // "a" then crabs: every crab's high surrogate sits at an odd index, so the 64 KiB cut
    // (65,536 UTF-16 units) lands between a crab's two halves.
    const answer = "a" + "🦀".repeat(40_000);
    big = await member("big", [{ match: "^big", turns: [{ steps: [{ text: answer }] }] }]);
    const c = await caller(["big"], [{
      match: "large",
      turns: [callTurn([["big", "big one"]]), { steps: [{ text: "waiting" }] }, {
        steps: [{ text: "Lead: got a big one." }],
      }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("big", big)]);
    const f = follow(lead, "a large answer");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");
    const msgs = await readConversation(lead.ready.workdir, f.seen.contextId);
    const round = msgs.map((m) => typeof m.content === "string" ? m.content : "").find((t) =>
      t.includes("source=member:big")
    );
    assert.ok(round !== undefined, JSON.stringify(msgs).slice(0, 2000));
    assert.ok(round.isWellFormed(), "no lone surrogate in the conversation");
    assert.ok(round.includes("a" + "🦀".repeat(32_767) + "\n[answer cut at 65536 characters]"));
    assert.ok(!round.includes("🦀".repeat(32_768)));
  } finally {
    await closeAll([lead, big]);
  }
});
