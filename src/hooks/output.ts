/**
 * What a command hook may print on stdout (docs/hooks.md "Answers and policies"): one JSON object,
 * `{}` or `{"none":true}` for no action, else exactly one arm. Anything else is unreadable output,
 * which is a hook failure, not an arm.
 */
import { z } from "zod";

import type { HookMessage } from "../session/hooks_api.ts";

export type { HookMessage };

export type HookArm =
  | { arm: "none" }
  | { arm: "reopen-task"; feedback: string }
  | { arm: "seed-context"; messages: HookMessage[] }
  | { arm: "replace-context"; messages: HookMessage[] }
  | { arm: "deny"; reason: string }
  | { arm: "artifact"; json: Record<string, unknown> }
  | { arm: "write-manifests"; manifests: ToolManifestWrite[] };

/** One tool manifest an `on-stage` hook asks to write: `workdir/tools/<binary_name>/murmur.yaml`. */
export interface ToolManifestWrite {
  binary_name: string;
  content: string;
}

const message = z.lazy(() =>
  z.object({
    role: z.enum(["user", "assistant", "tool"]),
    content: z.string(),
    tool_calls: z.array(z.object({
      id: z.string(),
      name: z.string(),
      input: z.record(z.string(), z.unknown()),
    })).optional(),
    tool_results: z.array(z.object({
      tool_call_id: z.string(),
      tool_name: z.string(),
      content: z.string(),
      is_error: z.boolean(),
    })).optional(),
  })
);

// Built on first use: a session runs no hook until its first binding fires, and most run none
// (docs/benchmarks.md "Cost per session": schemas built at start).
const output = z.lazy(() =>
  z.object({
    none: z.literal(true).optional(),
    reopen_task: z.string().optional(),
    seed_context: z.array(message).optional(),
    replace_context: z.array(message).optional(),
    deny: z.string().optional(),
    artifact: z.record(z.string(), z.unknown()).optional(),
    write_manifests: z.array(z.object({ binary_name: z.string(), content: z.string() }).strict())
      .optional(),
  }).strict()
);

const ARMS = [
  "none",
  "reopen_task",
  "seed_context",
  "replace_context",
  "deny",
  "artifact",
  "write_manifests",
];

/** Parses a hook's stdout into its arm, or says why it cannot be read. */
export function parseHookOutput(stdout: string): HookArm | { unreadable: string } {
  const text = stdout.trim();
  if (text === "") return { unreadable: "it printed nothing on stdout (print {} for no action)" };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { unreadable: `its stdout is not one JSON object: ${clip(text)}` };
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return { unreadable: `its stdout is JSON but not an object: ${clip(text)}` };
  }
  const set = Object.keys(doc).filter((k) => ARMS.includes(k));
  if (set.length > 1) {
    return { unreadable: `its output sets ${set.join(" and ")}; a hook returns exactly one arm` };
  }
  const r = output.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0];
    const where = i.path.length ? i.path.join(".") : "(top level)";
    const what = i.code === "unrecognized_keys"
      ? `unknown key${i.keys.length > 1 ? "s" : ""} ${i.keys.join(", ")}`
      : i.message;
    return { unreadable: `its output is not a hook answer: ${where}: ${what}` };
  }
  const o = r.data;
  if (o.reopen_task !== undefined) return { arm: "reopen-task", feedback: o.reopen_task };
  if (o.seed_context !== undefined) return { arm: "seed-context", messages: o.seed_context };
  if (o.replace_context !== undefined) {
    return { arm: "replace-context", messages: o.replace_context };
  }
  if (o.deny !== undefined) return { arm: "deny", reason: o.deny };
  if (o.artifact !== undefined) return { arm: "artifact", json: o.artifact };
  if (o.write_manifests !== undefined) {
    return { arm: "write-manifests", manifests: o.write_manifests };
  }
  return { arm: "none" };
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > 200 ? `${one.slice(0, 200)}…` : one;
}
