/**
 * One call of an OpenAPI operation (docs/mcp.md "OpenAPI services"): path parameters filled in
 * (encoded), query parameters appended (a list repeated, an object as JSON), header parameters and
 * the service's `headers` sent, a `body` as JSON; the service's timeout and the task's cancel
 * stop it; redirects are not followed (a 3xx is the answer), so a header is never sent
 * elsewhere. The answer is `HTTP <status>` and its body (an image body an attachment), cut as
 * every tool output is, fenced; a status that is not 2xx is data with `isError`.
 */
import { errorMessage } from "../../errors.ts";
import type { OpenApiService } from "../../manifest/openapi_services.ts";
import { fence } from "../fence.ts";
import { boundText } from "../mcp/result.ts";
import { notReached, type ToolContext, type ToolResult } from "../types.ts";
import { readCapped } from "./load.ts";
import type { Operation } from "./operations.ts";

export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export function requestFor(
  op: Operation,
  baseUrl: string,
  svc: OpenApiService,
  input: Record<string, unknown>,
): Request {
  const path = op.path.replace(
    /\{([^}]+)\}/g,
    (_, n: string) => encodeURIComponent(scalar(input[n])),
  );
  const url = new URL(baseUrl + path);
  const headers = new Headers({ accept: "application/json, */*;q=0.5" });
  for (const [k, v] of Object.entries(svc.headers)) headers.set(k, v);
  for (const p of op.params) {
    const v = input[p.name];
    if (v === undefined || p.in === "path") continue;
    if (p.in === "header") headers.set(p.name, scalar(v));
    else if (Array.isArray(v)) { for (const x of v) url.searchParams.append(p.name, scalar(x)); }
    else url.searchParams.append(p.name, scalar(v));
  }
  const body = op.bodyKey && input[op.bodyKey] !== undefined
    ? JSON.stringify(input[op.bodyKey])
    : undefined;
  if (body !== undefined) headers.set("content-type", "application/json");
  return new Request(url, { method: op.method, headers, body, redirect: "manual" });
}

function scalar(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
}

export async function callOperation(
  op: Operation,
  baseUrl: string,
  svc: OpenApiService,
  input: Record<string, unknown>,
  ctx: ToolContext,
  now: () => number,
): Promise<ToolResult> {
  const started = now();
  const timeout = AbortSignal.timeout(svc.timeoutMs);
  let res: Response;
  try {
    res = await fetch(requestFor(op, baseUrl, svc, input), {
      signal: AbortSignal.any([ctx.signal, timeout]),
    });
  } catch (e) {
    return failed(op, svc, ctx, timeout, e, now() - started);
  }
  const bytes = await readCapped(res, MAX_RESPONSE_BYTES).catch(() => null);
  const type = res.headers.get("content-type") ?? "";
  const head = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`;
  const images = bytes && type.startsWith("image/")
    ? [{ mediaType: type.split(";")[0], data: bytes }]
    : [];
  const text = bytes === null
    ? `${head}\n[the body is over ${MAX_RESPONSE_BYTES} bytes and was not read]`
    : images.length
    ? `${head}\n[${type} body, ${bytes.length} bytes, attached]`
    : `${head}\n${new TextDecoder().decode(bytes)}`;
  const bounded = await boundText(text, ctx.workdir, `openapi-${svc.name}`, now());
  const fenceSource = `tool:${op.name}`;
  return {
    content: fence(fenceSource, bounded.text),
    fenceSource,
    isError: !res.ok,
    exitCode: null,
    truncated: bounded.truncated,
    durationMs: now() - started,
    images,
  };
}

function failed(
  op: Operation,
  svc: OpenApiService,
  ctx: ToolContext,
  timeout: AbortSignal,
  e: unknown,
  ms: number,
): ToolResult {
  if (ctx.signal.aborted) {
    return notReached(`tool '${op.name}' was stopped because the task was canceled`, ms);
  }
  if (timeout.aborted) {
    return notReached(
      `tool '${op.name}' timed out after ${
        svc.timeoutMs / 1000
      } s (openapi_services.${svc.name}.timeout_secs); its outcome is unknown`,
      ms,
    );
  }
  return notReached(`tool '${op.name}' could not reach the service: ${errorMessage(e)}`, ms);
}
