/**
 * McpSources against the real reference servers from npm (tests/tools/mcp/servers.ts):
 * server-everything over stdio (its tools listed with their JSON schemas under mcp__<server>__…,
 * text with multi-byte characters, an image kept as an attachment, structured content, progress
 * reported when the call carries a progress token, a long call cancelled by its timeout and by
 * the task's cancel, roots offered) and over streamable HTTP on loopback, and server-filesystem
 * answering within the roots mur offers instead of the folder on its command line.
 */
import assert from "node:assert/strict";
import type { McpServerConfig } from "../../../src/manifest/mcp_servers.ts";
import { McpSources } from "../../../src/tools/mcp/sources.ts";
import type { SourceError } from "../../../src/tools/mcp/source.ts";
import type { Tool, ToolProgress } from "../../../src/tools/types.ts";
import { ctxFor, tempWorkdir } from "../helpers.ts";
import { ensureMcpServers } from "./servers.ts";
import { ToolBox } from "../../../src/tools/toolbox.ts";
import { until } from "../../helpers/until.ts";

const common = { deny: [], timeoutMs: 30_000, startupTimeoutMs: 60_000 };

function stdio(name: string, argv: string[], cwd: string, extra = {}): McpServerConfig {
  return { ...common, kind: "stdio", name, argv, env: {}, envAllow: [], cwd, ...extra };
}

async function started(configs: McpServerConfig[], workdir: string) {
  const errors: SourceError[] = [];
  const sources = new McpSources(configs, {
    logsDir: workdir,
    roots: [workdir],
    hostEnv: Deno.env.toObject(),
    onError: (e) => errors.push(e),
  });
  await sources.start();
  const tool = (name: string): Tool => {
    const t = sources.tools().find((x) => x.name === name);
    assert.ok(t, `${name} among ${sources.tools().map((x) => x.name).join(", ")}`);
    return t;
  };
  return { sources, errors, tool };
}

