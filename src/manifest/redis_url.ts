/**
 * The Redis URL forms `cluster.redis` and `mur edge --redis` accept (docs/edge.md "Redis URLs"),
 * read into a `RedisTarget` with no client loaded: the manifest's check (src/manifest/schema.ts)
 * runs this on every `mur run`, and a capsule without `cluster:` must not pay for a Redis client.
 *
 * - `redis://[user[:password]@]host[:port][/db]`: one server, or any one node of a Redis Cluster
 *   (the client asks it and, when it is a cluster node, follows the cluster from there).
 * - `rediss://…`: the same over TLS; the server's certificate is checked against the system's and
 *   Deno's roots (`DENO_CERT`) and, when set, the PEM file `MURMUR_REDIS_CA` names.
 * - `redis+sentinel://[user[:password]@]host[:port][,host[:port]…]/<master name>[/db]`: the
 *   primary the sentinels name, followed through a failover (no TLS to sentinels: not tested).
 *
 * The password may instead come from `MURMUR_REDIS_PASSWORD` (the URL's wins).
 */

export interface RedisNode {
  host: string;
  port: number;
}

export interface RedisTarget {
  kind: "server" | "sentinel";
  /** The server (or the cluster node to start from); the sentinels for `sentinel`. */
  nodes: RedisNode[];
  tls: boolean;
  /** The master name the sentinels know (sentinel only). */
  masterName?: string;
  username?: string;
  password?: string;
  db?: number;
  /** The URL without its password, for messages. */
  shown: string;
}

const FORMS = "redis://host:port, rediss://host:port or redis+sentinel://host:port/<master name>";

function hostPort(raw: string, defaultPort: number): RedisNode | string {
  let u: URL;
  try {
    u = new URL(`redis://${raw}`);
  } catch {
    return `'${raw}' is not a host[:port]`;
  }
  if (!u.hostname || u.pathname !== "" || u.username || u.search) {
    return `'${raw}' is not a host[:port]`;
  }
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: u.port ? Number(u.port) : defaultPort,
  };
}

function dbOf(raw: string): number | undefined | string {
  if (raw === "") return undefined;
  if (!/^\d{1,2}$/.test(raw)) return `'/${raw}' is not a database number`;
  return Number(raw);
}

/** The target, or an error text saying what is wrong and which forms are accepted. */
export function parseRedisUrl(raw: string, passwordEnv?: string): RedisTarget | string {
  const scheme = /^([a-z+]+):\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return `'${raw}' is not a URL; give ${FORMS}`;
  if (!["redis", "rediss", "redis+sentinel"].includes(scheme)) {
    return `'${scheme}:' is not redis:, rediss: or redis+sentinel:; give ${FORMS}`;
  }
  const tls = scheme.startsWith("rediss");
  const rest = raw.slice(scheme.length + 3);
  if (/[?#]/.test(rest)) return "a redis URL takes no query or fragment";
  const at = rest.lastIndexOf("@");
  const userinfo = at >= 0 ? rest.slice(0, at) : "";
  const [hosts, ...path] = rest.slice(at + 1).split("/");
  if (!hosts) return `the URL names no host; give ${FORMS}`;
  let username: string | undefined;
  let password: string | undefined;
  try {
    const colon = userinfo.indexOf(":");
    username = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo) || undefined;
    password = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) || undefined : undefined;
  } catch {
    return "the URL's user or password is not valid percent-encoding";
  }
  password ??= passwordEnv || undefined;
  const sentinel = scheme.endsWith("+sentinel");
  const nodes: RedisNode[] = [];
  for (const h of hosts.split(",")) {
    const n = hostPort(h, sentinel ? 26379 : 6379);
    if (typeof n === "string") return n;
    nodes.push(n);
  }
  if (!sentinel && nodes.length > 1) {
    return "a redis:// URL names one host (any one node of a Redis Cluster will do); several hosts are for redis+sentinel://";
  }
  let masterName: string | undefined;
  if (sentinel) {
    masterName = path.shift();
    if (!masterName) {
      return "a redis+sentinel:// URL names the master: redis+sentinel://host:port/<master name>";
    }
  }
  if (path.length > 1) return `'/${path.join("/")}' is not a database number`;
  const db = dbOf(path[0] ?? "");
  if (typeof db === "string") return db;
  const shownHosts = hosts.replace(/^.*@/, "");
  return {
    kind: sentinel ? "sentinel" : "server",
    nodes,
    tls,
    ...(masterName !== undefined ? { masterName } : {}),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(db !== undefined ? { db } : {}),
    shown: `${scheme}://${username ? `${username}@` : ""}${shownHosts}${
      masterName !== undefined ? `/${masterName}` : ""
    }${db !== undefined ? `/${db}` : ""}`,
  };
}
