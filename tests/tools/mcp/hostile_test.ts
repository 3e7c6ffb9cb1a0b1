/**
 * Each way a hostile server (fixtures/hostile_server.ts) can fail ends as a told error and the
 * rest goes on: a server that hangs on initialize, exits at start, lists nothing or thousands of
 * tools (and names no provider takes); a call past its timeout (the server is sent
 * `notifications/cancelled`), a malformed line (skipped, noted in its log), a result over 10 MiB
 * (cut to the tool output limit, the whole kept in logs/), a crash mid-call (the call answers an
 * error, the server is restarted and answers again), and tools/list_changed (the new tool is
 * offered).
 */
import assert from "node:assert/strict";
import type { McpServerConfig } from "../../../src/manifest/mcp_servers.ts";
import { McpSources } from "../../../src/tools/mcp/sources.ts";
import type { SourceError } from "../../../src/tools/mcp/source.ts";
import { MAX_TOOLS } from "../../../src/tools/mcp/listing.ts";
import { TRUNCATE_BYTES } from "../../../src/tools/output.ts";
import type { Tool } from "../../../src/tools/types.ts";
import { ctxFor, tempWorkdir } from "../helpers.ts";
import { until } from "../../helpers/until.ts";
import { hostileArgv } from "./servers.ts";

function hostile(name: string, mode: string, dir: string, extra = {}): McpServerConfig {
  return {
    kind: "stdio",
    name,
    argv: hostileArgv(mode, `${dir}/${name}.record`),
    env: {},
    envAllow: [],
    cwd: dir,
    deny: [],
    timeoutMs: 30_000,
    startupTimeoutMs: 30_000,
    ...extra,
  };
}

async function started(configs: McpServerConfig[], dir: string, maxMessageBytes?: number) {
  const errors: SourceError[] = [];
  const sources = new McpSources(configs, {
    logsDir: dir,
    roots: [dir],
    hostEnv: Deno.env.toObject(),
    onError: (e) => errors.push(e),
    restartDelaysMs: [50, 50],
    ...(maxMessageBytes !== undefined && { maxMessageBytes }),
  });
  await sources.start();
  const tool = (name: string): Tool => {
    const t = sources.tools().find((x) => x.name === name);
    assert.ok(t, `${name} among ${sources.tools().map((x) => x.name).join(", ")}`);
    return t;
  };
  return { sources, errors, tool };
}

