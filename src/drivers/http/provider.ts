/**
 * What differs between the http providers, and nothing else: how to build the AI SDK model, which
 * environment variable holds the key by default, and provider options for one call.
 */
import type { LanguageModel } from "ai";
import type { JSONValue } from "ai";

export interface ProviderSettings {
  model: string;
  /** The provider base URL as its API documents it; undefined = the SDK's default. */
  endpoint?: string;
  apiKey?: string;
  fetch: typeof fetch;
}

export interface ProviderAdapter {
  /** The manifest's driver name. */
  readonly driver: "anthropic" | "openai" | "openai-compatible";
  /** The variable read when `inference.api_key` is absent; undefined = none. */
  readonly keyEnv?: string;
  /** A missing key stops the launch (hosted APIs); local servers often need none. */
  readonly keyRequired: boolean;
  readonly endpointRequired: boolean;
  /** The wire flags a failed tool result (Anthropic `is_error`) without changing its text. */
  readonly marksToolErrors: boolean;
  model(settings: ProviderSettings): LanguageModel;
  providerOptions?: Record<string, Record<string, JSONValue>>;
  /**
   * The stop reason when the SDK reports no raw one for a finished stream. The Responses API has
   * no stop reason on a completed response: its status, `completed`, is the provider's word.
   */
  stopReasonWithoutRaw?: string;
}
