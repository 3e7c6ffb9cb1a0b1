/**
 * Test helper: a real `redis-server` (Debian's; `deno task test` installs it: scripts/test/programs.ts) on a free loopback port,
 * with no persistence, so a restart starts empty, as a Redis that lost its data would. Killed by
 * its pid; `restart()` stops it and starts a new one on the same port.
 */
import { openRedis, type Reply } from "../../src/cluster/client.ts";
import { parseRedisUrl, type RedisTarget } from "../../src/manifest/redis_url.ts";
import { until } from "./until.ts";

export const REDIS_SERVER = Deno.env.get("MUR_REDIS_SERVER") ?? "/usr/bin/redis-server";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

export class TestRedis {
  #proc: Deno.ChildProcess | null = null;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<TestRedis> {
    const r = new TestRedis(freePort());
    await r.up();
    return r;
  }

  /** Starts the server and waits until it answers PING. */
  async up(): Promise<void> {
    this.#proc = new Deno.Command(REDIS_SERVER, {
      args: [
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
      ],
      stdout: "null",
      stderr: "null",
      stdin: "null",
    }).spawn();
    await until("redis-server to answer PING", async () => {
      try {
        return await this.cmd("PING") === "PONG" ? true : undefined;
      } catch {
        return undefined;
      }
    }, 10_000);
  }

  /** SIGKILL by pid, and waits for it to exit. */
  async down(): Promise<void> {
    const p = this.#proc;
    this.#proc = null;
    if (!p) return;
    try {
      p.kill("SIGKILL");
    } catch { /* gone */ }
    await p.status;
  }

  async restart(): Promise<void> {
    await this.down();
    await this.up();
  }

  /** One command on a fresh connection. */
  async cmd(...args: (string | number)[]): Promise<Reply> {
    const c = openRedis(parseRedisUrl(this.url) as RedisTarget);
    try {
      await c.ready(2000);
      return await c.call(args);
    } finally {
      c.close();
    }
  }

  close(): Promise<void> {
    return this.down();
  }
}
