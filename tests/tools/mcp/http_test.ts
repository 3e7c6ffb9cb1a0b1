/**
 * server-everything's streamable HTTP mode (`streamableHttp`, path `/mcp`), kept on loopback by
 * a preload (fixtures/loopback.mjs: its own listen takes every interface), as a `url:` source:
 * tools listed, a call answered, progress over the HTTP stream, the configured header sent and
 * never written to the server's log or an error; the server restarted on its port (a session of
 * ours it does not know) is connected to again. A url nothing listens on is told, not fatal.
 */
import assert from "node:assert/strict";
import { McpSources } from "../../../src/tools/mcp/sources.ts";
import type { SourceError } from "../../../src/tools/mcp/source.ts";
import type { ToolProgress } from "../../../src/tools/types.ts";
import { ctxFor, tempWorkdir } from "../helpers.ts";
import { until } from "../../helpers/until.ts";
import { ensureMcpServers } from "./servers.ts";

const LOOPBACK = new URL("./fixtures/loopback.mjs", import.meta.url).href;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Addresses listening on `port` (from /proc/net/tcp and tcp6), as hex. */
async function listeners(port: number): Promise<string[]> {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const out: string[] = [];
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const rows = (await Deno.readTextFile(f)).trim().split("\n").slice(1);
    for (const r of rows) {
      const [, local, , st] = r.trim().split(/\s+/);
      if (st === "0A" && local.endsWith(`:${hex}`)) out.push(local.split(":")[0]);
    }
  }
  return out;
}

Deno.test("server-everything over streamable HTTP on loopback: list, call, progress", async () => {
  const { everything } = await ensureMcpServers();
  const workdir = await tempWorkdir();
  const port = freePort();
  let server = httpServer(everything, port);
  const errors: SourceError[] = [];
  const sources = new McpSources([
    {
      kind: "http",
      name: "web",
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { "X-Mur-Test-Secret": "header-value-never-logged" },
      deny: [],
      timeoutMs: 30_000,
      startupTimeoutMs: 30_000,
    },
    {
      kind: "http",
      name: "nobody",
      url: `http://127.0.0.1:${freePort()}/mcp`,
      headers: { Authorization: "Bearer header-value-never-logged" },
      deny: [],
      timeoutMs: 5_000,
      startupTimeoutMs: 5_000,
    },
  ], {
    logsDir: workdir,
    roots: [workdir],
    hostEnv: {},
    onError: (e) => errors.push(e),
  });
  try {
    await until("the HTTP server to listen", () => server.listening() || undefined, 60_000);
    // Only on loopback: 127.0.0.1 (0100007F), nothing on 0.0.0.0 or ::.
    assert.deepEqual(await listeners(port), ["0100007F"]);
    await sources.start();
    assert.deepEqual(errors.map((e) => e.source), ["nobody"]);
    assert.ok(!JSON.stringify(errors).includes("header-value-never-logged"));
    const tools = sources.tools();
    const echo = tools.find((t) => t.name === "mcp__web__echo")!;
    assert.ok(echo, tools.map((t) => t.name).join(", "));
    const r = await echo.call({ message: "über HTTP ✓" }, ctxFor(workdir));
    assert.ok(r.content.includes("Echo: über HTTP ✓"), r.content);
    const seen: ToolProgress[] = [];
    const long = tools.find((t) => t.name === "mcp__web__trigger-long-running-operation")!;
    const done = await long.call({ duration: 0.6, steps: 3 }, {
      ...ctxFor(workdir),
      progress: (p) => seen.push(p),
    });
    assert.equal(done.isError, false, done.content);
    assert.ok(seen.length >= 1);
    assert.equal(seen[0].total, 3);

    // The server goes away and comes back on the same port (a new process, no session of
    // ours): the call in between is an error, and mur connects again by itself.
    await server.stop();
    const gone = await echo.call({ message: "anyone?" }, ctxFor(workdir));
    assert.equal(gone.isError, true);
    server = httpServer(everything, port);
    await until("the new server to listen", () => server.listening() || undefined, 60_000);
    const back = await until("mur to connect again", async () => {
      const t = sources.tools().find((x) => x.name === "mcp__web__echo");
      const r = await t?.call({ message: "back" }, ctxFor(workdir));
      return r && !r.isError ? r : undefined;
    }, 60_000);
    assert.ok(back.content.includes("Echo: back"));
    assert.ok(errors.some((e) => e.source === "web" && /restart 1 of 3/.test(e.message)));
  } finally {
    await sources.close();
    await server.stop();
    assert.ok(!server.log().includes("header-value-never-logged"));
    await Deno.remove(workdir, { recursive: true });
  }
});

/** server-everything's HTTP mode on `port`, kept on loopback; its output kept for the checks. */
function httpServer(everything: string, port: number) {
  const child = new Deno.Command("node", {
    args: ["--import", LOOPBACK, everything, "streamableHttp"],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const read = (r: ReadableStream<Uint8Array>) =>
    (async () => {
      for await (const c of r.pipeThrough(new TextDecoderStream())) log += c;
    })();
  const pumps = Promise.all([read(child.stdout), read(child.stderr)]);
  return {
    listening: () => log.includes("listening"),
    log: () => log,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Gone already.
      }
      await child.status;
      await pumps;
    },
  };
}
