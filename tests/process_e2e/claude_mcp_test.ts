/**
 * One manifest's `mcp_servers:` on the process transport (docs/mcp.md "On the process
 * transport"): the real Claude Code CLI, offline against the fake Anthropic endpoint, is handed
 * server-everything in its own MCP configuration beside mur's bridge, starts it, and calls
 * `mcp__everything__echo` (a tool the manifest allows); the result reaches the model and the
 * stream as the harness reports it. A tool the manifest denies is refused by the harness and the
 * server's tools are not bridged through mur. A server that dies at start is the task's
 * `sourceErrors`; an OpenAPI service's operation reaches the harness through mur's own server.
 */
import assert from "node:assert/strict";
import { startClaudeEndpoint } from "../../scripts/fakes/claude_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { ensureMcpServers, hostileArgv } from "../tools/mcp/servers.ts";
import { startPets } from "../tools/openapi/pets.ts";
import {
  frames,
  send,
  shape,
  startProcessCapsule,
  streamTask,
  taskIdOf,
  traceOf,
} from "./helpers.ts";

Deno.test("claude-code is handed the manifest's MCP servers and calls their tools", async () => {
  const claude = await ensureCli("claude-code");
  const { everything } = await ensureMcpServers();
  const endpoint = startClaudeEndpoint();
  const dead = hostileArgv("die-at-start", "/dev/null");
  const pets = startPets("pt");
  const pc = await startProcessCapsule({
    driver: "claude-code",
    command: claude,
    env: [`ANTHROPIC_BASE_URL=${endpoint.url}`, "ANTHROPIC_API_KEY=sk-ant-fake"],
    shell: ["bash"],
    manifest: {
      mcp_servers: {
        everything: { command: "node", args: [everything, "stdio"], deny: ["get-env"] },
        broken: { command: dead[0], args: dead.slice(1) },
      },
      openapi_services: {
        pets: { spec: `${pets.url}/openapi.json`, headers: { Authorization: "Bearer pt" } },
      },
    },
  }).catch(async (e) => {
    await endpoint.close();
    await pets.close();
    throw e;
  });
  try {
    const events = await streamTask(
      pc.cap,
      send('MCPTEST@mcp__everything__echo {"message":"héllo 世界"}'),
    );
    const s = shape(events);
    assert.equal(s.at(-1), "status:COMPLETED:task completed", s.join(" "));
    // The server the harness could not start: the task's sourceErrors and a trace line.
    const got = await pc.cap.rpc("GetTask", { id: taskIdOf(events) }) as {
      result: { metadata?: { murmur?: { sourceErrors?: { source: string; kind: string }[] } } };
    };
    assert.deepEqual(
      got.result.metadata?.murmur?.sourceErrors?.map((e) => `${e.kind}:${e.source}`),
      ["mcp:broken"],
      JSON.stringify(got.result.metadata),
    );
    const se = await traceOf(pc.cap, taskIdOf(events), "harness_source_error");
    assert.equal(se[0]?.source, "broken");
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
    // An OpenAPI operation reaches the harness through mur's own tool server.
    const api = await streamTask(
      pc.cap,
      send('MCPTEST@mcp__murmur__openapi__pets__getPet {"id":3}'),
    );
    const apiArt = frames(api).find((f) => f.frame === "artifact")!;
    assert.equal(apiArt.toolName, "openapi__pets__getPet");
    assert.match(String(apiArt.content), /HTTP 200[\s\S]*"id":3/);
    assert.equal(pets.seen.at(-1)!.auth, "Bearer pt");
  } finally {
    await pc.close();
    await endpoint.close();
    await pets.close();
  }
});
