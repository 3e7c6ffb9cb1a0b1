/**
 * `capabilities.network.allow` under `scoped` (docs/containment.md "Network"): the sandbox has a
 * network namespace of its own with only loopback in it, so no address is reachable at all; for
 * each allowed `host:port` mur listens on a Unix socket (outside the sandbox, in its private
 * folder) and connects each accepted stream to the address it resolved at launch. Inside,
 * socat(1) listens on that port at a loopback address (the host's own one for a loopback entry,
 * else 127.0.0.N, which a bound /etc/hosts gives the name) and forwards to the socket. A connection
 * to any other address or port finds nothing: refused, or unreachable.
 */
import { MurError } from "../errors.ts";
import type { NetworkAllowEntry } from "./config.ts";

/** One forwarded port as the sandbox sees it. */
export interface Bridge {
  /** The loopback address socat listens on inside. */
  alias: string;
  port: number;
  /** mur's Unix socket it forwards to. */
  socket: string;
}

export interface Bridges {
  bridges: Bridge[];
  /** /etc/hosts for the sandbox (names of non-loopback entries), or null. */
  hostsFile: string | null;
  close(): void;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;
const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

async function resolve(host: string): Promise<string> {
  if (host.toLowerCase() === "localhost") return "127.0.0.1";
  if (IPV4.test(host) || host.includes(":")) return host;
  const found = await Deno.resolveDns(host, "A").catch(() => [] as string[]);
  if (found.length === 0) {
    throw new MurError(
      "E-CAP-001",
      `invalid network allow entry '${host}': the name does not resolve on this host`,
    );
  }
  return found[0];
}

/** Listens for every entry (a bare host: ports 80 and 443) and writes the hosts file. */
export async function openBridges(entries: NetworkAllowEntry[], dir: string): Promise<Bridges> {
  const bridges: Bridge[] = [];
  const listeners: Deno.Listener[] = [];
  const hosts: string[] = ["127.0.0.1 localhost", "::1 localhost"];
  let n = 0;
  for (const e of entries) {
    const target = await resolve(e.host);
    const loop = LOOPBACK.test(e.host);
    const alias = loop ? (e.host.includes(":") ? "::1" : target) : `127.0.0.${10 + n}`;
    if (!loop) hosts.push(`${alias} ${e.host}`);
    for (const port of e.port !== null ? [e.port] : [80, 443]) {
      const socket = `${dir}/net-${n++}.sock`;
      const l = Deno.listen({ transport: "unix", path: socket });
      listeners.push(l);
      forward(l, target, port);
      bridges.push({ alias, port, socket });
    }
  }
  let hostsFile: string | null = null;
  if (hosts.length > 2) {
    hostsFile = `${dir}/hosts`;
    await Deno.writeTextFile(hostsFile, hosts.join("\n") + "\n");
  }
  return {
    bridges,
    hostsFile,
    close: () => {
      for (const l of listeners) {
        try {
          l.close();
        } catch {
          // closed already
        }
      }
    },
  };
}

async function forward(l: Deno.Listener, hostname: string, port: number): Promise<void> {
  try {
    for await (const inner of l) pipe(inner, hostname, port);
  } catch {
    // the listener closed with the session
  }
}

async function pipe(inner: Deno.Conn, hostname: string, port: number): Promise<void> {
  let outer: Deno.Conn;
  try {
    outer = await Deno.connect({ hostname, port });
  } catch {
    inner.close();
    return;
  }
  await Promise.allSettled([
    inner.readable.pipeTo(outer.writable),
    outer.readable.pipeTo(inner.writable),
  ]);
  for (const c of [inner, outer]) {
    try {
      c.close();
    } catch {
      // closed by a pipe's end
    }
  }
}

/**
 * What runs first inside the sandbox when there are bridges: a socat per bridge, a bounded wait
 * until each listens, then the program, under the seccomp filter (a nested bwrap applies it, as
 * socat itself needs AF_UNIX) that also drops every capability (the outer one keeps them in its
 * own user namespace when mur runs as root, as a nested namespace needs them to be made).
 * Arguments: count, then alias port socket per bridge, then the inner bwrap, "9" or "-" (the
 * filter's descriptor, or none), then the program and its arguments.
 */
export const BRIDGE_SCRIPT = [
  `n=$1; shift`,
  `while [ "$n" -gt 0 ]; do`,
  `  case $1 in *:*) l="TCP6-LISTEN:$2,bind=[$1]" ;; *) l="TCP4-LISTEN:$2,bind=$1" ;; esac`,
  `  socat "$l,fork,reuseaddr" "UNIX-CONNECT:$3" </dev/null >/dev/null 2>&1 &`,
  `  hex=$(printf '%04X' "$2"); k=0`,
  `  while ! grep -qs ":$hex 0\\{8,32\\}:0000 0A" /proc/net/tcp /proc/net/tcp6 && [ $k -lt 500 ]; do`,
  `    sleep 0.01; k=$((k+1))`,
  `  done`,
  `  shift 3; n=$((n-1))`,
  `done`,
  `b=$1; f=$2; shift 2`,
  `if [ "$f" = - ]; then exec "$b" --unshare-user --cap-drop ALL --dev-bind / / -- "$@"; fi`,
  `exec "$b" --unshare-user --cap-drop ALL --dev-bind / / --seccomp 9 -- "$@"`,
].join("\n");
