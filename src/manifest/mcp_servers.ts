/**
 * `mcp_servers:` (docs/mcp.md): MCP servers as tool sources, in the shape of `.mcp.json`'s
 * `mcpServers` — a map from the server's name to a stdio `{command, args, env, cwd}` or a
 * streamable HTTP `{url, headers}` server, plus mur's own `env_allow`, `allow` / `deny`,
 * `timeout_secs` and `startup_timeout_secs`. Built with zod directly (not schema.ts's helpers):
 * schema.ts imports this file, and a cycle would read its helpers before they exist.
 */
import { z } from "zod";
import { resolve } from "../paths.ts";

/** A server's name: what `mcp__<server>__<tool>` is built from (no `__`, no spaces). */
export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]*(?:_[A-Za-z0-9-]+)*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** src/drivers/process/bridge.ts BRIDGE_SERVER_NAME: a harness's config holds both. */
const RESERVED_SERVER = "murmur";

const strings = (what: string) =>
  z.array(z.string({ error: `must be a ${what}` }), {
    error: `must be a list of ${what}s`,
  });
const secs = (max: number) =>
  z.preprocess(
    (v) => (typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v),
    z.number({ error: `must be a number of seconds > 0 and <= ${max}` }).gt(0, {
      error: `must be a number of seconds > 0 and <= ${max}`,
    }).max(max, { error: `must be a number of seconds > 0 and <= ${max}` }),
  );

/** One entry. Every key optional here; which go together is checked in `mcpServerProblems`. */
export const mcpServerSchema = z.strictObject({
  type: z.enum(["stdio", "http", "streamable-http"], {
    error: "must be stdio or http",
  }).optional(),
  command: z.string({ error: "must be a string (the program; arguments go in args)" }).min(1, {
    error: "must not be empty",
  }).optional(),
  args: strings("string").optional(),
  env: z.record(z.string(), z.string({ error: "must be a string" }), {
    error: "must be a mapping of variable names to values",
  }).optional(),
  env_allow: strings("variable name").optional(),
  cwd: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).optional(),
  url: z.string({ error: "must be a string" }).optional(),
  headers: z.record(z.string(), z.string({ error: "must be a string" }), {
    error: "must be a mapping of header names to values",
  }).optional(),
  allow: strings("tool name").optional(),
  deny: strings("tool name").optional(),
  timeout_secs: secs(86_400).optional(),
  startup_timeout_secs: secs(600).optional(),
}, { error: "must be a mapping of keys" });

export const mcpServersSchema = z.record(z.string(), mcpServerSchema, {
  error: "must be a mapping from a server's name to its settings",
});

export type McpServersDoc = z.output<typeof mcpServersSchema>;
type McpServerDoc = z.output<typeof mcpServerSchema>;

interface McpCommon {
  name: string;
  /** Tool names (the server's own, not `mcp__…`) offered; absent: every one. */
  allow?: string[];
  /** Tool names never offered (wins over `allow`). */
  deny: string[];
  /** A call's limit before it is cancelled (`notifications/cancelled`) and answered as an error. */
  timeoutMs: number;
  /** Connect, `initialize` and the first `tools/list` together. */
  startupTimeoutMs: number;
}

export interface McpStdioServer extends McpCommon {
  kind: "stdio";
  /** Program then arguments; a program with a `/` resolved against the manifest's folder. */
  argv: string[];
  /** Variables set for the server (`env:`), over the allowed ones. */
  env: Record<string, string>;
  /** Names passed through from mur's environment (`env_allow:`). */
  envAllow: string[];
  /** Absolute; default the manifest's folder (where a `.mcp.json` would sit). */
  cwd: string;
}

export interface McpHttpServer extends McpCommon {
  kind: "http";
  url: string;
  /** Sent on every request; values may come from `${NAME}` and are never written anywhere. */
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

export const MCP_DEFAULTS = { timeoutSecs: 60, startupTimeoutSecs: 30 } as const;

/** What is wrong with one entry, as `[key, message]` pairs (the key under `mcp_servers.<name>`). */
export function mcpServerProblems(name: string, s: McpServerDoc): [string, string][] {
  const out: [string, string][] = [];
  if (!MCP_SERVER_NAME.test(name) || name.length > 40) {
    out.push([
      "",
      "a server's name is letters, digits, '-' and single '_' (at most 40), so mcp__<server>__<tool> names it",
    ]);
  } else if (name === RESERVED_SERVER) {
    out.push([
      "",
      `'${RESERVED_SERVER}' is the name of mur's own tool server on the process transport`,
    ]);
  }
  const http = s.type === "http" || s.type === "streamable-http" ||
    (s.type === undefined && s.url !== undefined);
  if (http) {
    if (s.url === undefined) out.push(["url", "an http server needs its url"]);
    else if (!/^https?:\/\/[^/\s]+/.test(s.url)) {
      out.push(["url", `'${s.url}' is not an http(s) url`]);
    }
    for (const k of ["command", "args", "env", "env_allow", "cwd"] as const) {
      if (s[k] !== undefined) out.push([k, "is for a stdio server; this one has a url"]);
    }
  } else {
    if (s.command === undefined) out.push(["command", "a stdio server needs its command"]);
    if (s.headers !== undefined) out.push(["headers", "is for an http server; this one is stdio"]);
    for (const [i, v] of (s.env_allow ?? []).entries()) {
      if (!ENV_NAME.test(v)) out.push([`env_allow[${i}]`, `'${v}' is not a variable name`]);
    }
    for (const k of Object.keys(s.env ?? {})) {
      if (!ENV_NAME.test(k)) out.push([`env.${k}`, `'${k}' is not a variable name`]);
    }
  }
  return out;
}

/** The checked entries, normalized; relative `cwd` and program paths against `dir`. */
export function normalizeMcpServers(doc: McpServersDoc, dir: string): McpServerConfig[] {
  return Object.entries(doc).map(([name, s]) => {
    const common: McpCommon = {
      name,
      ...(s.allow && { allow: s.allow }),
      deny: s.deny ?? [],
      timeoutMs: (s.timeout_secs ?? MCP_DEFAULTS.timeoutSecs) * 1000,
      startupTimeoutMs: (s.startup_timeout_secs ?? MCP_DEFAULTS.startupTimeoutSecs) * 1000,
    };
    if (s.url !== undefined) {
      return { ...common, kind: "http", url: s.url, headers: s.headers ?? {} };
    }
    const program = s.command!;
    return {
      ...common,
      kind: "stdio",
      argv: [program.includes("/") ? resolve(dir, program) : program, ...(s.args ?? [])],
      env: s.env ?? {},
      envAllow: s.env_allow ?? [],
      cwd: s.cwd !== undefined ? resolve(dir, s.cwd) : dir,
    };
  });
}
