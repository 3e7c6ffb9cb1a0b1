/**
 * `mcp_servers:` at load (docs/mcp.md): the `.mcp.json` shape normalized (defaults, a program
 * path and `cwd` against the manifest's folder, `${NAME}` in a header value), and every wrong
 * entry an `E-MAN-003` naming its key path.
 */
import assert from "node:assert/strict";
import { BASE, load, loadError } from "./helpers.ts";

Deno.test("mcp_servers: stdio and http entries normalized", async () => {
  const { manifest } = await load(
    `${BASE}mcp_servers:
  everything:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-everything", "stdio"]
    env: { LOG: debug }
    env_allow: [GITHUB_TOKEN]
    deny: [get-env]
  local:
    command: ./srv.sh
    cwd: sub
    allow: [a]
    timeout_secs: 5
  remote:
    url: http://127.0.0.1:3001/mcp
    headers: { Authorization: "Bearer \${TOKEN}" }
`,
    { TOKEN: "s3cret" },
    { "srv.sh": "#!/bin/sh\n" },
  );
  const [e, l, r] = manifest.mcpServers!;
  assert.deepEqual(e, {
    name: "everything",
    kind: "stdio",
    argv: ["npx", "-y", "@modelcontextprotocol/server-everything", "stdio"],
    env: { LOG: "debug" },
    envAllow: ["GITHUB_TOKEN"],
    cwd: manifest.dir,
    deny: ["get-env"],
    timeoutMs: 60_000,
    startupTimeoutMs: 30_000,
  });
  assert.equal(l.kind === "stdio" && l.argv[0], `${manifest.dir}/srv.sh`);
  assert.equal(l.kind === "stdio" && l.cwd, `${manifest.dir}/sub`);
  assert.deepEqual(l.allow, ["a"]);
  assert.equal(l.timeoutMs, 5_000);
  assert.deepEqual(r, {
    name: "remote",
    kind: "http",
    url: "http://127.0.0.1:3001/mcp",
    headers: { Authorization: "Bearer s3cret" },
    deny: [],
    timeoutMs: 60_000,
    startupTimeoutMs: 30_000,
  });
});

Deno.test("mcp_servers: each wrong entry names its key path", async (t) => {
  const cases: [string, string][] = [
    ["mcp_servers: [a]\n", "mcp_servers: must be a mapping from a server's name to its settings"],
    ["mcp_servers:\n  x: {}\n", "mcp_servers.x.command: a stdio server needs its command"],
    [
      "mcp_servers:\n  x: { type: http }\n",
      "mcp_servers.x.url: an http server needs its url",
    ],
    [
      "mcp_servers:\n  x: { url: 'ftp://h/x' }\n",
      "mcp_servers.x.url: 'ftp://h/x' is not an http(s) url",
    ],
    [
      "mcp_servers:\n  x: { url: 'http://127.0.0.1:1/mcp', command: a }\n",
      "mcp_servers.x.command: is for a stdio server; this one has a url",
    ],
    [
      "mcp_servers:\n  x: { command: a, headers: { A: b } }\n",
      "mcp_servers.x.headers: is for an http server; this one is stdio",
    ],
    [
      "mcp_servers:\n  a__b: { command: a }\n",
      "mcp_servers.a__b: a server's name is letters, digits, '-' and single '_' (at most 40), so mcp__<server>__<tool> names it",
    ],
    [
      "mcp_servers:\n  murmur: { command: a }\n",
      "mcp_servers.murmur: 'murmur' is the name of mur's own tool server on the process transport",
    ],
    [
      "mcp_servers:\n  x: { command: a, env_allow: ['1A'] }\n",
      "mcp_servers.x.env_allow[0]: '1A' is not a variable name",
    ],
    [
      "mcp_servers:\n  x: { command: a, timeout_secs: 0 }\n",
      "mcp_servers.x.timeout_secs: must be a number of seconds > 0 and <= 86400",
    ],
  ];
  for (const [yaml, message] of cases) {
    await t.step(message, async () => {
      await loadError(`${BASE}${yaml}`, "E-MAN-003", message);
    });
  }
});

Deno.test("openapi_services: entries normalized, wrong ones named", async (t) => {
  const { manifest } = await load(
    `${BASE}openapi_services:
  pets:
    spec: docs/pets.yaml
    base_url: http://127.0.0.1:8080/api/
    operations: [getPet]
    headers: { Authorization: "Bearer \${TOKEN}" }
    timeout_secs: 5
  remote:
    spec: https://example.test/openapi.json
`,
    { TOKEN: "s3cret" },
  );
  assert.deepEqual(manifest.openApiServices, [
    {
      name: "pets",
      spec: `${manifest.dir}/docs/pets.yaml`,
      baseUrl: "http://127.0.0.1:8080/api",
      operations: ["getPet"],
      headers: { Authorization: "Bearer s3cret" },
      timeoutMs: 5_000,
    },
    { name: "remote", spec: "https://example.test/openapi.json", headers: {}, timeoutMs: 30_000 },
  ]);
  const cases: [string, string][] = [
    ["openapi_services:\n  x: {}\n", "missing required key 'openapi_services.x.spec'"],
    [
      "openapi_services:\n  x: { spec: 'ftp://h/a.json' }\n",
      "openapi_services.x.spec: 'ftp://h/a.json' is neither a path nor an http(s) url",
    ],
    [
      "openapi_services:\n  x: { spec: a.json, base_url: '/api' }\n",
      "openapi_services.x.base_url: '/api' is not an http(s) url",
    ],
  ];
  for (const [yaml, message] of cases) {
    await t.step(message, async () => {
      await loadError(
        `${BASE}${yaml}`,
        message.startsWith("missing") ? "E-MAN-001" : "E-MAN-003",
        message,
      );
    });
  }
});
