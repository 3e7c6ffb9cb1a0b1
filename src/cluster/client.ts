/**
 * The one Redis interface the publisher (publisher.ts) and the edge (src/edge/) use, over ioredis
 * (docs/edge.md "Redis"): one server, a Redis Cluster reached through any one node (found by asking
 * that node `CLUSTER INFO`; the client then follows `MOVED` / `ASK` and failovers), or a primary
 * named by sentinels, over TCP or TLS, with ACL users. ioredis reconnects by itself; while it is
 * not connected every command fails at once with `RedisDown` (no offline queue), and a command out
 * when the connection breaks fails then too (ioredis would hold it and send it again after the
 * reconnect, so a short outage looked like a slow reply), so the callers' own outage handling
 * (report once, back off, resync) sees every outage rather than a queue that grows. Loaded only with `cluster:` and by `mur edge` (src/lazy.ts): ioredis brings Node's net and
 * tls into the process.
 */
import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { RedisTarget } from "../manifest/redis_url.ts";
import {
  type Command,
  type RedisClient,
  RedisDown,
  RedisReplyError,
  type RedisSubscriber,
  type Reply,
} from "./client_types.ts";

export type { RedisTarget };
export { RedisDown, RedisReplyError } from "./client_types.ts";
export type { Command, RedisClient, RedisSubscriber, Reply } from "./client_types.ts";

export interface ClientOptions {
  /** PEM text of CA certificates for `rediss://` (MURMUR_REDIS_CA), beside the default roots. */
  ca?: string;
  /** Batch the commands of one tick into one write (the edge's many small reads). */
  autoPipeline?: boolean;
  /**
   * `CLIENT SETNAME` of every connection (the bench tells its own apart). Not set by mur itself: an
   * ACL user without `CLIENT` (as managed Redis may give) could then not connect at all.
   */
  name?: string;
}

const RETRY_MS = (n: number) => Math.min(100 * 2 ** Math.min(n, 5), 2000);

function asReplyError(e: unknown): RedisReplyError | RedisDown {
  const err = e as Error;
  if (err?.name === "ReplyError") return new RedisReplyError(err.message);
  return new RedisDown(err?.message ?? String(e), { cause: e });
}

function baseOptions(t: RedisTarget, o: ClientOptions): RedisOptions {
  return {
    ...(t.username ? { username: t.username } : {}),
    ...(t.password ? { password: t.password } : {}),
    ...(t.tls ? { tls: o.ca ? { ca: [o.ca] } : {} } : {}),
    enableOfflineQueue: false,
    // A command out when the connection broke has failed (see `#lost`): not sent again.
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 10_000,
    retryStrategy: RETRY_MS,
    enableAutoPipelining: o.autoPipeline === true,
    lazyConnect: false,
    ...(o.name ? { connectionName: o.name } : {}),
  };
}

class IoRedisClient implements RedisClient {
  #inner: Redis | Cluster | null = null;
  #probe: Redis | null;
  /** The cluster client while it makes its first connections. */
  #cluster: Cluster | null = null;
  #lastError = "no answer yet";
  #topology: RedisClient["topology"] = "unknown";
  #closed = false;
  readonly #ready: Promise<void>;
  /** A server's (or sentinel-named primary's) connection is up: its loss is told once. */
  #connected = false;
  /** The rejections of the commands out now. */
  readonly #out = new Set<(e: Error) => void>();
  readonly #onLost: ((why: string) => void)[] = [];

