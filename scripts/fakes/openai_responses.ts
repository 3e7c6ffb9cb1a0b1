/**
 * The OpenAI Responses API as a fake speaks it: `POST /v1/responses` with `Authorization: Bearer`,
 * answered with the documented typed SSE events (`response.created`, `response.output_item.added`
 * / `.done` for reasoning, message and function_call items, `response.reasoning_summary_text.delta`,
 * `response.output_text.delta`, `response.function_call_arguments.delta`, then
 * `response.completed`, or `response.incomplete` with `incomplete_details.reason`).
 */
import { blocksOf, type FakeTurn, sseEvent, stopOf, usageOf, type WireChunk } from "./plan.ts";
import type { ProviderWire } from "./server.ts";
import { openaiErrorBody } from "./openai_errors.ts";

export const openaiResponsesWire: ProviderWire = {
  path: "/v1/responses",
  authorized(req, apiKey) {
    return apiKey === undefined || req.headers.get("authorization") === `Bearer ${apiKey}`;
  },
  errorBody: (status, message, req) => openaiErrorBody(status, message, req),
  streamErrorEvent(message) {
    return sseEvent({
      type: "error",
      sequence_number: 0,
      code: "server_error",
      message: message ?? "The server had an error while processing your request.",
      param: null,
    }, "error");
  },
  malformedEvent() {
    return 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_\n\n';
  },
  render(turn: FakeTurn, model: string): WireChunk[] {
    const usage = usageOf(turn);
    const stop = stopOf(turn);
    let seq = 0;
    const ev = (type: string, fields: Record<string, unknown>) =>
      sseEvent({ type, sequence_number: seq++, ...fields }, type);
    const response = (status: string, output: unknown[], extra: Record<string, unknown> = {}) => ({
      id: "resp_fake0001",
      object: "response",
      created_at: 1760000000,
      status,
      model,
      output,
      ...extra,
    });
    const out: WireChunk[] = [];
    out.push(ev("response.created", { response: response("in_progress", []) }));
    out.push(ev("response.in_progress", { response: response("in_progress", []) }));
    const done: unknown[] = [];
    let outputIndex = 0;
    for (const block of blocksOf(turn)) {
      if (block.kind === "delay") {
        out.push({ delayMs: block.ms });
        continue;
      }
      const output_index = outputIndex++;
      if (block.kind === "thinking") {
        const id = `rs_fake${output_index}`;
        const text = block.deltas.filter((d) => typeof d === "string").join("");
        out.push(ev("response.output_item.added", {
          output_index,
          item: { id, type: "reasoning", summary: [] },
        }));
        out.push(ev("response.reasoning_summary_part.added", {
          item_id: id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text: "" },
        }));
        for (const d of block.deltas) {
          out.push(
            typeof d === "string"
              ? ev("response.reasoning_summary_text.delta", {
                item_id: id,
                output_index,
                summary_index: 0,
                delta: d,
              })
              : d,
          );
        }
        out.push(ev("response.reasoning_summary_text.done", {
          item_id: id,
          output_index,
          summary_index: 0,
          text,
        }));
        out.push(ev("response.reasoning_summary_part.done", {
          item_id: id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text },
        }));
        const item = { id, type: "reasoning", summary: [{ type: "summary_text", text }] };
        out.push(ev("response.output_item.done", { output_index, item }));
        done.push(item);
      } else if (block.kind === "text") {
        const id = `msg_fake${output_index}`;
        const text = block.deltas.filter((d) => typeof d === "string").join("");
        out.push(ev("response.output_item.added", {
          output_index,
          item: { id, type: "message", status: "in_progress", role: "assistant", content: [] },
        }));
        out.push(ev("response.content_part.added", {
          item_id: id,
          output_index,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [] },
        }));
        for (const d of block.deltas) {
          out.push(
            typeof d === "string"
              ? ev("response.output_text.delta", {
                item_id: id,
                output_index,
                content_index: 0,
                delta: d,
                logprobs: [],
              })
              : d,
          );
        }
        const part = { type: "output_text", text, annotations: [] };
        out.push(ev("response.output_text.done", {
          item_id: id,
          output_index,
          content_index: 0,
          text,
          logprobs: [],
        }));
        out.push(ev("response.content_part.done", {
          item_id: id,
          output_index,
          content_index: 0,
          part,
        }));
        const item = {
          id,
          type: "message",
          status: "completed",
          role: "assistant",
          content: [part],
        };
        out.push(ev("response.output_item.done", { output_index, item }));
        done.push(item);
      } else {
        const id = `fc_fake${output_index}`;
        out.push(ev("response.output_item.added", {
          output_index,
          item: {
            id,
            type: "function_call",
            status: "in_progress",
            arguments: "",
            call_id: block.id,
            name: block.name,
          },
        }));
        for (const piece of block.pieces) {
          out.push(ev("response.function_call_arguments.delta", {
            item_id: id,
            output_index,
            delta: piece,
          }));
        }
        out.push(ev("response.function_call_arguments.done", {
          item_id: id,
          output_index,
          arguments: block.json,
        }));
        const item = {
          id,
          type: "function_call",
          status: "completed",
          arguments: block.json,
          call_id: block.id,
          name: block.name,
        };
        out.push(ev("response.output_item.done", { output_index, item }));
        done.push(item);
      }
    }
    const usageBody = {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    };
    if (stop === "max_tokens") {
      out.push(ev("response.incomplete", {
        response: response("incomplete", done, {
          incomplete_details: { reason: "max_output_tokens" },
          usage: usageBody,
        }),
      }));
    } else {
      out.push(ev("response.completed", {
        response: response("completed", done, { incomplete_details: null, usage: usageBody }),
      }));
    }
    return out;
  },
};
