/**
 * The caller's side of a member's door (docs/crews.md): one JSON-RPC request with the bearer
 * token the crew file gives, `A2A-Version: 1.0`, and the peer headers a member reads (the task
 * runs in its `peer` lane; src/door/server.ts `ctxFor`). Every way a request can go wrong comes
 * back as a value, so a call always ends with an answer.
 */
import { errorMessage } from "../../errors.ts";
import { idsOf } from "../../a2a/call_record.ts";
import type { CrewMember } from "./crew_file.ts";

export type DoorAnswer =
  | { kind: "result"; result: Record<string, unknown> }
  | { kind: "rpc_error"; code: number; message: string; data?: unknown }
  /** An HTTP refusal (401, 403, …): its status, `error` and `message`. */
  | { kind: "refused"; status: number; error: string; message: string }
  /** No answer at all: connection refused or reset, or the bound passed. */
  | { kind: "unreachable"; why: string };

/** Every request to a member is bounded by this. */
export const REQUEST_MS = 5_000;

/** The headers every request to a member carries. */
export function memberHeaders(m: CrewMember, trust: "trusted" | "untrusted") {
  const h: Record<string, string> = {
    "content-type": "application/json",
    "a2a-version": "1.0",
    "x-murmur-task-origin": "peer",
    "x-murmur-task-trust": trust,
  };
  if (m.token) h.authorization = `Bearer ${m.token}`;
  return h;
}

export async function memberRpc(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  id: string,
  method: string,
  params: Record<string, unknown>,
  timeoutMs = REQUEST_MS,
): Promise<DoorAnswer> {
  if (!m.observe) return await request(m, trust, id, method, params, timeoutMs);
  const startedAt = Date.now();
  const a = await request(m, trust, id, method, params, timeoutMs);
  m.observe({
    side: "client",
    method,
    startedAt,
    endedAt: Date.now(),
    ...idsOf(params, a.kind === "result" ? a.result : undefined),
    ...(a.kind !== "result" && { error: a.kind === "unreachable" ? a.why : a.message }),
    peer: new URL(m.url).host,
  });
  return a;
}

async function request(
  m: CrewMember,
  trust: "trusted" | "untrusted",
  id: string,
  method: string,
  params: Record<string, unknown>,
  timeoutMs: number,
): Promise<DoorAnswer> {
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${m.url}/`, {
      method: "POST",
      headers: memberHeaders(m, trust),
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      signal,
    });
    text = await res.text();
  } catch (e) {
    return {
      kind: "unreachable",
      why: signal.aborted ? `no answer within ${timeoutMs / 1000}s` : errorMessage(e),
    };
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch { /* a refusal body that is not JSON keeps its text below */ }
  if (!res.ok) {
    return {
      kind: "refused",
      status: res.status,
      error: typeof body.error === "string" ? body.error : "",
      message: typeof body.message === "string" ? body.message : text.trim().slice(0, 500),
    };
  }
  const err = body.error as { code?: number; message?: string; data?: unknown } | undefined;
  if (err && typeof err === "object") {
    return { kind: "rpc_error", code: err.code ?? 0, message: err.message ?? "", data: err.data };
  }
  if (!body.result || typeof body.result !== "object") {
    return { kind: "refused", status: res.status, error: "", message: "not a JSON-RPC answer" };
  }
  return { kind: "result", result: body.result as Record<string, unknown> };
}

/** What a failed request says, in the call's answer (never the door's address or token). */
export function describeFailure(member: string, a: Exclude<DoorAnswer, { kind: "result" }>) {
  switch (a.kind) {
    case "rpc_error":
      return `${member}'s door answered with JSON-RPC error ${a.code}: ${a.message}`;
    case "refused":
      return `${member}'s door answered ${a.status}${a.error ? ` ${a.error}` : ""}: ${a.message}`;
    case "unreachable":
      return `${member}'s door could not be reached: ${scrub(a.why)}`;
  }
}

/** Transport errors name the socket; the model is never told the member's address. */
function scrub(why: string): string {
  return why.replace(/https?:\/\/[^\s)]+/g, "<member door>").replace(
    /\b\d{1,3}(\.\d{1,3}){3}:\d+\b/g,
    "<member door>",
  );
}
