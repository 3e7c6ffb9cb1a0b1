/**
 * The process transport under OpenTelemetry export (docs/opentelemetry.md): the real Claude
 * Code and Codex CLIs, run by `mur run` offline against their fake endpoints, get the collector
 * and the task span's `traceparent`, and their own spans arrive at the same OTLP receiver in the
 * session's trace, under the task's span. The collector's header reaches them through the
 * environment, never argv.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { startCodexEndpoint } from "../../scripts/fakes/codex_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { startCapsule } from "../helpers/capsule.ts";
import { finishedWithin, ofType, type Rec, traceOf } from "../session/helpers.ts";
import { type ReceivedSpan, startReceiver } from "./receiver.ts";
import { codexHome } from "../helpers/codex_home.ts";

/** Runs one launch task on a harness with export on; the receiver's spans and the trace. */
async function runHarness(
  driver: "claude-code" | "codex",
  env: (home: string) => Promise<string[]>,
  endpointClose: () => Promise<void>,
) {
  const command = await ensureCli(driver);
  const receiver = startReceiver();
  const home = await Deno.makeTempDir({ prefix: "mur-otel-home-" });
  try {
    const cap = await startCapsule({
      manifest: {
        name: "harnessed",
        version: "0.2.0",
        inference: {
          transport: "process",
          driver,
          command,
          env: [`HOME=${home}`, ...await env(home)],
          max_turns: 4,
        },
        observability: { otel_endpoint: receiver.url },
      },
      args: ["--task", "say hello"],
      env: { OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=k%201" },
    });
    let trace: Rec[];
    try {
      const end = await finishedWithin(cap, 120_000);
      assertEquals(end.code, 0, end.stderr);
      trace = await traceOf(cap.ready.workdir);
    } finally {
      await cap.close();
    }
    return { spans: receiver.spans, requests: receiver.requests, trace };
  } finally {
    await receiver.close();
    await endpointClose();
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

function muridsOf(spans: ReceivedSpan[]) {
  const task = spans.find((s) =>
    s.name === "capsule.task" && s.resource["service.name"] === "harnessed"
  );
  assert.ok(task, "mur's task span arrived");
  return task;
}

Deno.test("claude-code's own spans join the session's trace under the task span", async () => {
  const endpoint = startClaudeEndpoint();
  const { spans, requests, trace } = await runHarness(
    "claude-code",
    () =>
      Promise.resolve([
        `ANTHROPIC_BASE_URL=${endpoint.url}`,
        "ANTHROPIC_API_KEY=sk-ant-fake",
        "CLAUDE_CODE_MAX_RETRIES=0",
      ]),
    () => endpoint.close(),
  );
  const task = muridsOf(spans);
  const interaction = spans.find((s) => s.name === "claude_code.interaction");
  assert.ok(interaction, `Claude Code sent its spans: ${[...new Set(spans.map((s) => s.name))]}`);
  assertEquals(interaction.resource["service.name"], "claude-code");
  assertEquals(interaction.traceId, task.traceId);
  assertEquals(interaction.parentSpanId, task.spanId);
  // Its model calls hang under its interaction, all in the one trace.
  const llm = spans.filter((s) => s.name === "claude_code.llm_request");
  assert.ok(llm.length > 0);
  for (const s of llm) assertEquals(s.traceId, task.traceId);
  // mur's harness span, and the names (never the values) of what the harness was given.
  const harness = spans.find((s) => s.name === "capsule.harness");
  assertEquals(harness?.parentSpanId, task.spanId);
  const names = ofType(trace, "harness_start")[0].env_names as string[];
  for (
    const n of ["TRACEPARENT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "CLAUDE_CODE_ENABLE_TELEMETRY"]
  ) {
    assert.ok(names.includes(n), n);
  }
  // Every request, mur's and the harness's, carried the collector's header.
  for (const q of requests) assertEquals(q.headers.get("x-collector-key"), "k 1");
});

Deno.test("codex's own spans join the session's trace under the task span", async () => {
  const endpoint = startCodexEndpoint();
  const { spans, requests, trace } = await runHarness(
    "codex",
    async (home) => {
      return (await codexHome(home, endpoint.url)).env;
    },
    () => endpoint.close(),
  );
  const task = muridsOf(spans);
  const exec = spans.find((s) => s.name === "codex.exec");
  assert.ok(exec, `Codex sent its spans: ${[...new Set(spans.map((s) => s.name))]}`);
  assertEquals(exec.traceId, task.traceId);
  assertEquals(exec.parentSpanId, task.spanId);
  assert.ok(ofType(trace, "harness_start")[0]);
  for (const q of requests) assertEquals(q.headers.get("x-collector-key"), "k 1");
});
