/**
 * `end-without-answer` (docs/crews.md): a member that has no answer for a task another capsule
 * sent ends it saying why; the task fails with the reason, GetTask says
 * `metadata.murmur.noAnswer: true`, result.txt says `no answer: <reason>`, and the caller's call
 * ends `no_answer` with the reason. A task nobody sent (not origin peer) cannot end that way.
 */
import assert from "node:assert/strict";
import { readConversation } from "../helpers/conversation.ts";
import {
  caller,
  callTurn,
  type Capsule,
  closeAll,
  entry,
  follow,
  member,
  traceOf,
  writeCrew,
} from "./helpers.ts";

const REASON = "the archive I needed is offline";

Deno.test("end-without-answer: the member's task fails as no answer, and the caller is told so", async () => {
  let quitter: Capsule | undefined, lead: Capsule | undefined;
  try {
    const quit = {
      steps: [{ tool_call: { name: "end-without-answer", input: { reason: REASON } } }],
    };
    // The member may call others (so it has the tool); it never does here.
    quitter = await member("quitter", [
      { match: "^archive", turns: [quit, { steps: [{ text: "never played" }] }] },
      { match: "^direct", turns: [quit, { steps: [{ text: "answered in text" }] }] },
    ], { env: { MURMUR_CREW_CALLEES: "nobody", MURMUR_CREW_FILE: "/nonexistent/crew.json" } });
    const c = await caller(["quitter"], [{
      match: "ask",
      turns: [callTurn([["quitter", "archive lookup"]]), { steps: [{ text: "waiting" }] }, {
        steps: [{ text: "Lead: quitter had nothing." }],
      }],
    }]);
    lead = c.cap;
    await writeCrew(c.crewFile, [entry("quitter", quitter)]);
    const f = follow(lead, "ask quitter");
    await f.done;
    assert.equal(f.seen.final, "TASK_STATE_COMPLETED");

    const end = (await traceOf(lead)).find((l) => l.event_type === "member_call")!;
    assert.equal(end.status, "no_answer");
    assert.equal(end.output, `quitter gave no answer: ${REASON}`);
    const memberTask = // deno-lint-ignore no-explicit-any
      ((await quitter.rpc("GetTask", { id: end.member_task_id })) as any).result;
    assert.equal(memberTask.status.state, "TASK_STATE_FAILED");
    assert.equal(memberTask.status.message.parts[0].text, REASON);
    assert.deepEqual(memberTask.metadata, { murmur: { noAnswer: true } });
    const mt = await traceOf(quitter);
    assert.equal(mt.filter((l) => l.event_type === "inference").length, 1, "no turn after it");
    assert.equal(mt.find((l) => l.event_type === "task_end")!.exit_status, "no_answer");
    assert.equal(mt.find((l) => l.event_type === "no_answer")!.reason, REASON);

    const msgs = await readConversation(lead.ready.workdir, f.seen.contextId);
    const round = msgs.filter((m) => m.role === "user" && JSON.stringify(m).includes("member:"));
    assert.equal(round.length, 1);
    assert.match(
      JSON.stringify(round[0]),
      /ended no_answer, with no answer from quitter:\\n<untrusted-content source=member:quitter>\\nquitter gave no answer: the archive I needed is offline\\n/,
    );

    // A task that no capsule sent (origin event here) cannot end without an answer.
    const direct = follow(quitter, "direct question");
    await direct.done;
    assert.equal(direct.seen.final, "TASK_STATE_COMPLETED");
    const own = await readConversation(quitter.ready.workdir, direct.seen.contextId);
    const refusal = JSON.stringify(own.find((m) => m.role === "tool"));
    assert.match(
      refusal,
      /'end-without-answer' ends only a task another capsule sent \(origin peer\); this task's origin is event/,
    );
  } finally {
    await closeAll([lead, quitter]);
  }
});
