/**
 * The `openai-compatible` driver: any server speaking OpenAI's Chat Completions API (Ollama, vLLM,
 * llama.cpp, LM Studio, OpenRouter) through `@ai-sdk/openai-compatible`. `endpoint` is required;
 * the key is optional (local servers need none) and is never read from the environment, so a
 * key meant for another provider is not sent to a third party by accident.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { ProviderAdapter } from "./provider.ts";

export const openaiCompatibleAdapter: ProviderAdapter = {
  driver: "openai-compatible",
  keyRequired: false,
  endpointRequired: true,
  marksToolErrors: false,
  model: (s) =>
    createOpenAICompatible({
      name: "openai-compatible",
      baseURL: s.endpoint ?? "",
      apiKey: s.apiKey,
      fetch: s.fetch,
      // Asks for the usage chunk (`stream_options.include_usage`), which Ollama, vLLM and
      // llama.cpp send; a server that ignores it just leaves the turn's usage unreported.
      includeUsage: true,
    })(s.model),
};
