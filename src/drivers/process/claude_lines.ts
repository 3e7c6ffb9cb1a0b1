/**
 * Claude Code's stream-json lines as the dialect reads them (README "Coding-agent CLIs as the
 * model"): the schemas (only the fields read; everything else passes through), the quota windows
 * of a rate-limit line, and how a result line ended the turn.
 */
import { z } from "zod";
import type { QuotaWindow } from "../../events/frames.ts";
import type { HarnessEvent, HarnessFailureKind } from "./types.ts";

export const SystemLine = z.looseObject({
  subtype: z.string().optional(),
  session_id: z.string().optional(),
  apiKeySource: z.string().optional(),
  model: z.string().optional(),
  attempt: z.number().optional(),
  error: z.unknown().optional(),
  error_status: z.unknown().optional(),
  /** `init`: each MCP server the harness was given and how its connection went. */
  mcp_servers: z.array(z.looseObject({ name: z.string(), status: z.string() })).optional(),
});
export const Block = z.looseObject({ type: z.string() });
export const MessageLine = z.looseObject({
  message: z.looseObject({
    model: z.string().optional(),
    content: z.union([z.string(), z.array(Block)]).optional(),
  }),
});
export const StreamEvent = z.looseObject({
  event: z.looseObject({
    type: z.string(),
    index: z.number().optional(),
    content_block: z.looseObject({
      type: z.string(),
      id: z.string().optional(),
      name: z.string().optional(),
    }).optional(),
    delta: z.looseObject({
      type: z.string().optional(),
      text: z.string().optional(),
      thinking: z.string().optional(),
      partial_json: z.string().optional(),
    }).optional(),
  }),
});
export const ResultLine = z.looseObject({
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  api_error_status: z.number().nullable().optional(),
  result: z.string().nullable().optional(),
  terminal_reason: z.string().nullable().optional(),
  errors: z.array(z.unknown()).optional(),
  usage: z.looseObject({
    input_tokens: z.number().optional(),
    output_tokens: z.number().optional(),
    cache_read_input_tokens: z.number().optional(),
    cache_creation_input_tokens: z.number().optional(),
    output_tokens_details: z.looseObject({ thinking_tokens: z.number().optional() }).optional(),
  }).optional(),
});
export const Window = z.looseObject({
  utilization: z.number().optional(),
  resetsAt: z.number().optional(),
  status: z.string().optional(),
});
export const RateLimitLine = z.looseObject({
  rate_limit_info: z.looseObject({
    status: z.string().optional(),
    resetsAt: z.number().optional(),
    rateLimitType: z.string().optional(),
    utilization: z.number().optional(),
    unifiedWindows: z.record(z.string(), Window).optional(),
  }),
});
export const SuggestionLine = z.looseObject({ suggestion: z.string().optional() });

export function quotaWindows(info: z.infer<typeof RateLimitLine>["rate_limit_info"]) {
  const windows: QuotaWindow[] = [];
  const add = (key: string, w: z.infer<typeof Window>) => {
    const win: QuotaWindow = { name: key.replaceAll("_", "-") };
    if (w.utilization !== undefined) win.used = w.utilization;
    if (w.resetsAt !== undefined) win.resetsAtMs = Math.round(w.resetsAt * 1000);
    if (key === "five_hour") win.windowMinutes = 300;
    else if (key.startsWith("seven_day")) win.windowMinutes = 10080;
    const state = w.status === "allowed"
      ? "ok"
      : w.status === "allowed_warning"
      ? "warning"
      : w.status === "rejected"
      ? "exhausted"
      : undefined;
    if (state) win.state = state;
    windows.push(win);
  };
  // The top-level fields describe the representative window (`rateLimitType`); 2.1.328 lists
  // only the other windows under `unifiedWindows` when it names one at the top.
  const unified = info.unifiedWindows ?? {};
  if (info.rateLimitType && !(info.rateLimitType in unified)) {
    add(info.rateLimitType, {
      utilization: info.utilization,
      resetsAt: info.resetsAt,
      status: info.status,
    });
  }
  for (const [key, w] of Object.entries(unified)) add(key, w);
  return windows;
}

/** A result line, judged by is_error (never by subtype); kind in a fixed order. */
export function classifyResult(r: z.infer<typeof ResultLine>): HarnessEvent {
  if (r.is_error === false) return { kind: "turn-end", result: r.result ?? "" };
  let failureKind: HarnessFailureKind = "harness-error";
  if (r.api_error_status === 401 || r.api_error_status === 403) failureKind = "auth";
  else if (r.api_error_status === 429) failureKind = "quota";
  else if (r.terminal_reason === "aborted_streaming") failureKind = "canceled";
  else if (r.subtype === "error_max_turns") failureKind = "max-turns";
  let message = typeof r.result === "string" && r.result.trim() ? r.result : "";
  if (!message && r.errors?.length) {
    message = r.errors.filter((e) => typeof e === "string" && !e.startsWith("[ede_diagnostic]"))
      .join("; ");
  }
  if (!message) {
    const bits = [
      r.subtype,
      r.terminal_reason,
      r.api_error_status != null ? `status ${r.api_error_status}` : undefined,
    ]
      .filter((b) => b);
    message = bits.length
      ? `the harness reported ${bits.join(", ")}`
      : "the harness reported an error";
  }
  return { kind: "turn-failed", failureKind, message };
}
