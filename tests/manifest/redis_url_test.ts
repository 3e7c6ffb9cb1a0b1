/**
 * The Redis URL forms (src/manifest/redis_url.ts, docs/edge.md "Redis URLs"): each accepted form
 * read into its target, each refusal said; and, as a property against a simple reference, any
 * user, password (every byte of it, percent-encoded), host, port, database and sentinel list
 * written into a URL reads back as given, with the password never in `shown`.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import fc from "fast-check";
import { parseRedisUrl, type RedisTarget } from "../../src/manifest/redis_url.ts";
import { checkProperty } from "../helpers/property.ts";

Deno.test("redis URLs: each accepted form, with the password from the URL or the environment", () => {
  assertEquals(parseRedisUrl("redis://127.0.0.1:6379"), {
    kind: "server",
    nodes: [{ host: "127.0.0.1", port: 6379 }],
    tls: false,
    shown: "redis://127.0.0.1:6379",
  });
  assertEquals(parseRedisUrl("rediss://mur:s%40cret@cache.example.com/2"), {
    kind: "server",
    nodes: [{ host: "cache.example.com", port: 6379 }],
    tls: true,
    username: "mur",
    password: "s@cret",
    db: 2,
    shown: "rediss://mur@cache.example.com/2",
  });
  assertEquals(parseRedisUrl("redis://[::1]:7000", "from-env"), {
    kind: "server",
    nodes: [{ host: "::1", port: 7000 }],
    tls: false,
    password: "from-env",
    shown: "redis://[::1]:7000",
  });
  assertEquals(parseRedisUrl("redis+sentinel://s0:26380,s1/mymaster/1"), {
    kind: "sentinel",
    nodes: [{ host: "s0", port: 26380 }, { host: "s1", port: 26379 }],
    tls: false,
    masterName: "mymaster",
    db: 1,
    shown: "redis+sentinel://s0:26380,s1/mymaster/1",
  });
});

Deno.test("redis URLs: refusals say what is wrong", () => {
  const refused: [string, RegExp][] = [
    ["localhost:6379", /is not a URL; give redis:\/\/host:port/],
    ["http://localhost:6379", /'http:' is not redis:, rediss: or redis\+sentinel:/],
    ["rediss+sentinel://s0/m", /'rediss\+sentinel:' is not/],
    ["redis://", /names no host/],
    ["redis://a:1,b:2", /names one host .*several hosts are for redis\+sentinel/],
    ["redis+sentinel://s0:26379", /names the master/],
    ["redis://h/db", /'\/db' is not a database number/],
    ["redis://h/1/2", /is not a database number/],
    ["redis://h?tls=1", /no query or fragment/],
    ["redis://h:99999", /is not a host\[:port\]/],
    ["redis://%zz@h", /not valid percent-encoding/],
  ];
  for (const [url, why] of refused) {
    const r = parseRedisUrl(url);
    assert(typeof r === "string", `${url} was accepted`);
    assert(why.test(r), `${url}: ${r}`);
  }
});

const hostArb = fc.oneof(
  fc.constantFrom("127.0.0.1", "localhost", "redis-0.redis.svc", "10.1.2.3"),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
);
const portArb = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });
const userArb = fc.option(fc.stringMatching(/^[a-z][a-z0-9_-]{0,10}$/), { nil: undefined });
const passwordArb = fc.option(fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" }), {
  nil: undefined,
});

Deno.test("redis URLs (property): what is written into a URL reads back, the password never shown", () => {
  checkProperty(
    { name: "redis URL round trip", numRuns: 500 },
    fc.property(
      fc.boolean(),
      fc.array(fc.tuple(hostArb, portArb), { minLength: 1, maxLength: 3 }),
      userArb,
      passwordArb,
      fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
      fc.boolean(),
      (sentinel, nodes, user, password, db, tls) => {
        if (!sentinel) nodes = nodes.slice(0, 1);
        const scheme = sentinel ? "redis+sentinel" : tls ? "rediss" : "redis";
        const auth = user || password
          ? `${user ?? ""}${password ? `:${encodeURIComponent(password)}` : ""}@`
          : "";
        const hosts = nodes.map(([h, p]) => (p ? `${h}:${p}` : h)).join(",");
        const path = `${sentinel ? "/mymaster" : ""}${db !== undefined ? `/${db}` : ""}`;
        const url = `${scheme}://${auth}${hosts}${path}`;
        const got = parseRedisUrl(url) as RedisTarget;
        assert(typeof got !== "string", `${url}: ${got}`);
        const want = {
          kind: sentinel ? "sentinel" : "server",
          nodes: nodes.map(([host, p]) => ({ host, port: p ?? (sentinel ? 26379 : 6379) })),
          tls: !sentinel && tls,
          masterName: sentinel ? "mymaster" : undefined,
          username: user,
          password,
          db,
        };
        assertEquals(
          {
            kind: got.kind,
            nodes: got.nodes,
            tls: got.tls,
            masterName: got.masterName,
            username: got.username,
            password: got.password,
            db: got.db,
          },
          want,
        );
        // `shown` is the URL without its password.
        assertEquals(got.shown, `${scheme}://${user ? `${user}@` : ""}${hosts}${path}`);
      },
    ),
  );
});
