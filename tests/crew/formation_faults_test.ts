/**
 * The formation fault matrix, part 1 (docs/crews.md "How a formation ends", "Cancel and ending
 * propagate"): a formation launched by the real `mur run --roster --task`, its lead's task
 * canceled while one or two `call-member` calls are out, and a call past
 * `lifecycle.delegation_deadline_secs`. Each ends in bounded time with every call line written
 * with its status, every member's task ended, every member process and record gone, and the
 * launcher's exit code the entry member's.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  cancelLead,
  endedCleanly,
  lastEvent,
  launchTask,
  LEAD_ALPHA,
  LEAD_ALPHA_BETA,
  leadCalls,
  leadWaiting,
  linesOf,
  STAYS_WORKING,
  writeCrew,
} from "./fault_helpers.ts";

for (const called of [["alpha"], ["alpha", "beta"]]) {
  Deno.test(`formation faults: the lead's task canceled with ${called.length} call(s) out ends the formation (abandoned, members' tasks canceled, exit 1)`, async () => {
    const f = await launchTask(
      await writeCrew({
        roster: LEAD_ALPHA_BETA,
        members: {
          lead: { script: leadCalls(called.map((m) => [m, `work for ${m}`])) },
          alpha: { script: STAYS_WORKING },
          beta: { script: STAYS_WORKING },
        },
      }),
    );
    try {
      const waiting = `waiting on call-member: ${called.length} call(s) outstanding`;
      const taskId = await leadWaiting(f, waiting);
      assertEquals(await cancelLead(f, taskId), "TASK_STATE_CANCELED");
      const { code, stderr } = await endedCleanly(f);
      // The entry member's exit code: its launch task ended canceled (E-RUN-040).
      assertEquals(code, 1);
      assert(stderr.includes(`[lead] error[E-RUN-040]: the launch task ${taskId} ended canceled`));
      const calls = linesOf(f, "lead", "member_call");
      assertEquals(
        calls.map((c) => [c.member, c.status]).sort(),
        called.map((m) => [m, "abandoned"]),
      );
      for (const c of calls) assert(c.output.endsWith("its task was canceled"), c.output);
      assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["canceled"]);
      assertEquals(lastEvent(f, "lead").exit_status, "canceled");
      for (const m of called) {
        assertEquals(linesOf(f, m, "task_end").map((l) => l.exit_status), ["canceled"], m);
        assertEquals(lastEvent(f, m).event_type, "session_end", m);
      }
    } finally {
      await f.close();
    }
  });
}

Deno.test("formation faults: a call past lifecycle.delegation_deadline_secs ends timed_out, the member's task canceled, the lead told", async () => {
  const f = await launchTask(
    await writeCrew({
      roster: LEAD_ALPHA,
      members: {
        lead: {
          script: leadCalls([["alpha", "work forever"]]),
          manifest: { lifecycle: { delegation_deadline_secs: 3 } },
        },
        alpha: { script: STAYS_WORKING },
      },
    }),
  );
  try {
    const { code } = await endedCleanly(f);
    assertEquals(code, 0);
    const [c] = linesOf(f, "lead", "member_call");
    assertEquals([c.member, c.status], ["alpha", "timed_out"]);
    assertEquals(c.output, "alpha did not answer within 3s; its task was canceled");
    // The lead went on with word that no answer came, and ended ok.
    assertEquals(linesOf(f, "lead", "task_continued").length, 1);
    assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["ok"]);
    assertEquals(linesOf(f, "alpha", "task_end").map((l) => l.exit_status), ["canceled"]);
    assertEquals(lastEvent(f, "alpha").event_type, "session_end");
  } finally {
    await f.close();
  }
});
