/**
 * The suites scripts/test.ts runs a second time on the bundle (`MUR_TEST_ENTRY=bundle`,
 * tests/helpers/mur.ts): between them they start `mur` through every module the bundle loads on
 * first use (src/lazy.ts `LAZY_MODULES`) and each npm package those bundle, on the wire:
 * the commands (run, watch, stop, cancel, ps, trace, send, answer, attach, edge), a formation and a member call, the
 * HTTP providers, the Claude Code CLI, OpenTelemetry export, push delivery, publishing to Redis,
 * the SDK client and the live page's files, MCP servers and OpenAPI services as tool sources. tests/build/bundle_test.ts checks the list covers
 * every lazily loaded module.
 */
export const BUNDLE_SUITES: Record<string, readonly string[]> = {
  "tests/run/lifecycle_test.ts": ["cli/run.ts"],
  "tests/run/output_test.ts": ["cli/run.ts"],
  "tests/cli/watch_real_test.ts": ["cli/watch.ts"],
  "tests/cli/stop_test.ts": ["cli/stop.ts"],
  "tests/cli/cancel_ps_test.ts": ["cli/cancel.ts", "cli/ps.ts"],
  "tests/cli/trace_test.ts": ["cli/trace.ts"],
  "tests/cli/approve_test.ts": ["cli/approve.ts", "cli/deny.ts"],
  "tests/cli/send_answer_test.ts": ["cli/send.ts", "cli/answer.ts"],
  "tests/cli/attach_tmux_test.ts": ["cli/attach.ts"],
  "tests/cluster/edge_test.ts": ["cli/edge.ts"],
  "tests/crew/formation_test.ts": ["crew/formation/launch.ts", "crew/formation/formation_stop.ts"],
  "tests/crew/call_member_test.ts": ["session/crew_tools.ts"],
  "tests/otel/export_test.ts": ["otel/export.ts"],
  "tests/push/deliveries_test.ts": ["push/push.ts"],
  "tests/cluster/publish_test.ts": ["cluster/publish_session.ts", "cluster/client.ts"],
  "tests/drivers/http/e2e_test.ts": ["drivers/http/mod.ts"],
  "tests/process_e2e/claude_test.ts": ["drivers/process/mod.ts"],
  "tests/tools/mcp/capsule_test.ts": ["cli/run_sources.ts"],
  "tests/tools/openapi/capsule_test.ts": ["cli/run_sources.ts"],
  "tests/door/sdk_client_test.ts": [],
  "tests/stage/example_test.ts": [],
  "tests/ui/routes_test.ts": [],
  "tests/build/bundle_test.ts": [],
};
