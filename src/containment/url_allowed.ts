/**
 * Whether mur itself may open `url` under `capabilities.network.allow` (docs/containment.md
 * "Network"): the connections mur makes for a capsule's tool sources (an MCP server over
 * streamable HTTP, docs/mcp.md) are held to the same list as its contained processes. Not declared
 * (null): any url. Hosts are compared as written, case aside (`localhost` is not `127.0.0.1`);
 * a url without a port has its scheme's.
 */
import type { NetworkAllowEntry } from "./config.ts";

export function urlAllowed(url: string, allow: NetworkAllowEntry[] | null): boolean {
  if (allow === null) return true;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const host = u.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = u.port !== "" ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
  return allow.some((e) => e.host.toLowerCase() === host && (e.port === null || e.port === port));
}
