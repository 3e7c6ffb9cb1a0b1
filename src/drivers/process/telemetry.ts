/**
 * What a harness gets so its own OpenTelemetry spans join the session's trace (README
 * "OpenTelemetry": the process transport). Both harnesses mur drives read the W3C trace context
 * from `TRACEPARENT` (the OpenTelemetry environment carrier) in non-interactive runs, and send
 * OTLP/HTTP JSON to the standard `OTEL_EXPORTER_OTLP_TRACES_*` variables once their own
 * telemetry is switched on, which each dialect does its own way (claude_code.ts, codex.ts).
 * Headers (a collector's API key) go in the environment, never on argv.
 */
import type { HarnessTelemetry } from "./types.ts";

/** The standard variables: parent context, traces endpoint, its headers, JSON protocol. */
export function otlpEnv(t: HarnessTelemetry): Record<string, string> {
  const headers = Object.entries(t.headers)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join(",");
  return {
    TRACEPARENT: t.traceparent,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: t.tracesUrl,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    ...(headers && { OTEL_EXPORTER_OTLP_TRACES_HEADERS: headers }),
  };
}
