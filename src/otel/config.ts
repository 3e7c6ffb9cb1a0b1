/**
 * Where a session's spans go (docs/opentelemetry.md): `observability.otel_endpoint` in the
 * manifest, else the standard environment variables of the OTLP exporter specification
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, a full URL, then `OTEL_EXPORTER_OTLP_ENDPOINT`, a base
 * URL); `OTEL_EXPORTER_OTLP_HEADERS` (and `_TRACES_HEADERS`) add request headers either way, and
 * `OTEL_SDK_DISABLED=true` turns export off. Nothing set: no export, nothing loaded.
 *
 * Read once at launch; a value that cannot be used is a `W-OTEL-001` warning and no export, never
 * a failed launch (the spans are an observer's, the session is the user's).
 */
import { warningLine } from "../errors.ts";
import type { ObservabilityConfig } from "../manifest/types.ts";

export interface OtelConfig {
  /** The full URL spans are POSTed to: `<endpoint>/v1/traces`. */
  url: string;
  headers: Record<string, string>;
  /** Where the URL came from, for the trace and for `-v`. */
  source: "manifest" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_EXPORTER_OTLP_ENDPOINT";
  /** Tool inputs and shell command lines on spans (`observability.otel_content`). */
  content: boolean;
}

export type Env = (name: string) => string | undefined;

/** `<base>/v1/traces`, as the OTLP/HTTP specification builds the signal path from a base URL. */
export function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

function httpUrl(value: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** A value the environment set that cannot be used (the message names it). */
export class OtelEnvError extends Error {}

/**
 * `OTEL_EXPORTER_OTLP_HEADERS`: `key1=value1,key2=value2`, values percent-encoded (the W3C
 * baggage form the specification names). Throws on an entry without `=` or an empty key.
 */
export function parseHeaders(text: string, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue;
    const eq = entry.indexOf("=");
    const key = eq < 0 ? "" : entry.slice(0, eq).trim();
    if (!key) {
      throw new OtelEnvError(`${name}: '${entry.trim()}' is not key=value`);
    }
    let value = entry.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // not percent-encoded after all: taken as written
    }
    out[key.toLowerCase()] = value;
  }
  return out;
}

/** The export this launch does, or null; `warn` hears why a value set was not used. */
export function otelConfig(
  manifest: ObservabilityConfig,
  env: Env,
  warn: (line: string) => void,
): OtelConfig | null {
  if ((env("OTEL_SDK_DISABLED") ?? "").trim().toLowerCase() === "true") return null;
  let url: string | undefined;
  let source: OtelConfig["source"] | undefined;
  if (manifest.otelEndpoint) {
    url = tracesUrl(manifest.otelEndpoint);
    source = "manifest";
  } else {
    for (
      const name of ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] as const
    ) {
      const value = env(name)?.trim();
      if (!value) continue;
      if (!httpUrl(value)) {
        warn(warningLine(
          "W-OTEL-001",
          `${name}='${value}' is not an http:// or https:// URL: spans are not exported`,
        ));
        return null;
      }
      url = name === "OTEL_EXPORTER_OTLP_ENDPOINT" ? tracesUrl(value) : value;
      source = name;
      break;
    }
  }
  if (!url || !source) return null;
  const headers: Record<string, string> = {};
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    const text = env(name);
    if (!text) continue;
    try {
      Object.assign(headers, parseHeaders(text, name));
    } catch (e) {
      if (!(e instanceof OtelEnvError)) throw e;
      warn(warningLine("W-OTEL-001", `${e.message}: spans are not exported`));
      return null;
    }
  }
  return { url, headers, source, content: manifest.otelContent };
}
