/**
 * The Anthropic Messages API as a fake speaks it: `POST /v1/messages` with `x-api-key`, answered
 * with the documented SSE stream (`message_start`, `content_block_start` / `_delta` / `_stop`,
 * `ping`, `message_delta` with the stop reason and usage, `message_stop`) or the documented error
 * body `{"type":"error","error":{"type","message"}}`.
 */
import { blocksOf, type FakeTurn, sseEvent, stopOf, usageOf, type WireChunk } from "./plan.ts";
import type { ProviderWire } from "./server.ts";

const STOP: Record<string, string> = {
  end: "end_turn",
  tool: "tool_use",
  max_tokens: "max_tokens",
};

const ERROR_TYPE: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

export const anthropicWire: ProviderWire = {
  path: "/v1/messages",
  authorized(req, apiKey) {
    return apiKey === undefined || req.headers.get("x-api-key") === apiKey;
  },
  errorBody(status, message) {
    const type = ERROR_TYPE[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return {
      type: "error",
      error: { type, message: message ?? (status === 401 ? "invalid x-api-key" : type) },
    };
  },
  streamErrorEvent(message) {
    return sseEvent(
      { type: "error", error: { type: "overloaded_error", message: message ?? "Overloaded" } },
      "error",
    );
  },
  malformedEvent() {
    // A delta whose JSON breaks off: what a proxy truncating lines would forward.
    return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de\n\n';
  },
  render(turn: FakeTurn, model: string): WireChunk[] {
    const usage = usageOf(turn);
    const out: WireChunk[] = [];
    out.push(sseEvent({
      type: "message_start",
      message: {
        id: "msg_01FakeAnthropic0000000001",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }, "message_start"));
    out.push(sseEvent({ type: "ping" }, "ping"));
    let index = 0;
    for (const block of blocksOf(turn)) {
      if (block.kind === "delay") {
        out.push({ delayMs: block.ms });
        continue;
      }
      if (block.kind === "text" || block.kind === "thinking") {
        const text = block.kind === "text";
        out.push(sseEvent({
          type: "content_block_start",
          index,
          content_block: text ? { type: "text", text: "" } : {
            type: "thinking",
            thinking: "",
            signature: "",
          },
        }, "content_block_start"));
        for (const d of block.deltas) {
          if (typeof d !== "string") {
            out.push(d);
            continue;
          }
          out.push(sseEvent({
            type: "content_block_delta",
            index,
            delta: text ? { type: "text_delta", text: d } : { type: "thinking_delta", thinking: d },
          }, "content_block_delta"));
        }
        if (!text) {
          out.push(sseEvent({
            type: "content_block_delta",
            index,
            delta: {
              type: "signature_delta",
              signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            },
          }, "content_block_delta"));
        }
      } else {
        out.push(sseEvent({
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        }, "content_block_start"));
        for (const piece of block.pieces) {
          out.push(sseEvent({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: piece },
          }, "content_block_delta"));
        }
      }
      out.push(sseEvent({ type: "content_block_stop", index }, "content_block_stop"));
      index++;
    }
    out.push(sseEvent({
      type: "message_delta",
      delta: { stop_reason: STOP[stopOf(turn)], stop_sequence: null },
      usage: { output_tokens: usage.output },
    }, "message_delta"));
    out.push(sseEvent({ type: "message_stop" }, "message_stop"));
    return out;
  },
};