  constructor(readonly target: RedisTarget, readonly o: ClientOptions) {
    let ready!: () => void;
    this.#ready = new Promise((r) => (ready = r));
    const t = target;
    const base = baseOptions(t, o);
    this.#probe = t.kind === "sentinel"
      ? new Redis({
        ...base,
        sentinels: t.nodes,
        name: t.masterName!,
        db: t.db ?? 0,
        sentinelRetryStrategy: RETRY_MS,
      })
      : new Redis({ ...base, host: t.nodes[0].host, port: t.nodes[0].port, db: t.db ?? 0 });
    const probe = this.#probe;
    probe.on("error", (e: Error) => (this.#lastError = e.message));
    probe.on("ready", () => (this.#connected = true));
    probe.on("close", () => {
      if (this.#inner === probe && this.#connected && !this.#closed) this.#lost();
      this.#connected = false;
    });
    probe.once("ready", async () => {
      if (t.kind === "sentinel") {
        this.#topology = "sentinel";
        this.#inner = probe;
        this.#probe = null;
        return ready();
      }
      // CLUSTER INFO (not INFO, which ACLs often deny as @dangerous): an error reply ("cluster
      // support disabled", or a user not allowed it) means one server.
      const info = await this.#clusterInfo(probe);
      if (info === null) return;
      if (!/cluster_state:/.test(info)) {
        this.#topology = "server";
        this.#inner = probe;
        this.#probe = null;
        return ready();
      }
      // A cluster node: a cluster client seeded with it, and the probe's connection let go.
      probe.disconnect();
      this.#probe = null;
      if (this.#closed) return;
      if (t.db) this.#lastError = "a Redis Cluster has only database 0";
      // The cluster client follows a node's loss itself (retries, redirects, a new primary).
      // Its node connections must stay lazy (connected on first use): ioredis fills a node's
      // options with lodash `defaults`, where the first value given wins, so our `lazyConnect:
      // false` beat its own `lazyConnect: true`. Every node then began connecting at each slots
      // refresh, and the ready check's CLUSTER INFO, sent to a random node, was refused ("Connection
      // is closed.": no offline queue) whenever that node was still connecting; each refusal
      // dropped every connection and tried again after a backoff up to 2 s, so a client took
      // from 10 ms to over 11 s to be ready, with a tail past 30 s.
      const {
        enableOfflineQueue: _,
        retryStrategy: __,
        autoResendUnfulfilledCommands: ___,
        lazyConnect: ____,
        ...redisOptions
      } = base;
      const cluster = new Cluster(t.nodes, {
        redisOptions,
        enableOfflineQueue: false,
        enableAutoPipelining: o.autoPipeline === true,
        clusterRetryStrategy: RETRY_MS,
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
        retryDelayOnTryAgain: 200,
        maxRedirections: 16,
        slotsRefreshTimeout: 2000,
      });
      cluster.on("error", (e: Error) => (this.#lastError = e.message));
      this.#cluster = cluster;
      cluster.once("ready", () => {
        this.#inner = cluster;
        this.#topology = "cluster";
        ready();
      });
    });
  }

  /**
   * The node's CLUSTER INFO, "" when it answers with an error (one server), null once closed. A
   * failure without an answer (the connection broke or timed out) is asked again: taken for one
   * server, a cluster node would refuse every command on the other nodes' slots with MOVED, for
   * as long as the process runs.
   */
  async #clusterInfo(probe: Redis): Promise<string | null> {
    for (let n = 0;; n++) {
      if (this.#closed) return null;
      try {
        return String(await probe.call("CLUSTER", "INFO"));
      } catch (e) {
        if ((e as Error)?.name === "ReplyError") return "";
        this.#lastError = (e as Error)?.message ?? String(e);
      }
      await new Promise((r) => setTimeout(r, RETRY_MS(n)));
    }
  }

  get topology() {
    return this.#topology;
  }

  async ready(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        this.#ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new RedisDown(`cannot reach ${this.target.shown}: ${this.#lastError}`)),
            ms,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The connection broke: the commands out fail now, and the listeners hear it once. */
  #lost(): void {
    const why = `the connection to ${this.target.shown} was lost`;
    for (const reject of [...this.#out]) reject(new RedisDown(why));
    this.#out.clear();
    for (const l of this.#onLost) l(why);
  }

  /** `p`, or `RedisDown` as soon as the connection breaks while it is out. */
  #tracked<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#out.add(reject);
      p.then(resolve, reject).finally(() => this.#out.delete(reject));
    });
  }

  onLost(listener: (why: string) => void): void {
    this.#onLost.push(listener);
  }

  /** The connected client; a command made before the first connection waits for it a while. */
  async #client(): Promise<Redis | Cluster> {
    if (this.#inner === null) await this.ready(2000);
    return this.#inner!;
  }

  async call(cmd: Command): Promise<Reply> {
    const c = await this.#client();
    try {
      return await this.#tracked(c.call(String(cmd[0]), ...cmd.slice(1))) as Reply;
    } catch (e) {
      throw asReplyError(e);
    }
  }

  async pipeline(cmds: readonly Command[]): Promise<(Reply | RedisReplyError)[]> {
    if (cmds.length === 0) return [];
    const c = await this.#client();
    let out: [Error | null, unknown][] | null;
    try {
      out = await this.#tracked(
        c.pipeline(cmds.map((x) => ["call", String(x[0]), ...x.slice(1).map(String)])).exec(),
      );
    } catch (e) {
      throw asReplyError(e);
    }
    if (out === null) throw new RedisDown(`${this.target.shown}: the pipeline was not sent`);
    return out.map(([err, value]) => {
      if (err === null) return value as Reply;
      const mapped = asReplyError(err);
      if (mapped instanceof RedisDown) throw mapped;
      return mapped;
    });
  }

  subscriber(
    onMessage: (channel: string, message: string) => void,
    onReady: () => void,
  ): RedisSubscriber {
    const channels = new Set<string>();
    let sub: Redis | Cluster | null = null;
    let closed = false;
    const attach = () => {
      if (closed || this.#inner === null) return;
      // A connection of its own: a subscribed connection takes no other command.
      const inner = this.#inner;
      sub = inner instanceof Cluster ? inner.duplicate() : inner.duplicate();
      sub.on("error", (e: Error) => (this.#lastError = e.message));
      sub.on("message", (ch: string, msg: string) => onMessage(ch, msg));
      sub.on("ready", () => {
        if (channels.size) sub?.subscribe(...channels).catch(() => {});
        onReady();
      });
    };
    this.#ready.then(attach);
    return {
      subscribe(ch) {
        if (channels.has(ch)) return;
        channels.add(ch);
        sub?.subscribe(ch).catch(() => {});
      },
      unsubscribe(ch) {
        if (!channels.delete(ch)) return;
        sub?.unsubscribe(ch).catch(() => {});
      },
      close() {
        closed = true;
        sub?.disconnect();
      },
    };
  }

  close(): void {
    this.#closed = true;
    this.#probe?.disconnect();
    this.#cluster?.disconnect();
    this.#inner?.disconnect();
  }
}

/** A client for `target`; it connects (and reconnects) by itself: see `ready`. */
export function openRedis(target: RedisTarget, o: ClientOptions = {}): RedisClient {
  return new IoRedisClient(target, o);
}
