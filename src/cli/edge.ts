/**
 * `mur edge [--redis URL] [--redis-ca FILE] [--port N] [--bind HOST]` (docs/edge.md): serve every
 * session published to one Redis, under `/sessions/<session id>/`, until SIGTERM / SIGINT. Prints
 * one JSON line when it listens (`{"edge":"http://…","pid":…,"redis":"redis://…"}`), so a
 * supervisor or a test knows its address; a Redis that does not answer within 2 s is said on
 * stderr (W-EDGE-001) and the edge serves on, reading when it answers.
 */
import { usageText } from "../invocation.ts";
import { MurError } from "../errors.ts";
import { parseRedisUrl } from "../manifest/redis_url.ts";
import { openRedis } from "../cluster/client.ts";
import { CLUSTER_KEY_ENV, CLUSTER_KEY_MIN_BYTES } from "../door/auth.ts";
import { startEdge } from "../edge/server.ts";
import { badValue, parse, usageError } from "./args.ts";

export const USAGE = `usage: mur edge [--redis URL] [--redis-ca FILE] [--port N] [--bind HOST]

Serves every session published to one Redis (a capsule with a cluster: block) under
/sessions/<session id>/, in JSON-RPC (…/), HTTP+JSON (…/tasks, …/murmur/session:watch, …) and
the live page (…/ui): murmur.WatchSession, SubscribeToTask, GetTask, ListTasks,
murmur.PollSession and the card from Redis; SendMessage, SendStreamingMessage, CancelTask,
murmur.StopSession and push configs forwarded to the capsule's own door.

  --redis URL   redis://[user[:password]@]host[:port][/db] (one server, or any node of a Redis
                Cluster), rediss://… (TLS), redis+sentinel://host:port[,host:port]/<master>
                (default: $MURMUR_REDIS_URL); the password may instead be in $MURMUR_REDIS_PASSWORD
  --redis-ca FILE  PEM CA certificates for rediss:// (default: $MURMUR_REDIS_CA)
  --port N      the port to listen on (default 52300; 0 = any free port)
  --bind HOST   the address to listen on (default 127.0.0.1)
  -h, --help    this text

Authenticated sessions: set the same MURMUR_CLUSTER_KEY (32+ bytes) as their capsules.`;

export const FLAGS = {
  redis: { type: "string" },
  "redis-ca": { type: "string" },
  port: { type: "string" },
  bind: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function edgeCommand(args: string[]): Promise<number> {
  const parsed = parse("edge", args, FLAGS, USAGE);
  if (parsed.values.help) {
    console.log(usageText(USAGE));
    return 0;
  }
  if (parsed.positionals.length > 0) usageErrorThrow();
  const portRaw = parsed.values.port ?? "52300";
  if (!/^\d{1,5}$/.test(portRaw) || Number(portRaw) > 65535) {
    throw badValue("edge", "--port", portRaw, "a port number from 0 to 65535", USAGE);
  }
  const raw = parsed.values.redis ?? Deno.env.get("MURMUR_REDIS_URL");
  if (!raw) {
    throw new MurError(
      "E-EDGE-001",
      "mur edge: no Redis to read sessions from",
      "give --redis redis://host:port or set MURMUR_REDIS_URL",
    );
  }
  const target = parseRedisUrl(raw, Deno.env.get("MURMUR_REDIS_PASSWORD"));
  if (typeof target === "string") {
    throw new MurError("E-EDGE-001", `mur edge: --redis: ${target}`);
  }
  const key = Deno.env.get(CLUSTER_KEY_ENV) || null;
  if (key !== null && new TextEncoder().encode(key).length < CLUSTER_KEY_MIN_BYTES) {
    throw new MurError(
      "E-EDGE-001",
      `mur edge: ${CLUSTER_KEY_ENV} is shorter than ${CLUSTER_KEY_MIN_BYTES} bytes`,
      "use the same key as the capsules, for example the output of `openssl rand -base64 32`",
    );
  }
  const caPath = parsed.values["redis-ca"] ?? Deno.env.get("MURMUR_REDIS_CA");
  let ca: string | undefined;
  if (caPath) {
    try {
      ca = await Deno.readTextFile(caPath);
    } catch (e) {
      throw new MurError(
        "E-EDGE-001",
        `mur edge: the CA file ${caPath} cannot be read: ${(e as Error).message}`,
        "give --redis-ca (or MURMUR_REDIS_CA) the path of a PEM file",
      );
    }
  }
  const bind = parsed.values.bind ?? "127.0.0.1";
  const redis = openRedis(target, { ca, autoPipeline: true });
  const edge = startEdge({
    redis,
    bind,
    port: Number(portRaw),
    heartbeatMs: Number(Deno.env.get("MURMUR_HEARTBEAT_MS") ?? "15000") || 15000,
    clusterKey: key,
    warn: (line) => console.error(line),
  });
  const host = bind.includes(":") ? `[${bind}]` : bind;
  console.log(
    JSON.stringify({ edge: `http://${host}:${edge.port}`, pid: Deno.pid, redis: target.shown }),
  );
  redis.ready(2000).catch((e: Error) =>
    console.error(
      `warning[W-EDGE-001]: ${e.message}; serving anyway: /healthz answers 503 and sessions are read when Redis answers`,
    )
  );
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  await stopped;
  await edge.shutdown();
  return 0;

  function usageErrorThrow(): never {
    throw usageError("edge", "takes no arguments", USAGE);
  }
}
