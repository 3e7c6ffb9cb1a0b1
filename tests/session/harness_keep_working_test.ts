/**
 * lifecycle.keep_working on a `transport: process` capsule: a harness run that ends early is
 * resumed (its own session) with the message, as the http loop sends it after a turn end.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type {
  AttemptRequest,
  HarnessDriver,
  HarnessPart,
} from "../../src/drivers/process/types.ts";
import { processManifest } from "../helpers/process_manifest.ts";
import { NO_HOOKS } from "../../src/session/hooks_api.ts";
import { Session } from "../../src/session/session.ts";
import { prepareWorkdir } from "../../src/session/workdir.ts";

function manifest(dir: string) {
  return processManifest(dir, { keepWorking: { limit: 3, message: "Keep going.", until: "DONE" } });
}

Deno.test("keep_working on a harness: an early end is resumed with the message until the reply holds `until`", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-kwh-" });
  const requests: AttemptRequest[] = [];
  const replies = ["half done", "more", "DONE now"];
  const harness = {
    kind: "harness",
    name: "claude-code",
    model: "",
    streamsText: true,
    async *attempt(req: AttemptRequest): AsyncIterable<HarnessPart> {
      requests.push(req);
      const n = requests.length;
      yield { type: "turn-start", turn: req.turnsUsed + 1 } as HarnessPart;
      yield {
        type: "result",
        outcome: { status: "completed", text: replies[n - 1], lastSegmentStreamedText: false },
        turns: 1,
        sessionId: "s",
      } as HarnessPart;
    },
    forgetSession: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  } as unknown as HarnessDriver;
  try {
    const m = manifest(dir);
    const id = "ses_00000000000000000000000000000002";
    const session = new Session({
      id,
      manifest: m,
      workdir: prepareWorkdir(m, id),
      driver: harness as never,
      tools: { specs: () => [], dispatch: () => Promise.reject(new Error("no tools")) },
      hooks: NO_HOOKS,
      idleTimeoutMs: 30_000,
      warn: () => {},
    });
    await session.begin({});
    const running = session.run();
    const sub = session.log.subscribe();
    const res = session.submit({ text: "go", origin: "user", trusted: true });
    assert(res.kind === "accepted");
    await res.task.done;
    const texts = sub.take().entries.filter((e) => e.standard).map((e) => {
      const ev = JSON.parse(new TextDecoder().decode(e.plain!));
      return ev.statusUpdate?.status?.message?.parts?.[0]?.text ?? "artifact";
    });
    assert(texts.includes("keep working 1 of 3"), texts.join(" | "));
    assert(texts.includes("keep working 2 of 3"));
    assert(!texts.includes("keep working 3 of 3"), "stops once the reply holds until");
    assertEquals(requests.length, 3);
    assertEquals(requests[1].prompt, "Keep going.");
    assertEquals(requests[1].resume, "task");
    assertEquals(res.task.state, "TASK_STATE_COMPLETED");
    assertEquals(res.task.response, "DONE now");
    session.shutdown();
    await running;
    sub.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
