/**
 * The `openai` driver: OpenAI's Responses API through `@ai-sdk/openai` (the SDK's default for
 * OpenAI models, and the API that streams reasoning summaries). Reasoning summaries are asked
 * for (`auto`); the SDK leaves the option out for models that do not reason.
 */
import { createOpenAI } from "@ai-sdk/openai";
import type { ProviderAdapter } from "./provider.ts";

export const openaiAdapter: ProviderAdapter = {
  driver: "openai",
  keyEnv: "OPENAI_API_KEY",
  keyRequired: true,
  endpointRequired: false,
  marksToolErrors: false,
  model: (s) =>
    createOpenAI({ baseURL: s.endpoint, apiKey: s.apiKey, fetch: s.fetch }).responses(s.model),
  providerOptions: { openai: { reasoningSummary: "auto" } },
  stopReasonWithoutRaw: "completed",
};
