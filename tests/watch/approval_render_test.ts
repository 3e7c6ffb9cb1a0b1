/**
 * mur watch shows a pending approval as its person-readable line, `[input-required] approve bash:
 * git push origin main?`, without the approval's data part (docs/door.md "Approvals and
 * steering"), and says on stderr how to approve or deny it (not how to answer a question); any
 * other data part still prints as JSON.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Out, WatchRenderer } from "../../src/watch/render.ts";

const T1 = "tsk_0199c4e2f1b7712a9d3e4f5061728394";

function statusWith(parts: unknown[]) {
  return {
    statusUpdate: {
      taskId: T1,
      contextId: "ctx_1",
      status: { state: "TASK_STATE_INPUT_REQUIRED", message: { role: "ROLE_AGENT", parts } },
    },
  };
}

function outOf(events: unknown[], to: "stdout" | "stderr" = "stdout"): string {
  const r = new WatchRenderer({
    answerCommand: (id) => `mur answer --session ses_x ${id.slice(-6)} TEXT`,
    decideCommand: (verb, id) => `mur ${verb} --session ses_x ${id.slice(-6)}`,
  });
  const outs: Out[] = events.flatMap((e) => r.handle(e));
  return outs.filter((o) => o.to === to).map((o) => o.text).join("");
}
const stdoutOf = (events: unknown[]) => outOf(events);

Deno.test("watch: an approval's status shows its text part, not its data part", () => {
  const detail = {
    kind: "approval",
    tool: "bash",
    source: "shell",
    arguments: { command: "git push origin main" },
    argumentsHash: "sha256:" + "a".repeat(64),
    reason: "approvals.tools.bash",
  };
  assertEquals(
    stdoutOf([statusWith([{ text: "approve bash: git push origin main?" }, { data: detail }])]),
    "[input-required] approve bash: git push origin main?\n",
  );
  assertEquals(
    outOf(
      [statusWith([{ text: "approve bash: git push origin main?" }, { data: detail }])],
      "stderr",
    ),
    "[murmur] tsk 728394 waits for approval; `mur approve --session ses_x 728394` or " +
      "`mur deny --session ses_x 728394 --reason TEXT`\n",
  );
  assertEquals(
    stdoutOf([statusWith([{ text: "pick one " }, { data: { x: 1 } }])]),
    '[input-required] pick one {"x":1}\n',
  );
  // A question is answered, not approved.
  assertEquals(
    outOf([statusWith([{ text: "Which branch?" }])], "stderr"),
    "[murmur] tsk 728394 waits for input; answer with `mur answer --session ses_x 728394 TEXT`\n",
  );
});
