/**
 * The two halves of crews together (docs/crews.md): a formation launched by `mur run --roster`
 * whose entry member calls its callees with `call-member` through the launcher's crew file and
 * edge tokens, and what a caller gets from a member that died mid-run (an answer, not a hang).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { readConversation } from "../helpers/conversation.ts";
import { until } from "../helpers/until.ts";
import { pidAlive } from "../../src/process_liveness.ts";
import { type Capsule, startCapsule } from "../helpers/capsule.ts";
import {
  call,
  launch,
  type Launched,
  message,
  THREE,
  writeFormation,
} from "./formation_helpers.ts";

const NAMES = ["lead", "coder", "reviewer"];

function callTurn(calls: [string, string][]) {
  return {
    steps: calls.map(([member, task], i) => ({
      tool_call: { id: `call_${i}`, name: "call-member", input: { member, task } },
    })),
  };
}

const LEAD = {
  tasks: [{
    match: ".",
    turns: [
      callTurn([["coder", "write it"], ["reviewer", "review it"]]),
      { steps: [{ text: "I asked both." }] },
      { steps: [{ text: "Lead: done." }] },
    ],
  }],
};
const answer = (text: string) => ({ tasks: [{ match: ".", turns: [{ steps: [{ text }] }] }] });
const SCRIPTS = { lead: LEAD, coder: answer("CODER wrote it"), reviewer: answer("REVIEWER ok") };

function userText(msgs: { role?: string; content?: unknown }[]): string {
  return msgs.filter((m) => m.role === "user").map((m) =>
    typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "")
  ).join("\n");
}

/**
 * Sends `text` to the formation's entry member with its operator token, and waits for the entry's
 * task to complete and the formation to end 0: what the entry member's conversation then holds.
 */
async function askEntry(f: Launched, text: string) {
  const rec = JSON.parse(
    Deno.readTextFileSync(`${f.home}/running/${f.line.members[0].session_id}.json`),
  );
  const sent = await call(f.line.url, "SendMessage", message(text), rec.tokens.operator);
  assertEquals(sent.status, 200);
  const task = (sent.body.result as { task: { contextId: string; status: { state: string } } })
    .task;
  assertEquals(task.status.state, "TASK_STATE_COMPLETED");
  assertEquals((await f.proc.status).code, 0);
  const msgs = await readConversation(rec.session_dir, task.contextId);
  return { msgs, round: userText(msgs) };
}

Deno.test("formation + call-member: the entry calls both members in one turn over edge tokens, the formation ends ok", async () => {
  const f = await launch(await writeFormation(NAMES, THREE, SCRIPTS));
  try {
    const { round } = await askEntry(f, "build it");
    assert(round.includes("<untrusted-content source=member:coder>\nCODER wrote it\n"), round);
    assert(round.includes("<untrusted-content source=member:reviewer>\nREVIEWER ok\n"), round);
    // Each member ran its call in its peer lane, as credential member:lead.
    for (const m of f.line.members.slice(1)) {
      const dir = `${f.dir}/${m.name}/workdir/${m.session_id}`;
      const lines = Deno.readTextFileSync(`${dir}/trace.jsonl`).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      const start = lines.find((l) => l.event_type === "task_start");
      assertEquals(start?.origin, "peer", m.name);
      assertEquals(lines.at(-1).event_type, "session_end");
    }
  } finally {
    await f.close();
  }
});

Deno.test("formation + call-member: a call to a member that died is answered unreachable, and the formation goes on", async () => {
  const f = await launch(await writeFormation(NAMES, THREE, SCRIPTS));
  try {
    const reviewer = f.line.members[2];
    Deno.kill(reviewer.pid!, "SIGKILL");
    await until("reviewer gone", async () => (await pidAlive(reviewer.pid!)) ? undefined : true);
    const { msgs, round } = await askEntry(f, "build it");
    assert(round.includes("<untrusted-content source=member:coder>\nCODER wrote it\n"), round);
    // The call to the dead member is answered at once, in its tool result: unreachable.
    const all = JSON.stringify(msgs);
    assert(
      /\[call-member\] Call mcl_[0-9a-f]{32} to reviewer ended unreachable, with no answer from reviewer/
        .test(all),
      all,
    );
    assert(all.includes(`\\"status\\":\\"unreachable\\"`), all);
  } finally {
    await f.close();
  }
});

Deno.test("formation + call-member: a member on another machine is named by url and token_env", async () => {
  let far: Capsule | undefined;
  try {
    far = await startCapsule({
      manifest: {
        name: "far",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep" },
        network: { authentication: { scheme: "bearer" } },
        exports: { peer_tasks: { accept: true } },
      },
      script: answer("FAR answers"),
    });
    const roster = `roster_version: 1
members:
  - {name: lead, manifest: lead, entry: true}
  - {name: far, url: "${far.base}", token_env: FAR_TOKEN}
reachability: [{from: lead, to: [far]}]
`;
    const lead = {
      tasks: [{
        match: ".",
        turns: [
          callTurn([["far", "from afar"]]),
          { steps: [{ text: "asked" }] },
          { steps: [{ text: "Lead: done." }] },
        ],
      }],
    };
    const f = await launch(await writeFormation(["lead"], roster, { lead }), [], {
      FAR_TOKEN: far.ready.tokens!.operator,
    });
    try {
      assertEquals(f.line.members[1], { name: "far", url: far.base, pid: null, session_id: null });
      const crew = JSON.parse(
        Deno.readTextFileSync(`${f.home}/formations/${f.line.formation_id}/lead.crew.json`),
      );
      assertEquals(crew.members, [{
        name: "far",
        url: far.base,
        token: far.ready.tokens!.operator,
      }]);
      const { round } = await askEntry(f, "go far");
      assert(round.includes("<untrusted-content source=member:far>\nFAR answers\n"), round);
      // The formation ended; the machine-far member is not the launcher's to stop.
      assert(await pidAlive(far.proc.pid), "a url member is left running");
    } finally {
      await f.close();
    }
  } finally {
    await far?.close();
  }
});
