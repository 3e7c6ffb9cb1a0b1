/**
 * `end-without-answer` from a `transport: process` harness (docs/crews.md): the harness calls it
 * through the tool bridge's dispatch, goes on and finishes; the attempt ends as no answer all the
 * same, its reply dropped.
 */
import assert from "node:assert/strict";
import type {
  AttemptRequest,
  HarnessDriver,
  HarnessPart,
} from "../../src/drivers/process/types.ts";
import { toA2A } from "../../src/session/task_record.ts";
import { endWithoutAnswerTool } from "../../src/session/crew_tools.ts";
import { NO_HOOKS } from "../../src/session/hooks_api.ts";
import { Session } from "../../src/session/session.ts";
import { prepareWorkdir } from "../../src/session/workdir.ts";
import type { Tool } from "../../src/tools/types.ts";
import { processManifest } from "../helpers/process_manifest.ts";

Deno.test("end-without-answer on a harness: the run that went on still ends as no answer", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-nah-" });
  const seen: string[] = [];
  const harness = {
    kind: "harness",
    name: "claude-code",
    model: "",
    streamsText: true,
    async *attempt(req: AttemptRequest): AsyncIterable<HarnessPart> {
      yield { type: "turn-start", turn: req.turnsUsed + 1 } as HarnessPart;
      const r = await req.dispatch(
        { id: "t1", name: "end-without-answer", input: { reason: "no data source" } },
        new AbortController().signal,
      );
      seen.push(r.content);
      yield {
        type: "result",
        outcome: { status: "completed", text: "a guess anyway", lastSegmentStreamedText: false },
        turns: 1,
        sessionId: "s",
      } as HarnessPart;
    },
    forgetSession: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  } as unknown as HarnessDriver;
  try {
    const m = processManifest(dir, {});
    const id = "ses_00000000000000000000000000000003";
    const sessionTools = new Map<string, Tool>();
    const session = new Session({
      id,
      manifest: m,
      workdir: prepareWorkdir(m, id),
      driver: harness as never,
      tools: { specs: () => [], dispatch: () => Promise.reject(new Error("no tools")) },
      sessionTools,
      hooks: NO_HOOKS,
      idleTimeoutMs: 30_000,
      warn: () => {},
    });
    const tool = endWithoutAnswerTool({
      registry: session.registry,
      trace: () => session.trace,
      callees: ["other"],
      crewFile: undefined,
      deadlineSecs: 60,
    });
    sessionTools.set(tool.name, tool);
    await session.begin({});
    const running = session.run();
    const res = session.submit({ text: "go", origin: "peer", trusted: false });
    assert(res.kind === "accepted");
    await res.task.done;
    assert.match(seen[0], /This task ends without an answer/);
    assert.equal(res.task.state, "TASK_STATE_FAILED");
    assert.equal(res.task.response, undefined, "the harness's reply is not the answer");
    assert.deepEqual(toA2A(res.task).metadata, { murmur: { noAnswer: true } });
    // deno-lint-ignore no-explicit-any
    assert.equal((toA2A(res.task).status.message?.parts[0] as any).text, "no data source");
    session.shutdown();
    await running;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
