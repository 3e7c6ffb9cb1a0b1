/**
 * The formation fault matrix, part 2 (docs/crews.md "How a formation ends"): processes of a
 * formation killed or stopped while the lead's `call-member` call is out — the member SIGKILLed,
 * the member SIGSTOPped (it stops reading), the lead SIGKILLed, and `mur stop <frm>` of the
 * whole formation. Each ends in bounded time, with the call's documented status, no member
 * process and no running record left.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { runMur } from "../cli/helpers.ts";
import {
  endedCleanly,
  lastEvent,
  launchTask,
  LEAD_ALPHA,
  leadCalls,
  leadWaiting,
  linesOf,
  memberOf,
  STAYS_WORKING,
  writeCrew,
} from "./fault_helpers.ts";

const WAITING = "waiting on call-member: 1 call(s) outstanding";

/** lead calls alpha, whose task stays WORKING; `lead` adds manifest keys to the lead's. */
function leadAndAlpha(lead: Record<string, unknown> = {}) {
  return writeCrew({
    roster: LEAD_ALPHA,
    members: {
      lead: { script: leadCalls([["alpha", "work forever"]]), manifest: lead },
      alpha: { script: STAYS_WORKING },
    },
  });
}

Deno.test("formation faults: a member SIGKILLed mid-call is answered unreachable; the lead goes on and the formation ends 0", async () => {
  const f = await launchTask(await leadAndAlpha());
  try {
    await leadWaiting(f, WAITING);
    Deno.kill(memberOf(f, "alpha").pid!, "SIGKILL");
    const { code, stderr } = await endedCleanly(f);
    assertEquals(code, 0);
    const [c] = linesOf(f, "lead", "member_call");
    assertEquals([c.member, c.status], ["alpha", "unreachable"]);
    assert(c.output.startsWith("alpha's door stopped answering: "), c.output);
    assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["ok"]);
    assert(stderr.includes("[mur run] member 'alpha' (pid "), stderr);
  } finally {
    await f.close();
  }
});

Deno.test("formation faults: a member SIGSTOPped mid-call is answered unreachable once its stream stays silent", async () => {
  // A one-second heartbeat (every member inherits it): three silent seconds and the stream fails.
  const f = await launchTask(await leadAndAlpha(), "go", { MURMUR_HEARTBEAT_MS: "1000" });
  try {
    await leadWaiting(f, WAITING);
    Deno.kill(memberOf(f, "alpha").pid!, "SIGSTOP");
    // The stopped member is killed when the formation ends (its lifeline unread, SIGKILL).
    const { code } = await endedCleanly(f);
    assertEquals(code, 0);
    const [c] = linesOf(f, "lead", "member_call");
    assertEquals([c.member, c.status], ["alpha", "unreachable"]);
    assertEquals(
      c.output,
      "alpha's door stopped answering: nothing arrived on its stream for 3s",
    );
    assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["ok"]);
  } finally {
    await f.close();
  }
});

Deno.test("formation faults: the lead SIGKILLed mid-call: every member ends by itself (session_end, records removed), exit 137", async () => {
  const f = await launchTask(await leadAndAlpha());
  try {
    await leadWaiting(f, WAITING);
    Deno.kill(memberOf(f, "lead").pid!, "SIGKILL");
    const { code } = await endedCleanly(f);
    assertEquals(code, 128 + 9);
    // The killed lead wrote no more; alpha's task was canceled as its session ended.
    assertEquals(linesOf(f, "lead", "member_call"), []);
    assertEquals(linesOf(f, "alpha", "task_end").map((l) => l.exit_status), ["canceled"]);
    assertEquals(lastEvent(f, "alpha").event_type, "session_end");
  } finally {
    await f.close();
  }
});

Deno.test("formation faults: mur stop <frm> mid-call stops every member cleanly, the call abandoned, exit 1 (the entry's, its task canceled)", async () => {
  const f = await launchTask(await leadAndAlpha());
  try {
    await leadWaiting(f, WAITING);
    const stop = await runMur(["stop", f.line.formation_id], { MURMUR_HOME: f.home }, 60_000);
    assertEquals(stop.code, 0, stop.stderr);
    assert(stop.stdout.startsWith(`stopped:  ${f.line.formation_id}\nlauncher: pid `), stop.stdout);
    const { code } = await endedCleanly(f);
    // The launcher exits with the entry's code, as a capsule's stop does (docs/crews.md).
    assertEquals(code, 1);
    const [c] = linesOf(f, "lead", "member_call");
    assertEquals([c.member, c.status], ["alpha", "abandoned"]);
    for (const name of ["lead", "alpha"]) {
      assertEquals(linesOf(f, name, "task_end").map((l) => l.exit_status), ["canceled"], name);
      assertEquals(lastEvent(f, name).event_type, "session_end", name);
    }
  } finally {
    await f.close();
  }
});