Deno.test("servers that cannot be used at launch are told, and the others are offered", async () => {
  const dir = await tempWorkdir();
  const { sources, errors } = await started([
    hostile("hang", "hang-init", dir, { startupTimeoutMs: 1_500 }),
    hostile("dies", "die-at-start", dir),
    hostile("empty", "no-tools", dir),
    hostile("many", "many-tools", dir),
    hostile("good", "ok", dir),
    hostile("missing", "ok", dir, { argv: ["/nonexistent/mcp-server"] }),
  ], dir);
  try {
    const by = (s: string) => errors.filter((e) => e.source === s).map((e) => e.message);
    assert.match(by("hang")[0], /did not initialize and list its tools within 1.5 s|timed out/i);
    assert.match(by("dies")[0], /exited with code 3 before it was ready/);
    assert.match(await Deno.readTextFile(`${dir}/mcp-dies.log`), /dying at start on purpose/);
    assert.deepEqual(by("empty"), ["it lists no tools"]);
    assert.deepEqual(by("many"), [`listed 3000 tools; only the first ${MAX_TOOLS} are offered`]);
    assert.match(
      by("missing")[0],
      /cannot start '\/nonexistent\/mcp-server'|not found|No such file/,
    );
    // The good server's name with spaces is left out and said so; its other tools are offered.
    assert.match(by("good")[0], /1 tool name\(s\) .*'bad name with spaces'/);
    const names = sources.tools().map((t) => t.name);
    assert.equal(names.filter((n) => n.startsWith("mcp__many__")).length, MAX_TOOLS);
    assert.ok(names.includes("mcp__good__echo"));
    assert.ok(!names.some((n) => n.startsWith("mcp__hang__") || n.startsWith("mcp__dies__")));
    // The tasks' sourceErrors: every source that is not up, with its error.
    const standing = sources.errorsSince(sources.errorMark()).map((e) => e.source).sort();
    assert.deepEqual(standing, ["dies", "hang", "missing"]);
  } finally {
    await sources.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a hostile server's calls: timeout cancels, garbage skipped, 10 MiB cut, crash restarts, list_changed", async () => {
  const dir = await tempWorkdir();
  // `t` is the same server with a short call limit, for the call that never answers: the
  // others keep the default, so a loaded machine cannot turn them into timeouts.
  const { sources, errors, tool } = await started(
    [hostile("h", "ok", dir), hostile("t", "ok", dir, { timeoutMs: 1_000 })],
    dir,
  );
  try {
    // Past its timeout: an error result, and the server was sent notifications/cancelled.
    const slow = await tool("mcp__t__slow").call({}, ctxFor(dir));
    assert.equal(slow.isError, true);
    assert.match(slow.content, /timed out after 1 s/);
    const record = await until("the cancel to reach the server", async () => {
      const r = await Deno.readTextFile(`${dir}/t.record`);
      return r.includes('"notifications/cancelled"') ? r : undefined;
    });
    const cancel = record.split("\n").filter(Boolean).map((l) => JSON.parse(l))
      .find((m) => m.method === "notifications/cancelled");
    assert.equal(typeof cancel.params.requestId, "number");

    // A line that is not JSON-RPC is skipped (and noted in the log); the answer after it arrives.
    const g = await tool("mcp__h__garbage").call({}, ctxFor(dir));
    assert.ok(g.content.includes("after garbage"), g.content);
    assert.match(
      await Deno.readTextFile(`${dir}/mcp-h.log`),
      /not a JSON-RPC message: \{this is not json/,
    );

    // Over 10 MiB (the SDK's own limit): received whole, cut for the model, kept in logs/.
    const big = await tool("mcp__h__big").call({}, ctxFor(dir));
    assert.equal(big.isError, false);
    assert.equal(big.truncated, true);
    const kept = /full output in (logs\/mcp-h-[^\]\s]+\.log)/.exec(big.content);
    assert.ok(kept, big.content.slice(-300));
    assert.equal((await Deno.stat(`${dir}/${kept[1]}`)).size, (5 * 1024 * 1024 + 10) * 2);
    assert.ok(new TextEncoder().encode(big.content).length < TRUNCATE_BYTES + 1024);
    assert.ok(!big.content.includes("\uFFFD"), "cut on a character boundary");

    // list_changed: the new tool is offered once the server says its list changed.
    assert.ok(!sources.tools().some((t) => t.name === "mcp__h__grown"));
    await tool("mcp__h__grow").call({}, ctxFor(dir));
    const grown = await until(
      "the grown tool",
      () => sources.tools().find((t) => t.name === "mcp__h__grown"),
    );
    assert.ok((await grown.call({ text: "new" }, ctxFor(dir))).content.includes("echo: new"));

    // A crash mid-call: the call is an error, the death told, the server restarted.
    const crash = await tool("mcp__h__crash").call({}, ctxFor(dir));
    assert.equal(crash.isError, true);
    assert.match(crash.content, /closed its connection during the call/);
    assert.ok(
      errors.some((e) =>
        /connection closed \(exited with code 7\); restart 1 of 2/.test(e.message)
      ),
    );
    const echoed = await until("the restarted server to answer", async () => {
      const r = await sources.tools().find((t) => t.name === "mcp__h__echo")?.call(
        { text: "back" },
        ctxFor(dir),
      );
      return r && !r.isError ? r : undefined;
    });
    assert.ok(echoed.content.includes("echo: back"));
    // Crashing past the restarts: marked down, its tools withdrawn.
    await tool("mcp__h__crash").call({}, ctxFor(dir));
    await until("the second restart", () => sources.sources[0].state === "up" ? true : undefined);
    await tool("mcp__h__crash").call({}, ctxFor(dir));
    await until("down", () => sources.sources[0].state === "down" ? true : undefined);
    assert.deepEqual(sources.tools().filter((t) => t.name.startsWith("mcp__h__")), []);
    assert.ok(errors.some((e) => /marked down after 2 restarts/.test(e.message)));
  } finally {
    await sources.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a message over the stdio limit ends the connection: the call is an error, the server restarts", async () => {
  const dir = await tempWorkdir();
  // A 1 MiB limit in place of the 64 MiB one, against the server's 10 MiB answer.
  const { sources, errors, tool } = await started([hostile("h", "ok", dir)], dir, 1024 * 1024);
  try {
    const big = await tool("mcp__h__big").call({}, ctxFor(dir));
    assert.equal(big.isError, true);
    assert.match(big.content, /closed its connection during the call/);
    assert.match(
      await Deno.readTextFile(`${dir}/mcp-h.log`),
      /sent a message over 1048576 bytes .*the connection was closed/,
    );
    assert.ok(errors.some((e) => /restart 1 of 2/.test(e.message)));
    const echoed = await until("the restarted server to answer", async () => {
      const r = await sources.tools().find((t) => t.name === "mcp__h__echo")?.call(
        { text: "small" },
        ctxFor(dir),
      );
      return r && !r.isError ? r : undefined;
    });
    assert.ok(echoed.content.includes("echo: small"));
  } finally {
    await sources.close();
    await Deno.remove(dir, { recursive: true });
  }
});
