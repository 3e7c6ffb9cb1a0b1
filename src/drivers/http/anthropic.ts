/** The `anthropic` driver: the Messages API through `@ai-sdk/anthropic`. */
import { createAnthropic } from "@ai-sdk/anthropic";
import type { ProviderAdapter } from "./provider.ts";

export const anthropicAdapter: ProviderAdapter = {
  driver: "anthropic",
  keyEnv: "ANTHROPIC_API_KEY",
  keyRequired: true,
  endpointRequired: false,
  marksToolErrors: true,
  model: (s) => createAnthropic({ baseURL: s.endpoint, apiKey: s.apiKey, fetch: s.fetch })(s.model),
};
