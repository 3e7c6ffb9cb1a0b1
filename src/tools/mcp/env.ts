/**
 * A stdio MCP server's environment (docs/mcp.md "Servers"): nothing of mur's by default but
 * what a program needs to run (`PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `LANG`,
 * `TMPDIR` — the set the MCP SDK's own stdio client passes, plus locale and temp), then the names
 * `env_allow` lists (credentials only when listed), then the entry's `env:` values. The door
 * token is never passed.
 */
import { DOOR_TOKEN_ENV } from "../../artifact_env.ts";

export const BASE_ENV = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR"];

export function mcpServerEnv(
  host: Record<string, string>,
  allow: string[],
  own: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...allow]) {
    if (name !== DOOR_TOKEN_ENV && host[name] !== undefined) out[name] = host[name];
  }
  return { ...out, ...own };
}
