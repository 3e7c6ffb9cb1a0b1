/**
 * The manifest's `mcp_servers:` in Codex's configuration (docs/mcp.md "On the process
 * transport"): `-c mcp_servers.<name>.…` keys, no secret on argv. A stdio server's environment
 * goes in Codex's own and is forwarded by name (`env_vars`); an HTTP server's header values go in
 * Codex's environment under names of mur's and are sent by `env_http_headers`; `allow` and
 * `deny` are `enabled_tools` and `disabled_tools`; each server's tools are approved, as the
 * bridge's are.
 */
import type { HarnessMcpServer } from "./mcp_servers.ts";

const toml = (s: string) => JSON.stringify(s);
const list = (xs: string[]) => `[${xs.map(toml).join(",")}]`;

export function codexServerArgs(
  servers: HarnessMcpServer[],
): { args: string[]; env: Record<string, string> } {
  const args: string[] = [];
  const env: Record<string, string> = {};
  servers.forEach((s, i) => {
    const key = `mcp_servers.${s.name}`;
    const set = (k: string, v: string) => args.push("-c", `${key}.${k}=${v}`);
    const e = s.entry as {
      type: string;
      command?: string;
      args?: string[];
      env?: Record<string, string>;
      url?: string;
      headers?: Record<string, string>;
    };
    if (e.type === "http") {
      set("url", toml(e.url!));
      const headers = Object.entries(e.headers ?? {});
      if (headers.length) {
        const pairs = headers.map(([h, v], j) => {
          const name = `MUR_MCP_${i}_HEADER_${j}`;
          env[name] = v;
          return `${toml(h)}=${toml(name)}`;
        });
        set("env_http_headers", `{${pairs.join(",")}}`);
      }
    } else {
      set("command", toml(e.command!));
      set("args", list(e.args ?? []));
      const vars = Object.entries(e.env ?? {});
      for (const [k, v] of vars) env[k] = v;
      if (vars.length) set("env_vars", list(vars.map(([k]) => k)));
    }
    if (s.allow) set("enabled_tools", list(s.allow));
    if (s.deny.length) set("disabled_tools", list(s.deny));
    // As for the bridge: without it a call fails, the approval policy being `never`.
    set("default_tools_approval_mode", toml("approve"));
  });
  return { args, env };
}
