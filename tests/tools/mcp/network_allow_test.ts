/**
 * An MCP server over streamable HTTP is reached only when `capabilities.network.allow` permits
 * (docs/mcp.md "At launch"): a url the list does not name is told as a source error and never
 * connected to (a real listener on loopback counts the connections it gets), while a url it names
 * is tried. `urlAllowed` itself against a table of the cases.
 */
import assert from "node:assert/strict";
import { McpSources } from "../../../src/tools/mcp/sources.ts";
import type { SourceError } from "../../../src/tools/mcp/source.ts";
import { urlAllowed } from "../../../src/containment/url_allowed.ts";
import { allowEntry } from "../../../src/manifest/containment_keys.ts";
import { tempWorkdir } from "../helpers.ts";

Deno.test("urlAllowed: hosts as written, ports or any, the scheme's port by default", () => {
  const allow = ["127.0.0.1:7001", "api.example.test", "https://Docs.example.test", "[::1]:7002"]
    .map(allowEntry);
  const cases: [string, boolean][] = [
    ["http://127.0.0.1:7001/mcp", true],
    ["http://127.0.0.1:7003/mcp", false],
    ["http://localhost:7001/mcp", false], // not resolved: written as the list writes it
    ["http://api.example.test:9999/x", true], // a host without a port: any port
    ["https://docs.example.test/mcp", true], // https:// entry: port 443
    ["http://docs.example.test/mcp", false], // port 80
    ["http://[::1]:7002/mcp", true],
    ["not a url", false],
  ];
  for (const [url, want] of cases) assert.equal(urlAllowed(url, allow), want, url);
  assert.equal(urlAllowed("http://anything.test:1/", null), true, "not declared: any url");
});

Deno.test("an HTTP MCP server outside network.allow is told and never connected to", async () => {
  const workdir = await tempWorkdir();
  const hits = { refused: 0, allowed: 0 };
  const serve = (name: keyof typeof hits) =>
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
      hits[name]++;
      return new Response("not an MCP server", { status: 404 });
    });
  const refused = serve("refused");
  const allowed = serve("allowed");
  const errors: SourceError[] = [];
  const server = (name: string, port: number) => ({
    kind: "http" as const,
    name,
    url: `http://127.0.0.1:${port}/mcp`,
    headers: {},
    deny: [],
    timeoutMs: 5_000,
    startupTimeoutMs: 5_000,
  });
  const sources = new McpSources([
    server("outside", refused.addr.port),
    server("inside", allowed.addr.port),
  ], {
    logsDir: workdir,
    roots: [workdir],
    hostEnv: {},
    networkAllow: [allowEntry(`127.0.0.1:${allowed.addr.port}`)],
    onError: (e) => errors.push(e),
  });
  try {
    await sources.start();
    const outside = errors.filter((e) => e.source === "outside");
    assert.deepEqual(outside.map((e) => e.message), [
      `127.0.0.1:${refused.addr.port} is not in capabilities.network.allow; not connected`,
    ]);
    assert.equal(hits.refused, 0, "the refused url was connected to");
    // The allowed one was tried (and failed: a 404 is no MCP server), so the gate let it through.
    assert.ok(hits.allowed >= 1, "the allowed url was never tried");
    assert.ok(errors.some((e) => e.source === "inside"));
    assert.deepEqual(sources.tools(), []);
  } finally {
    await sources.close();
    await refused.shutdown();
    await allowed.shutdown();
    await Deno.remove(workdir, { recursive: true });
  }
});
