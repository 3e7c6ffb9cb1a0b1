/**
 * What a pending approval says on the wire (docs/approvals.md "The wire"): the status message's
 * text part a person reads (`approve bash: git push origin main?`) and its data part
 * `{kind: "approval", tool, source, arguments, argumentsHash, reason}`; and what a task holds
 * while the wait is open, for the door to answer it (src/door/approval_answer.ts).
 */

/** Past this many characters of canonical JSON, `argumentsPreview` stands for `arguments`. */
export const ARGUMENTS_INLINE_MAX = 4000;

/**
 * Where the tool came from: a shell tool, the manifest's tools, a packaged tool, mur's own, an
 * MCP server's (`mcp__<server>__<tool>`), an OpenAPI service's (`openapi__<service>__<op>`).
 */
export type ApprovalSource =
  | "shell"
  | "tool"
  | "artifact"
  | "builtin"
  | "session"
  | "mcp"
  | "openapi";

export interface ApprovalDetail {
  kind: "approval";
  tool: string;
  source: ApprovalSource;
  /** The call's input as the model sent it (absent when too long: `argumentsPreview`). */
  arguments?: Record<string, unknown>;
  argumentsPreview?: string;
  /** `sha256:` + hex of the canonical JSON of `arguments` (canonicalJson). */
  argumentsHash: string;
  /** The policy rule that asked, e.g. `approvals.tools.bash.commands[0] "git push *"`. */
  reason: string;
}

/** The answer a door took: approve or deny, by which credential, with the person's reason. */
export interface ApprovalAnswer {
  approve: boolean;
  /** The credential that answered (`operator`, or `public` on a door without tokens). */
  by: string;
  reason?: string;
}

/** An open approval wait of a task. */
export interface PendingApproval {
  detail: ApprovalDetail;
  /** The line a person reads. */
  text: string;
  /** Settles the wait; the task is WORKING `resumed` before this returns. */
  answer(a: ApprovalAnswer): void;
}

/**
 * The canonical JSON of a value: RFC 8785 (JCS) as far as JSON from a model goes — object keys
 * sorted by UTF-16 code units, no white space, strings and numbers as ECMAScript's
 * JSON.stringify writes them. Another client computes the same with any JCS library.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
}

export async function argumentsHash(args: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(args));
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${[...d].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The data part's value for a call; `arguments` past ARGUMENTS_INLINE_MAX becomes a preview. */
export async function approvalDetail(
  tool: string,
  source: ApprovalSource,
  args: Record<string, unknown>,
  reason: string,
): Promise<ApprovalDetail> {
  const json = canonicalJson(args);
  const long = json.length > ARGUMENTS_INLINE_MAX;
  return {
    kind: "approval",
    tool,
    source,
    ...(long ? { argumentsPreview: json.slice(0, ARGUMENTS_INLINE_MAX) } : { arguments: args }),
    argumentsHash: await argumentsHash(args),
    reason,
  };
}

/** What a person reads: the shell line for a shell tool, else the arguments, cut at 200. */
export function approvalText(tool: string, line: string | undefined, args: unknown): string {
  const what = line ?? canonicalJson(args);
  const cut = [...what].length > 200 ? `${[...what].slice(0, 200).join("")}…` : what;
  return `approve ${tool}: ${cut}?`;
}
