/**
 * `mur edge`'s refusals (docs/edge.md): no Redis named, a URL it cannot use, a
 * shared key too short to be a key (E-EDGE-001, exit 1), a bad flag value (E-CLI-003, exit 2), a
 * port in use or an address not this machine's (E-EDGE-002, exit 1, no stack); nothing listens.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { startEdgeProc } from "../helpers/edge.ts";
import { runMur } from "../helpers/mur.ts";
import { until } from "../helpers/until.ts";

function edge(args: string[], env: Record<string, string> = {}) {
  return runMur({
    args: ["edge", ...args],
    env: { NO_COLOR: "1", MURMUR_REDIS_URL: "", MURMUR_CLUSTER_KEY: "", ...env },
  });
}

Deno.test("mur edge: refusals are coded and nothing listens", async () => {
  const none = await edge([]);
  assertEquals(none.code, 1);
  assert(none.stderr.startsWith("error[E-EDGE-001]: mur edge: no Redis"), none.stderr);
  const bad = await edge(["--redis", "http://localhost:6379"]);
  assertEquals(bad.code, 1);
  assert(bad.stderr.includes("error[E-EDGE-001]") && bad.stderr.includes("not redis:"), bad.stderr);
  const short = await edge(["--redis", "redis://127.0.0.1:1"], { MURMUR_CLUSTER_KEY: "short" });
  assertEquals(short.code, 1);
  assert(short.stderr.includes("MURMUR_CLUSTER_KEY is shorter than 32 bytes"), short.stderr);
  const port = await edge(["--redis", "redis://127.0.0.1:1", "--port", "http"]);
  assertEquals(port.code, 2);
  assert(port.stderr.startsWith("error[E-CLI-003]: mur edge: --port 'http'"), port.stderr);
  for (const r of [none, bad, short, port]) assertEquals(r.stdout, "");
});

Deno.test("mur edge on a port in use, or a --bind not of this machine, is E-EDGE-002 with no stack, and ends", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const r = await edge(["--redis", "redis://127.0.0.1:1", "--port", String(port)]);
    assertEquals(r.code, 1, r.stderr);
    assertEquals(r.stdout, "");
    assertEquals(
      r.stderr,
      `error[E-EDGE-002]: mur edge could not listen on 127.0.0.1:${port}: the port is already in use\n  hint: choose another --port, or 0 for an OS-assigned port\n`,
    );
  } finally {
    taken.close();
  }
  // 192.0.2.1 (TEST-NET-1) is never this machine's: binding it fails, no traffic is sent.
  const r = await edge(["--redis", "redis://127.0.0.1:1", "--bind", "192.0.2.1", "--port", "0"]);
  assertEquals(r.code, 1, r.stderr);
  assert(
    r.stderr.startsWith("error[E-EDGE-002]: mur edge could not listen on 192.0.2.1:0: "),
    r.stderr,
  );
  assert(r.stderr.includes("hint: check --bind"), r.stderr);
  assert(!r.stderr.includes("Uncaught"), r.stderr);
});

Deno.test("mur edge: started against a Redis that is down, it says so on stderr and serves on (/healthz 503)", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const edge = await startEdgeProc(`redis://127.0.0.1:${port}`);
  try {
    await until(
      "the edge to say Redis is down",
      () =>
        /^warning\[W-EDGE-001\]: cannot reach redis:\/\/127\.0\.0\.1:\d+: .*serving anyway/m.test(
          edge.stderrSoFar(),
        ) || undefined,
    );
    const health = await fetch(`${edge.url}/healthz`);
    assertEquals(health.status, 503);
    assertEquals((await health.json()).ok, false);
  } finally {
    await edge.kill();
  }
});
