/**
 * A small Redis client over `Deno.connect` (README "Beyond one machine": why not an npm client).
 * One connection, commands pipelined: each command's bytes are written in order and its reply is
 * the next one read, so a batch of XADDs is one write and one read. A connection that breaks
 * (EOF, reset, a refused write) rejects everything waiting with `RedisDown` and stays broken: the
 * caller makes a new one (src/cluster/publisher.ts and src/edge/mirror.ts reconnect with backoff).
 */
import { encodeCommand, RedisReplyError, type Reply, ReplyReader } from "./resp.ts";

export { RedisReplyError };
export type { Reply };

/** The connection is gone (or never came): every command on it fails with this. */
export class RedisDown extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RedisDown";
  }
}

export interface RedisTarget {
  hostname: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  /** The URL without its password, for messages. */
  shown: string;
}

/**
 * `redis://[user[:password]@]host[:port][/db]`. The password may instead come from
 * `MURMUR_REDIS_PASSWORD` (the URL's wins), so a manifest can name the server and keep the secret
 * in the environment. Returns an error text for anything else.
 */
export function parseRedisUrl(raw: string, passwordEnv?: string): RedisTarget | string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `'${raw}' is not a URL; give redis://host:port`;
  }
  if (u.protocol !== "redis:") return `'${u.protocol}' is not redis:; give redis://host:port`;
  if (!u.hostname) return "the URL names no host; give redis://host:port";
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db)) return `'/${db}' is not a database number`;
  if (u.search || u.hash) return "a redis URL takes no query or fragment";
  const password = u.password ? decodeURIComponent(u.password) : passwordEnv || undefined;
  const username = u.username ? decodeURIComponent(u.username) : undefined;
  const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = u.port ? Number(u.port) : 6379;
  return {
    hostname,
    port,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(db !== "" ? { db: Number(db) } : {}),
    shown: `redis://${u.host}${db !== "" ? `/${db}` : ""}`,
  };
}

interface Waiting {
  resolve(r: Reply): void;
  reject(e: Error): void;
}

export class RedisConn {
  #conn: Deno.TcpConn;
  #waiting: Waiting[] = [];
  #head = 0;
  #out: Uint8Array[] = [];
  #writing = false;
  #broken: RedisDown | null = null;
  readonly closed: Promise<void>;

  private constructor(conn: Deno.TcpConn, readonly target: RedisTarget) {
    this.#conn = conn;
    conn.setNoDelay(true);
    this.closed = this.#readLoop();
  }

  /** Connects, authenticates and selects the database; throws `RedisDown` when it cannot. */
  static async connect(target: RedisTarget, timeoutMs = 2000): Promise<RedisConn> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let conn: Deno.TcpConn;
    try {
      conn = await Promise.race([
        Deno.connect({ hostname: target.hostname, port: target.port }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (e) {
      throw new RedisDown(`cannot connect to ${target.shown}: ${(e as Error).message}`, {
        cause: e,
      });
    } finally {
      clearTimeout(timer);
    }
    const c = new RedisConn(conn, target);
    try {
      if (target.password !== undefined) {
        await c.must(
          target.username ? ["AUTH", target.username, target.password] : ["AUTH", target.password],
        );
      }
      if (target.db !== undefined) await c.must(["SELECT", target.db]);
    } catch (e) {
      c.close();
      throw e instanceof RedisDown ? e : new RedisDown(`${target.shown}: ${(e as Error).message}`);
    }
    return c;
  }

  get broken(): boolean {
    return this.#broken !== null;
  }

  /** One command; resolves with its reply (a Redis error reply is a value, not a rejection). */
  send(args: readonly (string | number)[]): Promise<Reply> {
    if (this.#broken) return Promise.reject(this.#broken);
    const p = new Promise<Reply>((resolve, reject) => this.#waiting.push({ resolve, reject }));
    this.#out.push(encodeCommand(args));
    this.#flush();
    return p;
  }

  /** One command whose error reply is thrown. */
  async must(args: readonly (string | number)[]): Promise<Reply> {
    const r = await this.send(args);
    if (r instanceof RedisReplyError) throw r;
    return r;
  }

  /** Several commands in one write; their replies in order. */
  pipeline(cmds: readonly (readonly (string | number)[])[]): Promise<Reply[]> {
    return Promise.all(cmds.map((c) => this.send(c)));
  }

  close(): void {
    this.#break(new RedisDown(`connection to ${this.target.shown} closed`));
  }

  async #flush(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    try {
      while (this.#out.length > 0 && !this.#broken) {
        const parts = this.#out;
        this.#out = [];
        let n = 0;
        for (const p of parts) n += p.length;
        const buf = new Uint8Array(n);
        let at = 0;
        for (const p of parts) {
          buf.set(p, at);
          at += p.length;
        }
        let off = 0;
        while (off < buf.length) off += await this.#conn.write(buf.subarray(off));
      }
    } catch (e) {
      this.#break(new RedisDown(`write to ${this.target.shown} failed: ${(e as Error).message}`));
    } finally {
      this.#writing = false;
    }
  }

  async #readLoop(): Promise<void> {
    const reader = new ReplyReader();
    const buf = new Uint8Array(256 * 1024);
    try {
      for (;;) {
        const n = await this.#conn.read(buf);
        if (n === null) break;
        reader.push(buf.subarray(0, n));
        for (let r = reader.next(); r !== undefined; r = reader.next()) {
          const w = this.#waiting[this.#head++];
          if (this.#head > 1024) {
            this.#waiting = this.#waiting.slice(this.#head);
            this.#head = 0;
          }
          w?.resolve(r.value);
        }
      }
      this.#break(new RedisDown(`${this.target.shown} closed the connection`));
    } catch (e) {
      this.#break(new RedisDown(`${this.target.shown}: ${(e as Error).message}`, { cause: e }));
    }
  }

  #break(e: RedisDown): void {
    if (this.#broken) return;
    this.#broken = e;
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
    const waiting = this.#waiting.slice(this.#head);
    this.#waiting = [];
    this.#head = 0;
    for (const w of waiting) w.reject(e);
  }
}
