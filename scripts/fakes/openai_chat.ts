/**
 * The OpenAI Chat Completions API as OpenAI-compatible servers speak it (Ollama, vLLM, llama.cpp,
 * LM Studio, OpenRouter): `POST /v1/chat/completions` with `Authorization: Bearer`, answered with
 * `data: {chat.completion.chunk}` lines, `finish_reason` on the last choice chunk, a usage chunk
 * with empty `choices` (`stream_options.include_usage`), then `data: [DONE]`. Reasoning streams as
 * `delta.reasoning_content`, the field DeepSeek, vLLM and llama.cpp use.
 */
import { blocksOf, type FakeTurn, sseEvent, stopOf, usageOf, type WireChunk } from "./plan.ts";
import type { ProviderWire } from "./server.ts";
import { openaiErrorBody } from "./openai_errors.ts";

const FINISH: Record<string, string> = { end: "stop", tool: "tool_calls", max_tokens: "length" };

export const openaiChatWire: ProviderWire = {
  path: "/v1/chat/completions",
  authorized(req, apiKey) {
    return apiKey === undefined || req.headers.get("authorization") === `Bearer ${apiKey}`;
  },
  errorBody: (status, message, req) => openaiErrorBody(status, message, req),
  streamErrorEvent(message) {
    return sseEvent({
      error: { message: message ?? "The server had an error while processing your request." },
    });
  },
  malformedEvent() {
    return 'data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"cont\n\n';
  },
  render(turn: FakeTurn, model: string): WireChunk[] {
    const usage = usageOf(turn);
    const created = 1760000000;
    const chunk = (choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}) =>
      sseEvent({
        id: "chatcmpl-fake0001",
        object: "chat.completion.chunk",
        created,
        model,
        system_fingerprint: "fp_fake",
        choices: choice ? [{ index: 0, logprobs: null, finish_reason: null, ...choice }] : [],
        ...extra,
      });
    const out: WireChunk[] = [chunk({ delta: { role: "assistant", content: "" } })];
    let toolIndex = 0;
    for (const block of blocksOf(turn)) {
      if (block.kind === "delay") {
        out.push({ delayMs: block.ms });
      } else if (block.kind === "text" || block.kind === "thinking") {
        for (const d of block.deltas) {
          if (typeof d !== "string") out.push(d);
          else if (block.kind === "text") out.push(chunk({ delta: { content: d } }));
          else out.push(chunk({ delta: { reasoning_content: d } }));
        }
      } else {
        const index = toolIndex++;
        block.pieces.forEach((piece, i) => {
          const call = i === 0
            ? {
              index,
              id: block.id,
              type: "function",
              function: { name: block.name, arguments: piece },
            }
            : { index, function: { arguments: piece } };
          out.push(chunk({ delta: { tool_calls: [call] } }));
        });
      }
    }
    out.push(chunk({ delta: {}, finish_reason: FINISH[stopOf(turn)] }));
    out.push(chunk(null, {
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    }));
    out.push("data: [DONE]\n\n");
    return out;
  },
};
