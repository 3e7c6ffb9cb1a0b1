/**
 * How the Redis client (src/cluster/client.ts) finds it was given a Redis Cluster node: it asks
 * the node `CLUSTER INFO`. Only an error reply means one server; a question that got no answer
 * (the connection broke under it) is asked again. Taken for one server, a cluster node refuses
 * every command on the other nodes' slots with MOVED for as long as the process runs: a capsule's
 * session never reaches its edges, an edge never reads them.
 *
 * A one-node Redis Cluster (every slot on it) behind a loopback proxy, whose address it announces,
 * that cuts the first connection that asks `CLUSTER INFO`.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { openRedis } from "../../src/cluster/client.ts";
import { parseRedisUrl, type RedisTarget } from "../../src/manifest/redis_url.ts";
import { REDIS_SERVER } from "../helpers/redis.ts";
import { cli } from "../helpers/redis_topologies.ts";
import { until } from "../helpers/until.ts";
import { TcpProxy } from "../helpers/tcp_proxy.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const ASKS_CLUSTER_INFO = /CLUSTER\r\n\$4\r\nINFO\r\n/i;

Deno.test("client: a cluster node whose CLUSTER INFO went unanswered is asked again, not taken for one server", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-redis-one-node-" });
  const port = freePort();
  const proxy = TcpProxy.start(port, { cutOn: ASKS_CLUSTER_INFO });
  // The node names the proxy as its address, so the cluster client's connections go through it.
  const server = new Deno.Command(REDIS_SERVER, {
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      `${dir}/nodes.conf`,
      "--cluster-announce-ip",
      "127.0.0.1",
      "--cluster-announce-port",
      String(proxy.port),
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    cwd: dir,
    stdout: "null",
    stderr: "null",
    stdin: "null",
  }).spawn();
  let client: ReturnType<typeof openRedis> | undefined;
  try {
    await until("redis to answer PING", async () => {
      try {
        return (await cli(port, "PING")) === "PONG" ? true : undefined;
      } catch {
        return undefined;
      }
    }, 15_000);
    await cli(port, "CLUSTER", "ADDSLOTSRANGE", 0, 16383);
    await until(
      "the one-node cluster to be ok",
      async () => /cluster_state:ok/.test(await cli(port, "CLUSTER", "INFO")) ? true : undefined,
      15_000,
    );
    client = openRedis(parseRedisUrl(`redis://127.0.0.1:${proxy.port}`) as RedisTarget);
    await client.ready(15_000);
    assertEquals(proxy.cuts, 1);
    assertEquals(client.topology, "cluster");
    assertEquals(await client.call(["SET", "mur:{probe}:x", "1"]), "OK");
  } finally {
    client?.close();
    await proxy.close();
    try {
      server.kill("SIGKILL");
    } catch { /* gone */ }
    await server.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
