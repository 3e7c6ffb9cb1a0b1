/**
 * src/otel/config.ts: where spans go. The manifest's `observability.otel_endpoint` first, then the
 * OTLP exporter's standard environment variables; headers from the environment either way;
 * `OTEL_SDK_DISABLED=true` turns it off; an unusable value is a W-OTEL-001 warning and no export.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { otelConfig, parseHeaders, tracesUrl } from "../../src/otel/config.ts";

function resolve(
  manifest: { otelEndpoint?: string; otelContent?: boolean },
  env: Record<string, string>,
) {
  const warnings: string[] = [];
  const config = otelConfig(
    { otelContent: false, ...manifest },
    (n) => env[n],
    (w) => warnings.push(w),
  );
  return { config, warnings };
}

Deno.test("nothing named: no export, no warning", () => {
  assertEquals(resolve({}, {}), { config: null, warnings: [] });
});

Deno.test("the manifest's endpoint is a base URL: spans go to <endpoint>/v1/traces", () => {
  assertEquals(tracesUrl("http://c:4318"), "http://c:4318/v1/traces");
  assertEquals(tracesUrl("https://c/otlp//"), "https://c/otlp/v1/traces");
  const { config } = resolve({ otelEndpoint: "http://c:4318/", otelContent: true }, {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://elsewhere:4318",
    OTEL_EXPORTER_OTLP_HEADERS: "api-key=s3cret",
  });
  assertEquals(config, {
    url: "http://c:4318/v1/traces",
    headers: { "api-key": "s3cret" },
    source: "manifest",
    content: true,
  });
});

Deno.test("the environment: the traces endpoint as is, else the base endpoint plus /v1/traces", () => {
  assertEquals(
    resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: "https://api.honeycomb.io" }).config?.url,
    "https://api.honeycomb.io/v1/traces",
  );
  const both = resolve({}, {
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://base",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector/custom/path",
  }).config!;
  assertEquals([both.url, both.source], [
    "https://collector/custom/path",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  ]);
});

Deno.test("OTEL_EXPORTER_OTLP_HEADERS: key=value pairs, percent-decoded; the traces ones win", () => {
  assertEquals(parseHeaders("Authorization=Basic%20YWJj , x-a=1,,", "H"), {
    authorization: "Basic YWJj",
    "x-a": "1",
  });
  const { config } = resolve({}, {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://c",
    OTEL_EXPORTER_OTLP_HEADERS: "x-a=1,x-b=2",
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-b=3",
  });
  assertEquals(config?.headers, { "x-a": "1", "x-b": "3" });
});

Deno.test("OTEL_SDK_DISABLED=true turns export off, whatever else is set", () => {
  assertEquals(
    resolve({ otelEndpoint: "http://c" }, { OTEL_SDK_DISABLED: "TRUE" }),
    { config: null, warnings: [] },
  );
});

Deno.test("an unusable environment value: W-OTEL-001 naming it, and no export", () => {
  assertEquals(resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }), {
    config: null,
    warnings: [
      "warning[W-OTEL-001]: OTEL_EXPORTER_OTLP_ENDPOINT='collector:4318' is not an http:// or https:// URL: spans are not exported",
    ],
  });
  assertEquals(
    resolve({}, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_HEADERS: "novalue" }),
    {
      config: null,
      warnings: [
        "warning[W-OTEL-001]: OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not key=value: spans are not exported",
      ],
    },
  );
});
