/**
 * The publisher (src/cluster/publisher.ts) reads every reply of its writes, not only the events':
 * over a Redis client that refuses one chosen write, as a Redis Cluster pipeline of mixed replies
 * does (ioredis follows a redirect only when every command of the pipeline got the same one), a
 * primary demoted to a read-only replica, or an ACL. A refused write is an outage: said once,
 * followed by a resync that writes every fact again — never a session's meta left missing (an edge
 * then answers 404 for the session) until the next refresh, nor a task's row left stale.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  type Command,
  type RedisClient,
  RedisReplyError,
  type RedisSubscriber,
  type Reply,
} from "../../src/cluster/client_types.ts";
import { sessionKeys } from "../../src/cluster/keys.ts";
import { type PublishChange, Publisher } from "../../src/cluster/publisher.ts";
import { EventLog } from "../../src/events/log.ts";
import { parseRedisUrl, type RedisTarget } from "../../src/manifest/redis_url.ts";
import { Registry } from "../../src/session/registry.ts";
import { until } from "../helpers/until.ts";

/**
 * A Redis that takes every write but the ones `refuse` picks (each answered with `error`), and
 * records the pipelines it took, as the stream ids and hash fields they wrote.
 */
class RefusingRedis implements RedisClient {
  readonly target = parseRedisUrl("redis://127.0.0.1:1") as RedisTarget;
  readonly topology = "server" as const;
  /** Every non-empty pipeline, as its commands. */
  readonly pipelines: Command[][] = [];
  readonly stream: string[] = [];
  readonly hashes = new Map<string, Map<string, string>>();

  constructor(readonly refuse: (cmd: Command) => string | null) {}

  ready(): Promise<void> {
    return Promise.resolve();
  }

  call(cmd: Command): Promise<Reply> {
    if (cmd[0] === "XREVRANGE") {
      const top = this.stream.at(-1);
      return Promise.resolve(top === undefined ? [] : [[top, []]]);
    }
    return Promise.resolve(null);
  }

  pipeline(cmds: readonly Command[]): Promise<(Reply | RedisReplyError)[]> {
    if (cmds.length) this.pipelines.push([...cmds]);
    return Promise.resolve(cmds.map((cmd) => {
      const error = this.refuse(cmd);
      if (error !== null) return new RedisReplyError(error);
      const [name, key] = [String(cmd[0]), String(cmd[1])];
      if (name === "XADD") {
        const id = String(cmd[cmd[2] === "MAXLEN" ? 5 : 2]);
        const top = this.stream.at(-1);
        if (top !== undefined && !later(id, top)) {
          return new RedisReplyError(
            "ERR The ID specified in XADD is equal or smaller than the target stream top item",
          );
        }
        this.stream.push(id);
        return id;
      }
      if (name === "HSET") {
        const h = this.hashes.get(key) ?? new Map<string, string>();
        this.hashes.set(key, h);
        for (let i = 2; i + 1 < cmd.length; i += 2) h.set(String(cmd[i]), String(cmd[i + 1]));
        return 1;
      }
      return name === "SET" ? "OK" : 1;
    }));
  }

  subscriber(): RedisSubscriber {
    return { subscribe() {}, unsubscribe() {}, close() {} };
  }

  onLost(): void {}

  close(): void {}
}

/** Stream id `a` after `b` (`<ms>-<seq>`). */
function later(a: string, b: string): boolean {
  const [am, as] = a.split("-").map(Number);
  const [bm, bs] = b.split("-").map(Number);
  return am > bm || (am === bm && as > bs);
}

/** A session of one queued task (its row is a fact the publisher writes), its log open. */
function session() {
  const log = new EventLog();
  const registry = new Registry(log);
  const task = registry.create({ text: "hello", origin: "user", source: "a2a", trusted: false });
  return { id: `ses_${"0".repeat(32)}`, log, registry, task };
}

const writes = (p: Command[], name: string, key: string) =>
  p.some((c) => c[0] === name && c[1] === key);

const FACTS = { door: "http://127.0.0.1:2", card: "{}", name: "refused" };

/** A publisher of `s` to `redis`, and the outages and recoveries it reports. */
function publishTo(redis: RefusingRedis, s: ReturnType<typeof session>) {
  const changes: PublishChange[] = [];
  const publisher = new Publisher({
    client: redis,
    session: s,
    facts: () => FACTS,
    report: (c) => changes.push(c),
  });
  return { publisher, changes };
}

Deno.test("publisher: a meta and a task row Redis refuses once are written again by the next write, and the refusal is said", async () => {
  const s = session();
  const keys = sessionKeys(s.id);
  let refusals = 0;
  // The first write of the meta hash refused with the redirect a mixed cluster pipeline returns.
  const redis = new RefusingRedis((cmd) =>
    cmd[0] === "HSET" && cmd[1] === keys.meta && refusals++ === 0
      ? "MOVED 4711 127.0.0.1:7001"
      : null
  );
  const { publisher, changes } = publishTo(redis, s);
  try {
    // The write after the refused one: the meta again, and the task row it carried.
    const [first, next] = await until(
      "a second write",
      () => redis.pipelines.length >= 2 ? redis.pipelines : undefined,
    );
    assert(writes(first, "HSET", keys.meta) && writes(first, "HSET", keys.tasks));
    assert(writes(next, "HSET", keys.meta), JSON.stringify(next));
    assert(writes(next, "HSET", keys.tasks), JSON.stringify(next));
    assertEquals(redis.hashes.get(keys.meta)?.get("door"), FACTS.door);
    assert(redis.hashes.get(keys.tasks)?.has(s.task.id));
    // Said once, as an outage (W-CLU-001 and the trace's cluster_publish line), and its end.
    await until("the recovery to be said", () => changes.length >= 2 ? true : undefined);
    assertEquals(changes, [
      { state: "down", error: "MOVED 4711 127.0.0.1:7001" },
      { state: "up", lost: 0 },
    ]);
  } finally {
    s.log.close();
    await publisher.stop(2000);
  }
});

Deno.test("publisher: an end marker Redis refuses once is written again, so edges hear the stream end", async () => {
  const s = session();
  const keys = sessionKeys(s.id);
  let refusals = 0;
  const redis = new RefusingRedis((cmd) =>
    cmd[0] === "XADD" && cmd[1] === keys.events && cmd[3] === "closed" && refusals++ === 0
      ? "READONLY You can't write against a read only replica."
      : null
  );
  const { publisher, changes } = publishTo(redis, s);
  await until("the first write", () => redis.pipelines.length >= 1 ? true : undefined);
  s.log.close("completed");
  // stop() waits for the end marker (bounded by its own 10 s).
  await publisher.stop(10_000);
  assertEquals(refusals, 2);
  assertEquals(redis.stream, ["0-1"]);
  assertEquals(changes.map((c) => c.state), ["down", "up"]);
});
