/**
 * The provider-neutral conversation as AI SDK model messages, and the capsule's tools as an AI SDK
 * tool set declared without `execute`: the SDK then reports calls and runs none, because the
 * session loop runs every tool itself.
 */
import { jsonSchema, tool } from "ai";
import type { AssistantContent, JSONSchema7, ModelMessage, ToolSet } from "ai";
import type { ConversationMessage, ToolSpec } from "../types.ts";

/**
 * Reasoning is not sent back. The neutral conversation keeps no provider signature, and
 * providers either drop unsigned reasoning (Anthropic) or refuse it as input (DeepSeek-style
 * `reasoning_content` servers), so resending it could only cost tokens or fail the call.
 *
 * An assistant message with no text and no tool call is left out: Anthropic refuses empty
 * assistant content, and it carries nothing the model needs.
 */
export function toModelMessages(
  messages: ConversationMessage[],
  opts: { markToolErrors: boolean },
): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      out.push({ role: "user", content: m.content });
    } else if (m.role === "assistant") {
      const content: Exclude<AssistantContent, string> = [];
      if (m.text !== "") content.push({ type: "text", text: m.text });
      for (const call of m.toolCalls) {
        content.push({
          type: "tool-call",
          toolCallId: call.id,
          toolName: call.name,
          input: call.input,
        });
      }
      if (content.length > 0) out.push({ role: "assistant", content });
    } else {
      out.push({
        role: "tool",
        content: m.results.map((r) => ({
          type: "tool-result" as const,
          toolCallId: r.toolCallId,
          toolName: r.toolName,
          // The text exactly as the artifact frame showed it. Where the wire has an error flag
          // (Anthropic's `is_error`) a failed call sets it; elsewhere the SDK would wrap an
          // error result in JSON, so it goes as plain text, unchanged.
          output: r.isError && opts.markToolErrors
            ? { type: "error-text" as const, value: r.content }
            : { type: "text" as const, value: r.content },
        })),
      });
    }
  }
  return out;
}

export function toToolSet(specs: ToolSpec[]): ToolSet {
  const set: ToolSet = {};
  for (const spec of specs) {
    set[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema(spec.inputSchema as JSONSchema7),
    });
  }
  return set;
}
