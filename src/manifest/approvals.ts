/**
 * `approvals:` (docs/approvals.md): which tool calls wait for a person's approval before they
 * run, and how long a wait lasts before it counts as a denial. The schema of the section as
 * written, its normalized form, and the rule that decides one call.
 *
 *   approvals:
 *     timeout_secs: 300
 *     tools:
 *       bash: {approve: ask, commands: ["git push *", "rm -rf *"]}
 *       deploy: {approve: ask}
 *       "*": {approve: never}
 */
import { z } from "zod";

/** What a call the policy covers does: wait for a person (`ask`) or run as it is (`never`). */
export type ApproveMode = "ask" | "never";

export interface ApprovalEntry {
  approve: ApproveMode;
  /** Shell tools only: the entry covers only command lines matching one of these globs. */
  commands?: string[];
}

export interface ApprovalsConfig {
  /** A wait not answered within this many seconds is a denial. */
  timeoutSecs: number;
  /** By tool name; `*` is every tool not named (request-input excepted). */
  tools: Record<string, ApprovalEntry>;
}

/** docs/approvals.md: five minutes, then the call is denied and the model told so. */
export const DEFAULT_APPROVAL_TIMEOUT_SECS = 300;

const entrySchema = z.strictObject({
  approve: z.enum(["ask", "never"], {
    error: (iss) => `${JSON.stringify(iss.input)} is not one of ask, never`,
  }),
  commands: z.array(
    z.string({ error: "must be a string" }).refine((v) => v.trim() !== "", {
      error: "must not be empty",
    }),
    { error: "must be a list of command-line patterns" },
  ).min(1, { error: "must name at least one pattern (leave it out to cover every call)" })
    .optional(),
}, { error: "must be a mapping with approve: ask or never" });

export const approvalsSchema = z.strictObject({
  timeout_secs: z.preprocess(
    (v) => typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v,
    z.number({ error: "must be a number of seconds > 0" }).refine((n) => n > 0, {
      error: "must be a number of seconds > 0",
    }),
  ).optional(),
  tools: z.record(z.string(), entrySchema, { error: "must be a mapping of tool names" })
    .optional(),
}, { error: "must be a mapping of keys" });

export type ApprovalsDoc = z.output<typeof approvalsSchema>;

export function approvalsConfig(doc: ApprovalsDoc): ApprovalsConfig {
  return {
    timeoutSecs: doc.timeout_secs ?? DEFAULT_APPROVAL_TIMEOUT_SECS,
    tools: { ...(doc.tools ?? {}) },
  };
}

/** What the policy says of one call: ask, and why (the key path of the rule that asked). */
export interface ApprovalDecision {
  reason: string;
}

/**
 * The entry for `tool` (its own, else `*`), and for a shell tool with `commands`, the first
 * pattern the command line matches. `line` is the call as a shell reads it (`git push origin
 * main`), absent for a tool that is not a shell tool: an entry with `commands` then covers nothing.
 */
export function approvalFor(
  config: ApprovalsConfig | undefined,
  tool: string,
  line: string | undefined,
): ApprovalDecision | null {
  if (!config || tool === "request-input") return null;
  const own = Object.hasOwn(config.tools, tool);
  const key = own ? tool : Object.hasOwn(config.tools, "*") ? "*" : null;
  if (key === null) return null;
  const entry = config.tools[key];
  if (entry.approve !== "ask") return null;
  const at = `approvals.tools.${key === "*" ? '"*"' : key}`;
  if (!entry.commands) return { reason: at };
  if (line === undefined) return null;
  const i = entry.commands.findIndex((p) => globMatches(p, line));
  return i < 0 ? null : { reason: `${at}.commands[${i}] ${JSON.stringify(entry.commands[i])}` };
}

/** Tools mur itself may offer a task, whatever the manifest declares (src/session/crew_tools.ts). */
const SESSION_TOOLS = ["request-input", "call-member", "end-without-answer", "delegate-task"];

/**
 * W-MAN-010: an `approvals.tools` entry that can never ask as written: it names no tool the
 * manifest declares (a typo would silently let every call run), or gives `commands` to a tool
 * that is not a shell tool. `names` are the tools the manifest declares.
 */
export function approvalProblems(
  config: ApprovalsConfig | undefined,
  names: { shell: string[]; other: string[]; prefixes?: string[] },
): string[] {
  if (!config) return [];
  const out: string[] = [];
  for (const [tool, entry] of Object.entries(config.tools)) {
    if (tool === "*" || entry.approve !== "ask") continue;
    const shell = names.shell.includes(tool);
    // A tool of a declared tool source (`mcp__<server>__…`, `openapi__<service>__…`, docs/mcp.md).
    const sourced = (names.prefixes ?? []).some((p) => tool.startsWith(p));
    if (!shell && !sourced && !names.other.includes(tool) && !SESSION_TOOLS.includes(tool)) {
      out.push(
        `approvals.tools.${tool} names no tool this manifest declares (${
          [...names.shell, ...names.other].join(", ") || "none"
        }), so it asks only if a tool of that name appears at run time (an MCP server's, one staged under workdir/tools/)`,
      );
    } else if (!shell && entry.commands) {
      out.push(
        `approvals.tools.${tool}.commands: ${tool} is not a shell tool (capabilities.shell.allow), so its calls have no command line and this entry never asks; leave commands out to ask for every call`,
      );
    }
  }
  return out;
}

/** Runs of white space as one space, none at either end: how lines and patterns are compared. */
export function squeeze(s: string): string {
  return s.trim().replace(/\s+/g, " ");
}

/**
 * A pattern against a whole command line: `*` any run of characters (spaces included, or none),
 * `?` one character, anything else itself; white space squeezed on both sides first.
 */
export function globMatches(pattern: string, line: string): boolean {
  const p = [...squeeze(pattern)];
  const s = [...squeeze(line)];
  // Iterative wildcard match with one backtrack point (linear in practice, no regex built).
  let i = 0, j = 0, star = -1, mark = 0;
  while (j < s.length) {
    if (i < p.length && (p[i] === "?" || (p[i] !== "*" && p[i] === s[j]))) {
      i++;
      j++;
    } else if (i < p.length && p[i] === "*") {
      star = i++;
      mark = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++mark;
    } else {
      return false;
    }
  }
  while (i < p.length && p[i] === "*") i++;
  return i === p.length;
}
