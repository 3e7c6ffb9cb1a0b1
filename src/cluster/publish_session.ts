/**
 * `mur run` with a `cluster:` block (docs/edge.md): the shared token key, then the
 * publisher over the session and its door, with its outages on stderr (W-CLU-001, once per
 * outage) and in the trace (`cluster_publish`). Loaded only when the manifest has the block.
 */
import { warningLine } from "../errors.ts";
import { CLUSTER_KEY_ENV, CLUSTER_KEY_MIN_BYTES, sessionTokenKey } from "../door/auth.ts";
import type { ClusterConfig, Manifest } from "../manifest/types.ts";
import { takesTasks } from "../session/lifecycle.ts";
import type { TraceWriter } from "../trace_writer.ts";
import { PUBLISH_QUEUE, type PublishedSession, Publisher } from "./publisher.ts";
import { lazyImport } from "../lazy.ts";
import { parseRedisUrl } from "../manifest/redis_url.ts";

/**
 * The session's token key from `MURMUR_CLUSTER_KEY`, or undefined (a random key, and W-CLU-002 on
 * an authenticated capsule: edges cannot verify its tokens).
 */
export async function clusterTokenKey(
  manifest: Manifest,
  sessionId: string,
  env: (name: string) => string | undefined,
  warn: (line: string) => void,
): Promise<Uint8Array | undefined> {
  if (!manifest.network.authentication) return undefined;
  const shared = env(CLUSTER_KEY_ENV);
  if (!shared || new TextEncoder().encode(shared).length < CLUSTER_KEY_MIN_BYTES) {
    warn(warningLine(
      "W-CLU-002",
      `${CLUSTER_KEY_ENV} is ${
        shared ? `shorter than ${CLUSTER_KEY_MIN_BYTES} bytes` : "not set"
      }: this session's tokens are its own, and mur edge refuses its calls; set the same ${CLUSTER_KEY_ENV} for the capsule and its edges`,
    ));
    return undefined;
  }
  return await sessionTokenKey(shared, sessionId);
}

export interface PublishInput {
  cluster: ClusterConfig;
  session: PublishedSession & { conversationMode: "stateless" | "threaded"; trace: TraceWriter };
  sessionEventId: () => string | null;
  manifest: Manifest;
  /** `localhost:<port>` */
  doorAddress: string;
  cards: { public: string; extended: string | null };
  /** Tokens here verify on edges (a shared key), or the session is public. */
  edgeAuth: "none" | "shared" | "unverifiable";
  env: (name: string) => string | undefined;
  warn(line: string): void;
}

/** The session's publishing, under way: `stop` publishes what is left (publisher.ts `stop`). */
export interface Publishing {
  stop(ms?: number): Promise<void>;
}

/**
 * Starts publishing without waiting for the Redis client to load: ioredis and Node's net and tls
 * cost about 150–250 ms on this project's busy 2-core machine (importing client.ts against
 * importing nothing), so `mur run` calls this after its readiness line. Events the session wrote
 * before the publisher subscribed are in its log's replay ring, which the publisher publishes
 * first.
 */
export function startPublishing(p: PublishInput): Publishing {
  const client = lazyImport<typeof import("./client.ts")>("cluster/client.ts");
  const publisher = client.then((m) => makePublisher(p, m.openRedis)).catch((e) => {
    p.warn(
      warningLine(
        "W-CLU-001",
        `the Redis client did not load (${(e as Error).message}); this session is not published`,
      ),
    );
    return null;
  });
  return {
    async stop(ms) {
      await (await publisher)?.stop(ms);
    },
  };
}

function makePublisher(
  p: PublishInput,
  openRedis: typeof import("./client.ts").openRedis,
): Publisher {
  const target = parseRedisUrl(p.cluster.redis, p.env("MURMUR_REDIS_PASSWORD"));
  // The manifest's check parsed the same URL: a string here cannot happen.
  if (typeof target === "string") throw new Error(`cluster.redis: ${target}`);
  const door = p.cluster.advertise ?? `http://${p.doorAddress}`;
  return new Publisher({
    client: openRedis(target, { ca: readCa(p.env("MURMUR_REDIS_CA"), p.warn) }),
    session: p.session,
    facts: () => ({
      door,
      name: p.manifest.name,
      conversationMode: p.session.conversationMode,
      acceptsTasks: String(takesTasks(p.manifest.lifecycle)),
      auth: p.edgeAuth,
      card: p.cards.public,
      ...(p.cards.extended !== null ? { extendedCard: p.cards.extended } : {}),
    }),
    report: (change) => {
      if (change.state === "down") {
        p.warn(warningLine(
          "W-CLU-001",
          `cannot publish to ${target.shown} (${change.error}); the session and its door go on, events wait in a queue of ${PUBLISH_QUEUE} and publishing resumes when Redis answers`,
        ));
      } else {
        p.warn(
          `[murmur] publishing to ${target.shown} again${
            change.lost > 0
              ? `; ${change.lost} events could not be published (edges serve them as gap / lagged)`
              : ", nothing lost"
          }`,
        );
      }
      p.session.trace.write("cluster_publish", p.sessionEventId(), {
        redis: target.shown,
        state: change.state,
        error: change.state === "down" ? change.error : null,
        lost_events: change.state === "up" ? change.lost : 0,
      });
    },
  });
}

/**
 * The PEM file `MURMUR_REDIS_CA` names, read; one that cannot be read is said (`warn`) and left
 * out, so the TLS handshake's own error names what the server's certificate lacked.
 */
function readCa(path: string | undefined, warn: (line: string) => void): string | undefined {
  if (!path) return undefined;
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    warn(
      warningLine(
        "W-CLU-001",
        `MURMUR_REDIS_CA ${path} cannot be read (${
          (e as Error).message
        }); using the default CA roots`,
      ),
    );
    return undefined;
  }
}
