/**
 * Test helper: the Redis deployments people run, each made of real Debian processes on loopback
 * ports, every one killed by its pid in `close()`:
 *
 * - `TlsRedis`: `redis-server` on a TLS port only, its certificate from a test CA made with
 *   `openssl`, an ACL user allowed mur's keys and channels, the default user off.
 * - `TestCluster`: six `redis-server --cluster-enabled yes` nodes made a cluster of three primaries
 *   and three replicas by `redis-cli --cluster create`; slots moved by hand (the MIGRATING /
 *   IMPORTING dance `redis-cli --cluster reshard` does), a primary SIGKILLed for its replica to
 *   take over.
 * - `TestSentinel`: a primary, its replica and three `redis-sentinel`s; the primary SIGKILLed for
 *   the sentinels to promote the replica.
 *
 * Admin commands go through `redis-cli` (MUR_REDIS_CLI), which talks to exactly the node it is
 * given, as these steps need.
 */
import { REDIS_SERVER } from "./redis.ts";
import { until } from "./until.ts";
import { makeTestCa } from "./test_ca.ts";

export const REDIS_CLI = Deno.env.get("MUR_REDIS_CLI") ?? "/usr/bin/redis-cli";
export const REDIS_SENTINEL = Deno.env.get("MUR_REDIS_SENTINEL") ?? "/usr/bin/redis-sentinel";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** `redis-cli -p <port> <args>`: its output, trimmed (raw form: one value a line). */
export async function cli(port: number, ...args: (string | number)[]): Promise<string> {
  const out = await new Deno.Command(REDIS_CLI, {
    args: ["-h", "127.0.0.1", "-p", String(port), ...args.map(String)],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) {
    throw new Error(`redis-cli ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

/** One server process. */
class Proc {
  constructor(readonly port: number, readonly proc: Deno.ChildProcess) {}
  async kill(): Promise<void> {
    try {
      this.proc.kill("SIGKILL");
    } catch { /* gone */ }
    await this.proc.status;
  }
}

/**
 * Every server runs in its deployment's temp folder (removed by `close()`): a primary writes an
 * RDB file for each replica's first sync, which would otherwise land where the tests run.
 */
function spawn(bin: string, args: string[], cwd: string): Deno.ChildProcess {
  return new Deno.Command(bin, { args, cwd, stdout: "null", stderr: "null", stdin: "null" })
    .spawn();
}

const BASE_ARGS = [
  "--bind",
  "127.0.0.1",
  "--save",
  "",
  "--appendonly",
  "no",
  "--protected-mode",
  "no",
];

async function answers(port: number): Promise<void> {
  await until(`redis on ${port} to answer PING`, async () => {
    try {
      return (await cli(port, "PING")) === "PONG" ? true : undefined;
    } catch {
      return undefined;
    }
  }, 15_000);
}

/** `redis-server` on TLS only, with one ACL user for mur's keys and channels. */
export class TlsRedis {
  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly ca: string,
    readonly user: string,
    readonly password: string,
    readonly proc: Proc,
  ) {}

  /** `rediss://<user>:<password>@127.0.0.1:<port>` */
  get url(): string {
    return `rediss://${this.user}:${this.password}@127.0.0.1:${this.port}`;
  }

  static async start(): Promise<TlsRedis> {
    const dir = await Deno.makeTempDir({ prefix: "mur-redis-tls-" });
    const files = await makeTestCa(dir);
    const port = freePort();
    const password = crypto.randomUUID();
    const proc = spawn(REDIS_SERVER, [
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--tls-cert-file",
      files.cert,
      "--tls-key-file",
      files.key,
      "--tls-ca-cert-file",
      files.ca,
      "--tls-auth-clients",
      "no",
      // What mur needs: its own keys and channels, the commands of the data types it uses.
      "--user",
      "mur",
      "on",
      `>${password}`,
      "~mur:*",
      "&mur:*",
      "+@all",
      "-@dangerous",
      "--user",
      "default",
      "off",
      ...BASE_ARGS,
    ], dir);
    const r = new TlsRedis(port, dir, files.ca, "mur", password, new Proc(port, proc));
    await until("the TLS redis-server to answer", async () => {
      const out = await new Deno.Command(REDIS_CLI, {
        args: [
          "--tls",
          "--cacert",
          files.ca,
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
          "--user",
          "mur",
          "--pass",
          password,
          "--no-auth-warning",
          "PING",
        ],
        stdout: "piped",
        stderr: "null",
        stdin: "null",
      }).output();
      return new TextDecoder().decode(out.stdout).trim() === "PONG" ? true : undefined;
    }, 15_000);
    return r;
  }

  async close(): Promise<void> {
    await this.proc.kill();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

export interface ClusterNode {
  id: string;
  port: number;
  role: "master" | "slave";
  /** The primary's id (replicas). */
  of: string | null;
  slots: [number, number][];
}

/** Three primaries, three replicas. */
export class TestCluster {
  readonly #procs = new Map<number, Proc>();
  private constructor(readonly dir: string) {}

  static async start(): Promise<TestCluster> {
    const c = new TestCluster(await Deno.makeTempDir({ prefix: "mur-redis-cluster-" }));
    const ports = Array.from({ length: 6 }, freePort);
    for (const port of ports) {
      c.#procs.set(
        port,
        new Proc(
          port,
          spawn(REDIS_SERVER, [
            "--port",
            String(port),
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            `${c.dir}/nodes-${port}.conf`,
            "--cluster-node-timeout",
            "1000",
            // A replica that lost its primary may always take over, however long ago it last
            // heard from it: under a loaded machine its replication link can look stale, and
            // the default factor (10) then makes it refuse to fail over at all.
            "--cluster-replica-validity-factor",
            "0",
            ...BASE_ARGS,
          ], c.dir),
        ),
      );
    }
    for (const port of ports) await answers(port);
    const out = await new Deno.Command(REDIS_CLI, {
      args: [
        "--cluster",
        "create",
        ...ports.map((p) => `127.0.0.1:${p}`),
        "--cluster-replicas",
        "1",
        "--cluster-yes",
      ],
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stdout));
    await c.settled();
    return c;
  }

  /** Every live node agrees the cluster is ok and every replica is attached. */
  async settled(): Promise<void> {
    await until(
      "the cluster to be ok on every node",
      async () => {
        for (const port of this.#procs.keys()) {
          if (!/cluster_state:ok/.test(await cli(port, "CLUSTER", "INFO"))) return undefined;
        }
        const nodes = await this.nodes();
        return nodes.filter((n) => n.role === "master" && n.slots.length).length === 3
          ? true
          : undefined;
      },
      30_000,
      100,
    );
  }

  /** The live nodes as a live node sees them. */
  async nodes(): Promise<ClusterNode[]> {
    const port = [...this.#procs.keys()][0];
    const text = await cli(port, "CLUSTER", "NODES");
    const out: ClusterNode[] = [];
    for (const line of text.split("\n")) {
      const f = line.trim().split(" ");
      if (f.length < 8 || f[2].includes("fail")) continue;
      const p = Number(f[1].split("@")[0].split(":")[1]);
      if (!this.#procs.has(p)) continue;
      const slots = f.slice(8).filter((s) => /^\d+(-\d+)?$/.test(s)).map((s) => {
        const [a, b] = s.split("-").map(Number);
        return [a, b ?? a] as [number, number];
      });
      out.push({
        id: f[0],
        port: p,
        role: f[2].includes("master") ? "master" : "slave",
        of: f[3] === "-" ? null : f[3],
        slots,
      });
    }
    return out;
  }

  async primaries(): Promise<ClusterNode[]> {
    return (await this.nodes()).filter((n) => n.role === "master" && n.slots.length > 0);
  }

  /** A node's URL (the one a capsule or an edge is given). */
  url(port: number): string {
    return `redis://127.0.0.1:${port}`;
  }

  async slotOf(key: string): Promise<number> {
    return Number(await cli([...this.#procs.keys()][0], "CLUSTER", "KEYSLOT", key));
  }

  async ownerOf(slot: number): Promise<ClusterNode> {
    const p = (await this.primaries()).find((n) =>
      n.slots.some(([a, b]) => slot >= a && slot <= b)
    );
    if (!p) throw new Error(`no primary holds slot ${slot}`);
    return p;
  }

  /**
   * Moves one slot and its keys to `to`, as a resharding does: IMPORTING on the target, MIGRATING
   * on the source (clients meanwhile get ASK for keys already moved), MIGRATE the keys, then the
   * slot assigned to the target everywhere (MOVED from then on).
   */
  async moveSlot(slot: number, to: ClusterNode): Promise<void> {
    const from = await this.ownerOf(slot);
    if (from.id === to.id) return;
    await cli(to.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", from.id);
    await cli(from.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", to.id);
    for (let i = 0; i < 1000; i++) {
      const keys = (await cli(from.port, "CLUSTER", "GETKEYSINSLOT", slot, 100)).split("\n")
        .filter(Boolean);
      if (keys.length === 0) break;
      await cli(from.port, "MIGRATE", "127.0.0.1", to.port, "", 0, 5000, "KEYS", ...keys);
    }
    await cli(to.port, "CLUSTER", "SETSLOT", slot, "NODE", to.id);
    await cli(from.port, "CLUSTER", "SETSLOT", slot, "NODE", to.id);
    for (const n of await this.primaries()) {
      if (n.id !== to.id && n.id !== from.id) {
        await cli(n.port, "CLUSTER", "SETSLOT", slot, "NODE", to.id);
      }
    }
  }

  /** SIGKILL of a primary; resolves once its replica has taken its slots. */
  async killPrimary(primary: ClusterNode): Promise<ClusterNode> {
    const replica = (await this.nodes()).find((n) => n.of === primary.id);
    if (!replica) throw new Error(`primary ${primary.port} has no replica`);
    await this.#procs.get(primary.port)!.kill();
    this.#procs.delete(primary.port);
    // Bounded, not timed: an election on a loaded 2-core machine can take several node
    // timeouts; a red run says what every node saw.
    await until(
      "the replica to take over",
      async () => {
        const n = (await this.nodes()).find((x) => x.id === replica.id);
        return n?.role === "master" && n.slots.length > 0 ? n : undefined;
      },
      90_000,
      100,
    ).catch(async (e) => {
      const views = await Promise.all(
        [...this.#procs.keys()].map(async (p) =>
          `${p}: ${await cli(p, "CLUSTER", "NODES").catch((x) => String(x))}`
        ),
      );
      throw new Error(`${(e as Error).message}\n${views.join("\n")}`);
    });
    await this.settled();
    return (await this.nodes()).find((x) => x.id === replica.id)!;
  }

  async close(): Promise<void> {
    for (const p of this.#procs.values()) await p.kill();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

/** A primary, a replica and three sentinels (quorum 2) watching `mymaster`. */
export class TestSentinel {
  readonly #procs: Proc[] = [];
  primary!: Proc;
  replica!: Proc;
  sentinels: number[] = [];
  private constructor(readonly dir: string) {}

  get url(): string {
    return `redis+sentinel://${this.sentinels.map((p) => `127.0.0.1:${p}`).join(",")}/mymaster`;
  }

  static async start(): Promise<TestSentinel> {
    const s = new TestSentinel(await Deno.makeTempDir({ prefix: "mur-redis-sentinel-" }));
    const pm = freePort();
    const pr = freePort();
    s.primary = new Proc(pm, spawn(REDIS_SERVER, ["--port", String(pm), ...BASE_ARGS], s.dir));
    s.replica = new Proc(
      pr,
      spawn(REDIS_SERVER, [
        "--port",
        String(pr),
        "--replicaof",
        "127.0.0.1",
        String(pm),
        ...BASE_ARGS,
      ], s.dir),
    );
    s.#procs.push(s.primary, s.replica);
    await answers(pm);
    await answers(pr);
    for (let i = 0; i < 3; i++) {
      const port = freePort();
      const conf = `${s.dir}/sentinel-${port}.conf`;
      await Deno.writeTextFile(
        conf,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          "protected-mode no",
          `dir ${s.dir}`,
          `sentinel monitor mymaster 127.0.0.1 ${pm} 2`,
          "sentinel down-after-milliseconds mymaster 1000",
          "sentinel failover-timeout mymaster 5000",
          "",
        ].join("\n"),
      );
      s.#procs.push(new Proc(port, spawn(REDIS_SENTINEL, [conf], s.dir)));
      s.sentinels.push(port);
    }
    await until(
      "the sentinels to see each other and the replica",
      async () => {
        for (const p of s.sentinels) {
          try {
            if (!/^OK/.test(await cli(p, "SENTINEL", "CKQUORUM", "mymaster"))) return undefined;
            if (
              !(await cli(p, "SENTINEL", "REPLICAS", "mymaster")).includes(String(pr))
            ) return undefined;
          } catch {
            return undefined;
          }
        }
        return true;
      },
      30_000,
      100,
    );
    return s;
  }

  /** The port the sentinels name as primary now. */
  async primaryPort(): Promise<number> {
    const out = await cli(this.sentinels[0], "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster");
    return Number(out.split("\n")[1]);
  }

  /** SIGKILL of the primary; resolves once the sentinels name the replica. */
  async killPrimary(): Promise<void> {
    await this.primary.kill();
    await until(
      "the sentinels to promote the replica",
      async () =>
        (await this.primaryPort()) === this.replica.port &&
          /role:master/.test(await cli(this.replica.port, "INFO", "replication"))
          ? true
          : undefined,
      30_000,
      100,
    );
  }

  async close(): Promise<void> {
    for (const p of this.#procs) await p.kill();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
