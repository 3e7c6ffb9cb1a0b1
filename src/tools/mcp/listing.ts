/**
 * A server's `tools/list` as mur offers it (docs/mcp.md "Which tools are offered"): every page
 * read (at most MAX_PAGES, so a server cannot page forever), `deny` then `allow` applied to the
 * server's own names, each named `mcp__<server>__<tool>`; a tool whose full name is not a name
 * providers take (`[A-Za-z0-9_-]{1,64}`) or whose schema is not a JSON object schema under
 * MAX_SCHEMA_BYTES is left out, and at most MAX_TOOLS per server are offered. What was left
 * out is said in `notes`, which the source tells as a source error.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import type { JsonSchema } from "../types.ts";

export const MAX_TOOLS = 128;
export const MAX_PAGES = 20;
export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_DESCRIPTION_CHARS = 4096;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface ListedTool {
  /** `mcp__<server>__<tool>`: what the model calls. */
  name: string;
  /** The server's own name for it. */
  remote: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface Listing {
  tools: ListedTool[];
  /** How many the server listed in all. */
  listed: number;
  notes: string[];
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

export async function listTools(
  client: Client,
  cfg: McpServerConfig,
  timeoutMs: number,
): Promise<Listing> {
  const raw: { name: string; description?: string; inputSchema: unknown }[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    raw.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor && ++pages < MAX_PAGES);
  return offered(raw, cfg, cursor !== undefined);
}

/** The listed tools mur offers, and notes about the ones it does not. */
export function offered(
  raw: { name: string; description?: string; inputSchema: unknown }[],
  cfg: McpServerConfig,
  morePages = false,
): Listing {
  const notes: string[] = [];
  if (morePages) notes.push(`only the first ${MAX_PAGES} pages of tools/list were read`);
  const tools: ListedTool[] = [];
  const badName: string[] = [];
  const badSchema: string[] = [];
  let over = 0;
  for (const t of raw) {
    if (cfg.deny.includes(t.name)) continue;
    if (cfg.allow && !cfg.allow.includes(t.name)) continue;
    const name = mcpToolName(cfg.name, t.name);
    if (!NAME.test(name)) {
      badName.push(t.name);
      continue;
    }
    const schema = t.inputSchema as JsonSchema;
    if (!objectSchema(schema)) {
      badSchema.push(t.name);
      continue;
    }
    if (tools.length >= MAX_TOOLS) {
      over++;
      continue;
    }
    if (tools.some((x) => x.name === name)) continue;
    const description = (t.description ?? "").slice(0, MAX_DESCRIPTION_CHARS);
    tools.push({ name, remote: t.name, description, inputSchema: schema });
  }
  if (over) notes.push(`listed ${raw.length} tools; only the first ${MAX_TOOLS} are offered`);
  if (badName.length) {
    notes.push(
      `${badName.length} tool name(s) do not make a tool name providers take as mcp__${cfg.name}__<tool> ([A-Za-z0-9_-], at most 64): ${
        show(badName)
      }`,
    );
  }
  if (badSchema.length) {
    notes.push(
      `${badSchema.length} tool(s) have no JSON object input schema under ${MAX_SCHEMA_BYTES} bytes: ${
        show(badSchema)
      }`,
    );
  }
  for (const name of cfg.allow ?? []) {
    if (!raw.some((t) => t.name === name)) {
      notes.push(`allow names '${name}', which it does not list`);
    }
  }
  if (tools.length === 0 && notes.length === 0) {
    notes.push(raw.length === 0 ? "it lists no tools" : "allow/deny leave none of its tools");
  }
  return { tools, listed: raw.length, notes };
}

function objectSchema(s: unknown): s is JsonSchema {
  if (!s || typeof s !== "object" || Array.isArray(s)) return false;
  if ((s as JsonSchema).type !== "object") return false;
  return JSON.stringify(s).length <= MAX_SCHEMA_BYTES;
}

function show(names: string[]): string {
  const shown = names.slice(0, 5).map((n) => `'${n.slice(0, 80)}'`).join(", ");
  return names.length > 5 ? `${shown}, …` : shown;
}
