/**
 * What the session's start writes (docs/running.md): the `session_start` trace line's
 * fields and the on-session-start hook's event, read from the manifest and the launch options.
 */
import type { TraceFieldsOf } from "../trace_events.ts";
import type { SessionStartEvent } from "./hooks_api.ts";
import type { SessionOptions } from "./session_api.ts";

export async function sessionStartFields(
  opts: SessionOptions,
): Promise<TraceFieldsOf["session_start"]> {
  const m = opts.manifest;
  return {
    capsule_name: m.name,
    capsule_version: m.version,
    model: opts.driver.model,
    max_turns: m.inference.maxTurns,
    max_session_tokens: m.inference.maxSessionTokens ?? null,
    capabilities: m.capabilities.shell.allow.length ? ["shell"] : [],
    tools_declared: opts.tools.specs().map((t) => t.name),
    resumed_from: opts.resume?.fromSession ?? null,
    context_id: opts.resume?.contextId ?? opts.contextId ?? null,
    system_prompt_source: m.inference.systemPromptSource,
    system_prompt_sha256: await promptSha256(m.inference.systemPrompt),
    runtime_artifacts: opts.runtimeArtifacts ?? [],
    containment_declared: opts.containment?.declared ?? null,
    containment_achieved: opts.containment?.achieved ?? "advisory",
  };
}

export function sessionStartEvent(opts: SessionOptions): SessionStartEvent {
  return {
    capsule_name: opts.manifest.name,
    capsule_version: opts.manifest.version,
    session_id: opts.id,
    model: opts.driver.model,
  };
}

/**
 * The resolved prompt's hash, as the manifest gave it (inline text trimmed, a file or a bound
 * skill verbatim), so two sessions compare prompts without a trace carrying one. Web Crypto, not
 * node:crypto, whose import would wake Node compatibility at start (src/paths.ts).
 */
export async function promptSha256(prompt: string | undefined): Promise<string | null> {
  if (prompt === undefined) return null;
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(prompt));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}
