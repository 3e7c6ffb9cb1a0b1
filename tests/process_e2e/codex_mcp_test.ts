/**
 * One manifest's `mcp_servers:` on a Codex capsule (docs/mcp.md "On the process transport"): the
 * real Codex CLI, offline against the fake Responses endpoint, is handed server-everything in
 * its `-c mcp_servers.…` configuration beside mur's bridge (its environment forwarded by name,
 * never on argv), starts it and calls `echo`; the result reaches the model and the stream as
 * `mcp__everything__echo`, and the server's tools are offered to the model in their own
 * namespace.
 */
import assert from "node:assert/strict";
import { startCodexEndpoint } from "../../scripts/fakes/codex_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import { codexHome } from "../helpers/codex_home.ts";
import { ensureMcpServers } from "../tools/mcp/servers.ts";
import { frames, send, shape, startProcessCapsule, streamTask } from "./helpers.ts";

Deno.test("codex is handed the manifest's MCP servers and calls their tools", async () => {
  const codex = await ensureCli("codex");
  const { everything } = await ensureMcpServers();
  const endpoint = startCodexEndpoint();
  const pc = await startProcessCapsule({
    driver: "codex",
    command: codex,
    env: async (home) => (await codexHome(home, endpoint.url)).env,
    shell: ["bash"],
    manifest: {
      mcp_servers: {
        everything: {
          command: "node",
          args: [everything, "stdio"],
          env: { MUR_TEST_SECRET: "never-on-argv" },
          allow: ["echo", "get-sum"],
        },
      },
    },
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  try {
    const events = await streamTask(
      pc.cap,
      send('MCPTEST@mcp__everything/echo {"message":"héllo 世界"}'),
    );
    const s = shape(events);
    assert.equal(s.at(-1), "status:COMPLETED:task completed", s.join(" "));
    const art = frames(events).find((f) => f.frame === "artifact")!;
    assert.equal(art.toolName, "mcp__everything__echo");
    assert.ok(String(art.content).includes("Echo: héllo 世界"), String(art.content));
    const last = endpoint.requests.at(-1)!;
    assert.ok(JSON.stringify(last.body).includes("Echo: héllo 世界"));
    // The model was offered the server's allowed tools in their own namespace, beside the bridge.
    const first = endpoint.requests.find((r) => Array.isArray(r.body?.tools))!;
    const spaces =
      (first.body!.tools as { type: string; name: string; tools?: { name: string }[] }[])
        .filter((t) => t.type === "namespace");
    const ours = spaces.find((t) => t.name === "mcp__everything")!;
    // (Codex spells a `-` in a tool's name `_` to its model.)
    assert.deepEqual(ours.tools!.map((t) => t.name).sort(), ["echo", "get_sum"]);
    assert.ok(spaces.some((t) => t.name === "mcp__murmur"));
    // No secret on the harness's argv (it is in the trace's harness_start line).
    const trace = await Deno.readTextFile(`${pc.cap.ready.workdir}/trace.jsonl`);
    assert.ok(!trace.includes("never-on-argv"));
  } finally {
    await pc.close();
    await endpoint.close();
  }
});
