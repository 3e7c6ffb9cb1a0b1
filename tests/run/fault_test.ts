/**
 * No silent death (issue 13): an uncaught exception or an unhandled rejection anywhere in `mur run`
 * ends the session as every other way out does — the running task FAILED with
 * `error[E-RUN-050]: …`, `session_end` written, the running record removed, `status: failed` on
 * stdout, exit 1. The fault is injected by a wrapper around the real entry point (faulty_mur.ts)
 * while the session's one task runs a tool.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { ofType, readTrace, runningFiles, spawnRun } from "./helpers.ts";

const ENTRY = new URL("./faulty_mur.ts", import.meta.url).pathname;

const script = {
  tasks: [{
    turns: [
      { steps: [{ tool_call: { id: "c1", name: "bash", input: { command: "sleep 30" } } }] },
      { steps: [{ text: "never reached" }] },
    ],
  }],
};

async function workdirOf(dir: string): Promise<string> {
  for await (const e of Deno.readDir(`${dir}/workdir`)) {
    if (e.name.startsWith("ses_")) return `${dir}/workdir/${e.name}`;
  }
  throw new Error("no session workdir");
}

for (const fault of ["throw", "reject", "hang"] as const) {
  Deno.test(`no silent death: ${fault === "reject" ? "an unhandled rejection" : fault === "throw" ? "an uncaught exception" : "an uncaught exception while the task loop never returns"} ends the session failed, with E-RUN-050, session_end and no running record`, async () => {
    const run = await spawnRun({
      manifest: { name: "faulty", version: "0.1.0", capabilities: { shell: { allow: ["bash"] } } },
      script,
      args: ["--task", "go"],
      entry: ENTRY,
      env: { MUR_TEST_FAULT: fault },
    });
    try {
      const end = await run.end(60_000);
      assertEquals(end.code, 1, end.stderr);
      assert.match(end.stdout, /\nstatus: failed\n$/);
      const message = `an internal error ended the session: Error: injected fault (${fault})`;
      assert.ok(
        end.stderr.includes(`error[E-RUN-050]: ${message}\n  hint: this is a bug`),
        end.stderr,
      );
      assert.ok(!/Uncaught|error: Uncaught/.test(end.stderr), end.stderr);
      assertEquals(await runningFiles(run.home), [], "the running record is removed");

      const wd = await workdirOf(run.dir);
      const trace = await readTrace(`${wd}/trace.jsonl`);
      const ends = ofType(trace, "session_end");
      assertEquals(ends.length, 1);
      assertEquals(ends[0].exit_status, "failed");
      assertEquals(trace.at(-1)!.event_type, "session_end", "nothing after session_end");
      // The task ended FAILED with the coded error: a task_failed line, and its result.
      const failed = ofType(trace, "task_failed");
      assertEquals(failed.map((e) => [e.cause, e.reason]), [[
        "runtime_error",
        `error[E-RUN-050]: ${message}`,
      ]]);
      if (fault !== "hang") {
        // The attempt was stopped and came back in time: the loop closed the task's trace lines.
        assertEquals(ofType(trace, "task_end").length, 1);
        const result = await Deno.readTextFile(`${wd}/out/result.txt`);
        assertEquals(result, `error: error[E-RUN-050]: ${message}`);
      }
      const boot = await Deno.readTextFile(`${wd}/logs/bootstrap.log`);
      assert.ok(boot.includes(`injected fault (${fault})`) && boot.includes("faulty_mur.ts"), boot);
    } finally {
      await run.close();
    }
  });
}
