/**
 * Mistakes a manifest can hold that are not errors but would surface only at the model's first
 * call, or never: warned at load, on stderr before anything starts (docs/manifest.md).
 *
 * - W-MAN-001: no `inference.driver` and no `inference.script`, so the capsule runs the built-in
 *   scripted model: every task gets one short canned answer and no provider is called.
 * - W-MAN-002: a `capabilities.shell.allow` binary, or a tool's or hook's program given by bare
 *   name, is not on PATH: every call of it will fail.
 * - W-MAN-003: the capsule has shell tools and policy hooks (`commit_policy: deny`) on
 *   `on-tool-call` only: a shell call fires `on-shell`, never `on-tool-call`, so those hooks never
 *   see it (docs/hooks.md "The loop").
 * - W-MAN-010: an `approvals.tools` entry that never asks as written (approvals.ts).
 */
import { warningLine } from "../errors.ts";
import { resolveOnPath } from "../path_lookup.ts";
import type { ManifestDoc } from "./schema.ts";
import type { Manifest } from "./types.ts";
import { approvalProblems } from "./approvals.ts";

export function loadWarnings(
  label: string,
  doc: ManifestDoc,
  manifest: Manifest,
  path: string | undefined,
): string[] {
  const out: string[] = [];
  if (doc.inference?.driver === undefined && doc.inference?.script === undefined) {
    out.push(warningLine(
      "W-MAN-001",
      `${label}: no inference.driver is declared, so this capsule runs the built-in scripted model: every task gets one short canned answer and no model is called. Declare inference.driver (anthropic, openai, openai-compatible, or claude-code / codex under transport: process) to use a model, or driver: scripted with a script to silence this`,
    ));
  }
  // Without a PATH there is nothing to look in; say nothing rather than warn about everything.
  if (path !== undefined) {
    const missing = (program: string) => resolveOnPath(program, path) === null;
    manifest.capabilities.shell.allow.forEach((bin, i) => {
      if (missing(bin)) {
        out.push(warningLine(
          "W-MAN-002",
          `${label}: capabilities.shell.allow[${i}]: '${bin}' is not on PATH, so every call of the ${bin} tool will fail; install it or drop it from the list`,
        ));
      }
    });
    const programs = [
      ...manifest.tools.flatMap((t, i) =>
        t.kind === "command" ? [[`tools[${i}].command`, t.command[0]]] : []
      ),
      ...manifest.hooks.map((h, i) => [`hooks[${i}].command`, h.command[0]]),
    ];
    for (const [at, program] of programs) {
      if (!program.includes("/") && missing(program)) {
        out.push(warningLine(
          "W-MAN-002",
          `${label}: ${at}: the program '${program}' is not on PATH, so every call of it will fail; install it or give its path (relative to the manifest's folder)`,
        ));
      }
    }
  }
  const shell = manifest.capabilities.shell.allow.length > 0;
  const policy = (binding: string) =>
    manifest.hooks.filter((h) => h.binding === binding && h.commitPolicy === "deny");
  const onToolCall = policy("on-tool-call");
  if (shell && onToolCall.length > 0 && policy("on-shell").length === 0) {
    out.push(warningLine(
      "W-MAN-003",
      `${label}: the policy hook${onToolCall.length > 1 ? "s" : ""} ${
        onToolCall.map((h) => `'${h.name}'`).join(", ")
      } on on-tool-call will not see calls of the shell tools (${
        manifest.capabilities.shell.allow.join(", ")
      }): a shell call fires on-shell only. Bind a policy hook to on-shell too to guard them`,
    ));
  }
  const names = {
    shell: manifest.capabilities.shell.allow,
    other: [...manifest.tools.map((t) => t.name), ...(manifest.skills ?? []).map((s) => s.name)],
    prefixes: [
      ...(manifest.mcpServers ?? []).map((s) => `mcp__${s.name}__`),
      ...(manifest.openApiServices ?? []).map((s) => `openapi__${s.name}__`),
    ],
  };
  for (const problem of approvalProblems(manifest.approvals, names)) {
    out.push(warningLine("W-MAN-010", `${label}: ${problem}`));
  }
  return out;
}
