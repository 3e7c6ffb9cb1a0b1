/**
 * docs/protocol.md "One final status": a CancelTask on a `transport: process` task whose harness
 * had to be killed ends in `task canceled; the harness was killed and its session may not resume
 * cleanly`. The door records CANCELED at once; the one final status waits for the attempt to say
 * how it ended, and is exactly what GetTask then reports.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { HarnessDriver, HarnessPart } from "../../src/drivers/process/types.ts";
import { processManifest } from "../helpers/process_manifest.ts";
import { until } from "../helpers/until.ts";
import { KILLED_ON_CANCEL } from "../../src/session/harness_attempt.ts";
import { NO_HOOKS } from "../../src/session/hooks_api.ts";
import { Session } from "../../src/session/session.ts";
import { toA2A } from "../../src/session/task_record.ts";
import { prepareWorkdir } from "../../src/session/workdir.ts";

function manifest(dir: string) {
  return processManifest(dir, {});
}

/** A harness that starts a turn, ignores the interrupt, and is killed after a grace. */
function stubbornHarness(): HarnessDriver {
  return {
    kind: "harness",
    name: "claude-code",
    model: "",
    streamsText: true,
    async *attempt(_req, signal): AsyncIterable<HarnessPart> {
      yield { type: "turn-start", turn: 1 } as HarnessPart;
      await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
      await new Promise((r) => setTimeout(r, 200)); // the grace it ignored, then the kill
      yield {
        type: "result",
        outcome: { status: "canceled", killed: true, started: true },
        turns: 1,
        sessionId: "s",
      } as HarnessPart;
    },
    forgetSession: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  } as HarnessDriver;
}

Deno.test("CancelTask on a process task whose harness had to be killed: CANCELED at once, final status names the kill", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-kill-" });
  try {
    const m = manifest(dir);
    const session = new Session({
      id: "ses_00000000000000000000000000000001",
      manifest: m,
      workdir: prepareWorkdir(m, "ses_00000000000000000000000000000001"),
      driver: stubbornHarness() as never,
      tools: { specs: () => [], dispatch: () => Promise.reject(new Error("no tools")) },
      hooks: NO_HOOKS,
      idleTimeoutMs: 30_000,
      holdCancelStatus: true,
      warn: () => {},
    });
    await session.begin({});
    const running = session.run();
    const sub = session.log.subscribe();
    const res = session.submit({ text: "go", origin: "user", trusted: true });
    assert(res.kind === "accepted");
    const task = res.task;
    await until("the turn to start", () => task.state === "TASK_STATE_WORKING" || undefined);
    assert(session.cancel(task));
    // GetTask answers CANCELED at once; no terminal event is written yet.
    assertEquals(toA2A(task).status.state, "TASK_STATE_CANCELED");
    assert(!sub.take().entries.some((e) => e.terminal));
    await task.done;
    const finals = sub.take().entries.filter((e) => e.terminal);
    assertEquals(finals.length, 1, "one final status");
    const ev = JSON.parse(new TextDecoder().decode(finals[0].plain!));
    assertEquals(ev.statusUpdate.status.state, "TASK_STATE_CANCELED");
    assertEquals(ev.statusUpdate.status.message.parts[0].text, KILLED_ON_CANCEL);
    assertEquals(ev.statusUpdate.status, toA2A(task).status, "exactly GetTask's status");
    session.shutdown();
    await running;
    sub.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