Deno.test("server-everything over stdio: tools, content kinds, progress, timeout and cancel", async () => {
  const { everything } = await ensureMcpServers();
  const workdir = await tempWorkdir();
  // `short` is the same server with a 3 s call limit, for the calls meant to time out; the
  // others keep 30 s, so a loaded machine cannot turn them into timeouts.
  const { sources, errors, tool } = await started([
    stdio("everything", ["node", everything, "stdio"], workdir),
    stdio("short", ["node", everything, "stdio"], workdir, { timeoutMs: 3_000 }),
  ], workdir);
  try {
    assert.deepEqual(errors, []);
    const echo = tool("mcp__everything__echo");
    assert.equal((echo.inputSchema as { type: string }).type, "object");
    assert.ok("message" in (echo.inputSchema as { properties: object }).properties);

    // Multi-byte text comes back whole, fenced under the tool's full name.
    const text = "héllo → 世界 🎉";
    const r = await echo.call({ message: text }, ctxFor(workdir));
    assert.equal(r.isError, false);
    assert.equal(r.fenceSource, "tool:mcp__everything__echo");
    assert.match(r.content, /^<untrusted-content source=tool:mcp__everything__echo>\n/);
    assert.ok(r.content.includes(`Echo: ${text}`));
    assert.equal(r.mcpServer, "everything");

    // An image block is an attachment (a real PNG), its text beside it.
    const img = await tool("mcp__everything__get-tiny-image").call({}, ctxFor(workdir));
    assert.equal(img.images.length, 1);
    assert.equal(img.images[0].mediaType, "image/png");
    assert.deepEqual([...img.images[0].data.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);

    // Structured content reaches the model as JSON.
    const sc = await tool("mcp__everything__get-structured-content").call(
      { location: "Chicago" },
      ctxFor(workdir),
    );
    const json = sc.content.split("\n").find((l) => l.startsWith("{"));
    assert.ok(json, sc.content);
    assert.equal(typeof JSON.parse(json).temperature, "number");

    // An embedded resource keeps its uri and text.
    const res = await tool("mcp__everything__get-resource-reference").call(
      { resourceType: "Text", resourceId: 1 },
      ctxFor(workdir),
    );
    assert.match(res.content, /\[resource demo:\/\/resource\/static\/document\/|\[resource /);

    // Progress arrives because the call carries a progress token.
    const seen: ToolProgress[] = [];
    const ctx = { ...ctxFor(workdir), progress: (p: ToolProgress) => seen.push(p) };
    const long = await tool("mcp__everything__trigger-long-running-operation").call(
      { duration: 0.6, steps: 3 },
      ctx,
    );
    assert.equal(long.isError, false, long.content);
    assert.ok(seen.length >= 1, "progress reports");
    assert.deepEqual(seen[0], { progress: 1, total: 3 });

    // Past timeout_secs (3 s): cancelled, an error result that says so, unfenced.
    const late = await tool("mcp__short__trigger-long-running-operation").call(
      { duration: 60, steps: 2 },
      ctxFor(workdir),
    );
    assert.equal(late.isError, true);
    assert.equal(late.fenceSource, null);
    assert.match(late.content, /timed out after 3 s .*cancelled/);

    // The task's cancel stops the call at once.
    const ac = new AbortController();
    const pending = tool("mcp__everything__trigger-long-running-operation").call(
      { duration: 60, steps: 2 },
      ctxFor(workdir, ac.signal),
    );
    ac.abort();
    const canceled = await pending;
    assert.equal(canceled.isError, true);
    assert.match(canceled.content, /stopped because the task was canceled/);

    // The server is still there after both: another call answers.
    const again = await echo.call({ message: "still here" }, ctxFor(workdir));
    assert.ok(again.content.includes("Echo: still here"));

    // mur offered the workdir as its root.
    const roots = await tool("mcp__everything__get-roots-list").call({}, ctxFor(workdir));
    assert.ok(roots.content.includes(`file://${workdir}`), roots.content);
  } finally {
    await sources.close();
    await Deno.remove(workdir, { recursive: true });
  }
});

Deno.test("server-filesystem serves the roots mur offers, not the folder on its command line", async () => {
  const { filesystem } = await ensureMcpServers();
  const workdir = await tempWorkdir();
  const other = await tempWorkdir();
  await Deno.writeTextFile(`${workdir}/notes.txt`, "inside the workdir: ü\n");
  await Deno.writeTextFile(`${other}/secret.txt`, "outside\n");
  const { sources, errors, tool } = await started(
    [stdio("fs", ["node", filesystem, other], workdir, {
      allow: ["read_text_file", "list_allowed_directories"],
    })],
    workdir,
  );
  try {
    assert.deepEqual(errors, []);
    // allow: only the two listed tools are offered.
    assert.deepEqual(sources.tools().map((t) => t.name).sort(), [
      "mcp__fs__list_allowed_directories",
      "mcp__fs__read_text_file",
    ]);
    const read = tool("mcp__fs__read_text_file");
    // The roots replace its folders once it has asked for them.
    const dirs = await until("the server to take mur's roots", async () => {
      const r = await tool("mcp__fs__list_allowed_directories").call({}, ctxFor(workdir));
      return r.content.includes(workdir) ? r.content : undefined;
    });
    assert.ok(!dirs.includes(other), dirs);
    const ok = await read.call({ path: `${workdir}/notes.txt` }, ctxFor(workdir));
    assert.equal(ok.isError, false, ok.content);
    assert.ok(ok.content.includes("inside the workdir: ü"));
    // Outside the roots: the server's refusal is data (isError), fenced.
    const no = await read.call({ path: `${other}/secret.txt` }, ctxFor(workdir));
    assert.equal(no.isError, true);
    assert.equal(no.fenceSource, "tool:mcp__fs__read_text_file");
    assert.ok(!no.content.includes("outside\n"));
  } finally {
    await sources.close();
    await Deno.remove(workdir, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("capabilities.filesystem.read_only refuses an MCP tool's write before it reaches the server", async () => {
  const { filesystem } = await ensureMcpServers();
  const workdir = await tempWorkdir();
  await Deno.mkdir(`${workdir}/docs`);
  const { sources } = await started([stdio("fs", ["node", filesystem, workdir], workdir)], workdir);
  const box = new ToolBox({
    capabilities: { shell: { allow: [] }, filesystem: { readOnly: ["docs"] } },
    tools: [],
    shellGraceSecs: 10,
    sources: [sources],
  });
  try {
    const refused = await box.dispatch(
      {
        id: "c1",
        name: "mcp__fs__write_file",
        input: { path: `${workdir}/docs/a.md`, content: "x" },
      },
      ctxFor(workdir),
    );
    assert.equal(refused.refusal?.kind, "read_only");
    assert.match(refused.content, /read-only path 'docs'/);
    assert.equal(await Deno.stat(`${workdir}/docs/a.md`).then(() => true, () => false), false);
    const ok = await box.dispatch(
      {
        id: "c2",
        name: "mcp__fs__write_file",
        input: { path: `${workdir}/notes.md`, content: "ü" },
      },
      ctxFor(workdir),
    );
    assert.equal(ok.isError, false, ok.content);
    assert.equal(await Deno.readTextFile(`${workdir}/notes.md`), "ü");
  } finally {
    await sources.close();
    await Deno.remove(workdir, { recursive: true });
  }
});
