/**
 * One manifest's `mcp_servers:` on the process transport (docs/mcp.md "On the process
 * transport"): the real Claude Code CLI, offline against the fake Anthropic endpoint, is handed
 * server-everything in its own MCP configuration beside mur's bridge, starts it, and calls
 * `mcp__everything__echo` (a tool the manifest allows); the result reaches the model and the
 * stream as the harness reports it. A tool the manifest denies is refused by the harness and the
 * server's tools are not bridged through mur.
 */
import assert from "node:assert/strict";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { ensureMcpServers } from "../tools/mcp/servers.ts";
import { frames, send, shape, startProcessCapsule, streamTask } from "./helpers.ts";

Deno.test("claude-code is handed the manifest's MCP servers and calls their tools", async () => {
  const claude = await ensureCli("claude-code");
  const { everything } = await ensureMcpServers();
  const endpoint = startClaudeEndpoint();
  const pc = await startProcessCapsule({
    driver: "claude-code",
    command: claude,
    env: [`ANTHROPIC_BASE_URL=${endpoint.url}`, "ANTHROPIC_API_KEY=sk-ant-fake"],
    shell: ["bash"],
    manifest: {
      mcp_servers: {
        everything: { command: "node", args: [everything, "stdio"], deny: ["get-env"] },
      },
    },
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  try {
    const events = await streamTask(
      pc.cap,
      send('MCPTEST@mcp__everything__echo {"message":"héllo 世界"}'),
    );
    const s = shape(events);
    assert.equal(s.at(-1), "status:COMPLETED:task completed", s.join(" "));
    const art = frames(events).find((f) => f.frame === "artifact")!;
    assert.equal(art.toolName, "mcp__everything__echo");
    assert.equal(art.isError, false, String(art.content));
    assert.ok(String(art.content).includes("Echo: héllo 世界"), String(art.content));
    // The model got the server's answer back.
    const last = endpoint.requests.filter((r) => r.path === "/v1/messages").at(-1)!;
    assert.ok(JSON.stringify(last.body).includes("Echo: héllo 世界"));
    // The harness was offered the server's tools under their own names, the bridge's beside
    // them, and none of them twice through the bridge.
    const first = endpoint.requests.find((r) =>
      r.path === "/v1/messages" && Array.isArray(r.body?.tools) &&
      (r.body.tools as unknown[]).length > 0
    )!;
    const names = (first.body!.tools as { name: string }[]).map((t) => t.name);
    assert.ok(names.includes("mcp__everything__echo"), names.join(", "));
    assert.ok(names.includes("mcp__murmur__bash"), names.join(", "));
    assert.ok(!names.some((n) => n.startsWith("mcp__murmur__mcp__")), names.join(", "));
    // deny: the harness does not offer the tool.
    assert.ok(!names.includes("mcp__everything__get-env"), names.join(", "));

    // A denied tool: the harness refuses the call; the task goes on to its end.
    const denied = await streamTask(pc.cap, send("MCPTEST@mcp__everything__get-env {}"));
    assert.equal(shape(denied).at(-1), "status:COMPLETED:task completed", shape(denied).join(" "));
    const last2 = endpoint.requests.filter((r) => r.path === "/v1/messages").at(-1)!;
    const sent = JSON.stringify(last2.body);
    assert.ok(!sent.includes("MUR_") && !sent.includes("PATH"), "get-env never ran");
    assert.ok(/"is_error":true/.test(sent), sent.slice(-600));
  } finally {
    await pc.close();
    await endpoint.close();
  }
});
