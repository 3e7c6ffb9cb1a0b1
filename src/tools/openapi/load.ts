/**
 * An OpenAPI service's document, read and checked (docs/mcp.md "OpenAPI services"): from its
 * path or url (bounded in time and size), JSON or YAML, validated and its `$ref`s resolved by
 * @apidevtools/swagger-parser (references inside the document only: an external one is an
 * error, so a document cannot make mur read other files or urls), OpenAPI 3 only. The base url
 * is `base_url`, else the document's first server url (relative ones against the document's url).
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { parse as parseYaml } from "yaml";
import { errorMessage } from "../../errors.ts";
import type { OpenApiService } from "../../manifest/openapi_services.ts";

export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
export const FETCH_MS = 10_000;

export interface LoadedDocument {
  doc: Record<string, unknown>;
  baseUrl: string;
}

export async function loadDocument(svc: OpenApiService): Promise<LoadedDocument> {
  const text = await readSpec(svc.spec);
  let raw: unknown;
  try {
    raw = /^\s*[{[]/.test(text) ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new Error(`the document is not JSON or YAML: ${errorMessage(e)}`);
  }
  if (
    !raw || typeof raw !== "object" || typeof (raw as { openapi?: unknown }).openapi !== "string"
  ) {
    throw new Error("the document is not OpenAPI 3 (no `openapi:` version)");
  }
  let doc: Record<string, unknown>;
  try {
    // deno-lint-ignore no-explicit-any
    doc = await SwaggerParser.validate(raw as any, { resolve: { external: false } }) as Record<
      string,
      unknown
    >;
  } catch (e) {
    throw new Error(
      `the document is not valid OpenAPI: ${errorMessage(e).split("\n").slice(0, 3).join(" ")}`,
    );
  }
  const outside = externalRef(raw);
  if (outside) {
    throw new Error(
      `the document refers outside itself ($ref '${outside}'); mur reads the one document only`,
    );
  }
  return { doc, baseUrl: baseUrlOf(svc, doc) };
}

/** The first `$ref` that does not point inside the document, if any. */
function externalRef(v: unknown, depth = 0): string | null {
  if (depth > 64 || !v || typeof v !== "object") return null;
  for (const [k, x] of Object.entries(v)) {
    if (k === "$ref" && typeof x === "string" && !x.startsWith("#")) return x;
    const found = externalRef(x, depth + 1);
    if (found) return found;
  }
  return null;
}

async function readSpec(spec: string): Promise<string> {
  if (!/^https?:\/\//.test(spec)) {
    const st = await Deno.stat(spec).catch((e) => {
      throw new Error(`cannot read ${spec}: ${errorMessage(e)}`);
    });
    if (st.size > MAX_DOCUMENT_BYTES) {
      throw new Error(`${spec} is over ${MAX_DOCUMENT_BYTES} bytes`);
    }
    return await Deno.readTextFile(spec);
  }
  let res: Response;
  try {
    res = await fetch(spec, { signal: AbortSignal.timeout(FETCH_MS), redirect: "follow" });
  } catch (e) {
    throw new Error(`cannot fetch ${spec}: ${errorMessage(e)}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`fetching ${spec} answered HTTP ${res.status}`);
  }
  const bytes = await readCapped(res, MAX_DOCUMENT_BYTES);
  if (!bytes) throw new Error(`${spec} is over ${MAX_DOCUMENT_BYTES} bytes`);
  return new TextDecoder().decode(bytes);
}

/** The body, or null when it is over `cap` bytes (the rest is not read). */
export async function readCapped(res: Response, cap: number): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let n = 0;
  for await (const c of res.body ?? []) {
    n += c.length;
    if (n > cap) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    chunks.push(c);
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function baseUrlOf(svc: OpenApiService, doc: Record<string, unknown>): string {
  if (svc.baseUrl) return svc.baseUrl;
  const servers = (doc.servers ?? []) as { url?: string }[];
  const first = servers.find((s) => typeof s.url === "string")?.url;
  if (first && /^https?:\/\//.test(first)) return first.replace(/\/+$/, "");
  if (first && /^https?:\/\//.test(svc.spec)) {
    return new URL(first, svc.spec).href.replace(/\/+$/, "");
  }
  throw new Error("no base url: set base_url (the document names no absolute server url)");
}
