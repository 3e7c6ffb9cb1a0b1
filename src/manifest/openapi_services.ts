/**
 * `openapi_services:` (docs/mcp.md "OpenAPI services"): HTTP services described by an OpenAPI 3
 * document, as a second kind of tool source. A map from the service's name to `{spec, base_url,
 * operations, headers, timeout_secs}`: the document by path (against the manifest's folder) or
 * http(s) url, the base url when the document's `servers` do not give a usable one, the
 * operationIds to offer (absent: every one), and headers sent on every call (values may come from
 * `${NAME}`, never written anywhere). Built with zod directly, as mcp_servers.ts is.
 */
import { z } from "zod";
import { resolve } from "../paths.ts";
import { MCP_SERVER_NAME } from "./mcp_servers.ts";

export const openApiServiceSchema = z.strictObject({
  spec: z.string({ error: "must be a string: a path or an http(s) url" }).min(1, {
    error: "must not be empty",
  }),
  base_url: z.string({ error: "must be a string" }).optional(),
  operations: z.array(z.string({ error: "must be an operationId" }), {
    error: "must be a list of operationIds",
  }).optional(),
  headers: z.record(z.string(), z.string({ error: "must be a string" }), {
    error: "must be a mapping of header names to values",
  }).optional(),
  timeout_secs: z.preprocess(
    (v) => (typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v),
    z.number({ error: "must be a number of seconds > 0 and <= 3600" }).gt(0, {
      error: "must be a number of seconds > 0 and <= 3600",
    }).max(3600, { error: "must be a number of seconds > 0 and <= 3600" }),
  ).optional(),
}, { error: "must be a mapping of keys" });

export const openApiServicesSchema = z.record(z.string(), openApiServiceSchema, {
  error: "must be a mapping from a service's name to its settings",
});

export type OpenApiServicesDoc = z.output<typeof openApiServicesSchema>;

export interface OpenApiService {
  name: string;
  /** An absolute path, or an http(s) url. */
  spec: string;
  baseUrl?: string;
  /** operationIds offered; absent: every operation. */
  operations?: string[];
  headers: Record<string, string>;
  timeoutMs: number;
}

const HTTP = /^https?:\/\/[^/\s]+/;

export function openApiServiceProblems(
  name: string,
  s: z.output<typeof openApiServiceSchema>,
): [string, string][] {
  const out: [string, string][] = [];
  if (!MCP_SERVER_NAME.test(name) || name.length > 40) {
    out.push([
      "",
      "a service's name is letters, digits, '-' and single '_' (at most 40), so openapi__<service>__<operation> names it",
    ]);
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(s.spec) && !HTTP.test(s.spec)) {
    out.push(["spec", `'${s.spec}' is neither a path nor an http(s) url`]);
  }
  if (s.base_url !== undefined && !HTTP.test(s.base_url)) {
    out.push(["base_url", `'${s.base_url}' is not an http(s) url`]);
  }
  return out;
}

export function normalizeOpenApiServices(doc: OpenApiServicesDoc, dir: string): OpenApiService[] {
  return Object.entries(doc).map(([name, s]) => ({
    name,
    spec: HTTP.test(s.spec) ? s.spec : resolve(dir, s.spec),
    ...(s.base_url !== undefined && { baseUrl: s.base_url.replace(/\/+$/, "") }),
    ...(s.operations && { operations: s.operations }),
    headers: s.headers ?? {},
    timeoutMs: (s.timeout_secs ?? 30) * 1000,
  }));
}
