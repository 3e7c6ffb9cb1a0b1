/**
 * What each harness dialect adds to its launch when the session exports spans
 * (src/drivers/process/telemetry.ts): the task's traceparent and the collector in the
 * environment, the collector's headers there too and never on argv, content switches only with
 * `otel_content`; nothing at all without export.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { claudeCode } from "../../src/drivers/process/claude_code.ts";
import { codex } from "../../src/drivers/process/codex.ts";
import type { HarnessTelemetry, LaunchRequest } from "../../src/drivers/process/types.ts";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const telemetry: HarnessTelemetry = {
  traceparent: TRACEPARENT,
  tracesUrl: "http://127.0.0.1:4318/v1/traces",
  headers: { authorization: "Bearer s3cret value" },
  content: false,
};
const base: LaunchRequest = {
  systemPrompt: "notices",
  session: { id: null, mode: "new" },
  prompt: "hi",
};

for (const [name, dialect] of [["claude-code", claudeCode], ["codex", codex]] as const) {
  Deno.test(`${name}: with export, traceparent and collector in the env, the secret never on argv`, () => {
    const plan = dialect.launch({ ...base, telemetry });
    assertEquals(plan.env.TRACEPARENT, TRACEPARENT);
    assertEquals(plan.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, telemetry.tracesUrl);
    assertEquals(plan.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, "http/json");
    assertEquals(
      plan.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
      "authorization=Bearer%20s3cret%20value",
    );
    assert.ok(!plan.args.some((a) => a.includes("s3cret")), "no header value on argv");
    const off = dialect.launch(base);
    assert.ok(!Object.keys(off.env).some((k) => k.startsWith("OTEL_") || k === "TRACEPARENT"));
    assert.ok(!off.args.some((a) => a.includes("otel")));
  });
}

Deno.test("claude-code: its own telemetry on, traces only; prompts and tool details only with content", () => {
  const env = claudeCode.launch({ ...base, telemetry }).env;
  assertEquals(
    [
      env.CLAUDE_CODE_ENABLE_TELEMETRY,
      env.OTEL_TRACES_EXPORTER,
      env.OTEL_METRICS_EXPORTER,
      env.OTEL_LOGS_EXPORTER,
    ],
    ["1", "otlp", "none", "none"],
  );
  assertEquals(env.OTEL_LOG_USER_PROMPTS, undefined);
  const content = claudeCode.launch({ ...base, telemetry: { ...telemetry, content: true } }).env;
  assertEquals([content.OTEL_LOG_USER_PROMPTS, content.OTEL_LOG_TOOL_DETAILS], ["1", "1"]);
});

Deno.test("codex: its trace exporter is a -c key before the prompt; the user prompt only with content", () => {
  const args = codex.launch({ ...base, telemetry }).args;
  const at = args.indexOf(
    'otel.trace_exporter={otlp-http={endpoint="http://127.0.0.1:4318/v1/traces",protocol="json"}}',
  );
  assert.ok(at > 0 && args[at - 1] === "-c" && at < args.indexOf("--"));
  assert.ok(!args.includes("otel.log_user_prompt=true"));
  const content = codex.launch({ ...base, telemetry: { ...telemetry, content: true } }).args;
  assert.ok(content.includes("otel.log_user_prompt=true"));
});
