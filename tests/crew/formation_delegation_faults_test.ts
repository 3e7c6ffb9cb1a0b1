/**
 * The formation fault matrix, part 3 (docs/crews.md "`delegate-task`"): the entry member of a
 * formation launched by `mur run --roster --task` delegates to a child capsule whose task stays
 * WORKING, and the delegation is ended three ways — the lead's task canceled, the delegation past
 * `lifecycle.delegation_deadline_secs`, the child SIGKILLed. Each ends in bounded time with the
 * `delegation` line's outcome, the child's process gone (and its task canceled where it lived to
 * see it), and the launcher's exit code the entry member's.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { stringify } from "yaml";
import { pidAlive } from "../../src/process_liveness.ts";
import {
  cancelLead,
  endedCleanly,
  launchTask,
  leadWaiting,
  type Line,
  linesOf,
  memberOf,
  STAYS_WORKING,
  waitLines,
  writeCrew,
} from "./fault_helpers.ts";
import type { Launched } from "./formation_helpers.ts";

const WAITING = "waiting on delegate-task: 1 delegation(s) outstanding";

/** A formation of one: the lead, which may start `helper` (whose task stays WORKING). */
function delegatingLead(lifecycle: Record<string, unknown> = {}) {
  const turn = (steps: unknown[]) => ({ steps });
  return writeCrew({
    roster: "roster_version: 1\nmembers: [{name: lead, manifest: lead, entry: true}]\n",
    members: {
      lead: {
        script: {
          tasks: [{
            match: ".",
            turns: [
              turn([{
                tool_call: {
                  name: "delegate-task",
                  input: { capsule: "helper", task: "work on it" },
                },
              }]),
              turn([{ text: "waiting" }]),
              turn([{ text: "Lead: done." }]),
            ],
          }],
        },
        manifest: { capabilities: { spawn: { allow: ["helper"] } }, lifecycle },
      },
    },
    files: {
      "lead/helper/murmur.yaml": stringify({
        name: "helper",
        version: "0.1.0",
        inference: { transport: "http", driver: "scripted", script: "script.yaml" },
        exports: { peer_tasks: { accept: true } }, // a child takes its starter's task by consent
      }),
      "lead/helper/script.yaml": stringify(STAYS_WORKING),
    },
  });
}

/** The child's trace lines (its session under the lead's workdir). */
function childTrace(f: Launched, start: Line): Line[] {
  const lead = memberOf(f, "lead").session_id;
  const path =
    `${f.dir}/lead/workdir/${lead}/${start.child_workdir}/.murmur/${start.child_session_id}/trace.jsonl`;
  return Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));
}

const taskEnds = (lines: Line[]) =>
  lines.filter((l) => l.event_type === "task_end").map((l) => l.exit_status);

Deno.test("formation faults: the lead's task canceled with a delegation out: abandoned, the child's task canceled, the child gone, exit 1", async () => {
  const f = await launchTask(await delegatingLead());
  try {
    const taskId = await leadWaiting(f, WAITING, 60_000);
    const [start] = await waitLines(f, "lead", "delegation_start");
    assertEquals(await cancelLead(f, taskId), "TASK_STATE_CANCELED");
    const { code } = await endedCleanly(f);
    assertEquals(code, 1);
    const [d] = linesOf(f, "lead", "delegation");
    assertEquals(d.outcome, "abandoned");
    assert(d.output.endsWith("its task was canceled"), d.output);
    assert(!(await pidAlive(start.child_pid)), "the child still runs");
    assertEquals(taskEnds(childTrace(f, start)), ["canceled"]);
  } finally {
    await f.close();
  }
});

Deno.test("formation faults: a delegation past its deadline ends timed_out, the child's task canceled, the lead goes on, exit 0", async () => {
  const f = await launchTask(await delegatingLead({ delegation_deadline_secs: 4 }));
  try {
    const [start] = await waitLines(f, "lead", "delegation_start", 1, 60_000);
    const { code } = await endedCleanly(f);
    assertEquals(code, 0);
    const [d] = linesOf(f, "lead", "delegation");
    assertEquals([d.outcome, d.output], [
      "timed_out",
      "helper did not answer within 4s; its task was canceled",
    ]);
    assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["ok"]);
    assert(!(await pidAlive(start.child_pid)), "the child still runs");
    assertEquals(taskEnds(childTrace(f, start)), ["canceled"]);
  } finally {
    await f.close();
  }
});

Deno.test("formation faults: a delegated child SIGKILLed mid-task is crashed, the lead goes on, exit 0", async () => {
  const f = await launchTask(await delegatingLead());
  try {
    await leadWaiting(f, WAITING, 60_000);
    const [start] = await waitLines(f, "lead", "delegation_start");
    Deno.kill(start.child_pid, "SIGKILL");
    const { code } = await endedCleanly(f);
    assertEquals(code, 0);
    const [d] = linesOf(f, "lead", "delegation");
    assertEquals(d.outcome, "crashed");
    assert(d.output.startsWith("helper's door stopped answering: "), d.output);
    assertEquals(linesOf(f, "lead", "task_end").map((l) => l.exit_status), ["ok"]);
  } finally {
    await f.close();
  }
});
