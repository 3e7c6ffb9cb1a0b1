/**
 * The manifest's `mcp_servers:` handed to a harness in its own MCP configuration (docs/mcp.md
 * "On the process transport"), so one manifest works on both transports: the harness starts and
 * calls the servers itself, naming their tools `mcp__<server>__<tool>` as mur does. A stdio
 * server gets the environment mur would give it (src/tools/mcp/env.ts); an HTTP server's
 * headers go in the 0600 config file, never on argv.
 */
import type { McpServerConfig } from "../../manifest/mcp_servers.ts";
import { mcpServerEnv } from "../../tools/mcp/env.ts";

/** One server as the harness's configuration names it, with the tools it may call. */
export interface HarnessMcpServer {
  name: string;
  /** The `.mcp.json` entry: `{type: "stdio", command, args, env}` or `{type: "http", url, headers}`. */
  entry: Record<string, unknown>;
  /** Tool names (the server's own) allowed; absent: every one. */
  allow?: string[];
  deny: string[];
}

export function harnessMcpServers(
  configs: McpServerConfig[],
  hostEnv: Record<string, string>,
): HarnessMcpServer[] {
  return configs.map((c) => ({
    name: c.name,
    entry: c.kind === "http" ? { type: "http", url: c.url, headers: c.headers } : {
      type: "stdio",
      command: c.argv[0],
      args: c.argv.slice(1),
      env: mcpServerEnv(hostEnv, c.envAllow, c.env),
    },
    ...(c.allow && { allow: c.allow }),
    deny: c.deny,
  }));
}

/** Claude Code permission rules: a whole server (`mcp__<server>`) or its allowed tools. */
export function allowedRules(servers: HarnessMcpServer[]): string[] {
  return servers.flatMap((s) =>
    s.allow ? s.allow.map((t) => `mcp__${s.name}__${t}`) : [`mcp__${s.name}`]
  );
}

export function deniedRules(servers: HarnessMcpServer[]): string[] {
  return servers.flatMap((s) => s.deny.map((t) => `mcp__${s.name}__${t}`));
}
