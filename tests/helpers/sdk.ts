/**
 * What the tests that drive mur with the real A2A client (@a2a-js/sdk) share: a user message in
 * the SDK's shape, the loose cast its requests need, and a check that an answer is a task.
 */
import assert from "node:assert/strict";
import { Role } from "@a2a-js/sdk";

export function sdkMessage(text: string) {
  return {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text" as const, value: text }, mediaType: "text/plain" }],
  };
}

/** ts-proto request types demand every field; the transport fills defaults for what is absent. */
// deno-lint-ignore no-explicit-any
export const q = (x: unknown) => x as any;

// deno-lint-ignore no-explicit-any
export function taskOf(r: any) {
  assert.ok(r && typeof r.id === "string", `not a task: ${JSON.stringify(r)}`);
  return r;
}
