/**
 * The Redis interface the publisher and the edge are written against (client.ts implements it
 * over ioredis): types and the two errors only, so a module can name them without loading the
 * client — the publisher is constructed before ioredis has loaded (publish_session.ts).
 */
import type { RedisTarget } from "../manifest/redis_url.ts";

/** A reply as ioredis gives it: text, an integer, null or an array of replies. */
export type Reply = string | number | null | Reply[];
export type Command = readonly (string | number)[];

/** Redis answered this command with an error reply. */
export class RedisReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedisReplyError";
  }
}

/** No connection to Redis (or it broke while the command was out). */
export class RedisDown extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RedisDown";
  }
}

export interface RedisSubscriber {
  subscribe(channel: string): void;
  unsubscribe(channel: string): void;
  close(): void;
}

export interface RedisClient {
  readonly target: RedisTarget;
  /** "server", "cluster" or "sentinel", once connected; "unknown" until then. */
  readonly topology: "unknown" | "server" | "cluster" | "sentinel";
  /** Resolves once connected; rejects with `RedisDown` (naming the last error) after `ms`. */
  ready(ms: number): Promise<void>;
  /** One command; an error reply rejects with `RedisReplyError`, no connection with `RedisDown`. */
  call(cmd: Command): Promise<Reply>;
  /**
   * Commands on the keys of one hash slot (one session's keys) in one write; each command's reply
   * or its error reply. `RedisDown` when the connection is gone.
   */
  pipeline(cmds: readonly Command[]): Promise<(Reply | RedisReplyError)[]>;
  /**
   * A connection of its own for pub/sub: `onMessage` for each message on a subscribed channel,
   * `onReady` each time it (re)connects with its subscriptions restored (messages meanwhile are
   * lost: a subscriber catches up by reading).
   */
  subscriber(
    onMessage: (channel: string, message: string) => void,
    onReady: () => void,
  ): RedisSubscriber;
  /**
   * `listener` is called once each time a working connection to Redis is lost (a server killed
   * or restarted, the network gone), before any reconnect; commands out at that moment reject
   * with `RedisDown` then, rather than wait to be sent again. Callers report the outage from
   * here, so it is told even when none of their commands happened to fail.
   */
  onLost(listener: (why: string) => void): void;
  close(): void;
}
