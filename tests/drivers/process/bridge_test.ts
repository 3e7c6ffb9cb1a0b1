/**
 * The tool bridge spoken to by the MCP SDK's own client over real loopback HTTP: the bearer
 * token, tools/list, a call returning a fenced result (tied back by `_meta` toolUseId or by
 * name and arguments), refusals as isError, Claude Code's `server/discover` probe.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolBridge } from "../../../src/drivers/process/bridge.ts";
import type { ToolCall } from "../../../src/drivers/types.ts";
import type { ToolResult } from "../../../src/tools/types.ts";
import { fenced } from "./helpers.ts";
import { until } from "../../helpers/until.ts";

const TOOLS = [
  {
    name: "echo",
    description: "echo the text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  { name: "request-input", description: "ask the person", inputSchema: { type: "object" } },
];

function startBridge(dispatch: (c: ToolCall) => Promise<ToolResult>) {
  let activity = 0;
  const bridge = ToolBridge.start({ tools: TOOLS, dispatch, onActivity: () => activity++ });
  return { bridge, activity: () => activity };
}

async function connect(bridge: ToolBridge, token: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(bridge.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

Deno.test("bridge: a wrong or missing token is refused 401; the right one lists the tools", async () => {
  const { bridge, activity } = startBridge(() => Promise.resolve(fenced("echo", "x")));
  let client: Client | null = null;
  try {
    const bare = await fetch(bridge.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(bare.status, 401);
    await bare.body?.cancel();
    await assert.rejects(() => connect(bridge, "not-the-token"));
    assert.equal(activity(), 0, "refused requests do not count as harness activity");
    assert.equal(bridge.token.length, 64);
    client = await connect(bridge, bridge.token);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), ["echo", "request-input"]);
    assert.deepEqual(tools[0].inputSchema.required, ["text"]);
    assert.ok(activity() > 0);
  } finally {
    await client?.close();
    await bridge.close();
  }
});

Deno.test("bridge: a call reaches the dispatch and returns its fenced result; _meta ties it to the harness's id", async () => {
  const seen: ToolCall[] = [];
  const { bridge } = startBridge((c) => {
    seen.push(c);
    return Promise.resolve(fenced("echo", `ECHO ${c.input.text}`));
  });
  let client: Client | null = null;
  try {
    client = await connect(bridge, bridge.token);
    const res = await client.callTool({
      name: "echo",
      arguments: { text: "hi" },
      _meta: { "claudecode/toolUseId": "toolu_01" },
    });
    assert.equal(res.isError, false);
    assert.deepEqual(res.content, [{
      type: "text",
      text: "<untrusted-content source=tool:echo>\nECHO hi\n</untrusted-content>",
    }]);
    assert.deepEqual(seen, [{ id: "toolu_01", name: "echo", input: { text: "hi" } }]);
    const rec = bridge.takeById("toolu_01");
    assert.equal(rec?.fenceSource, "tool:echo");
    assert.equal(rec?.durationMs, 7);
    assert.equal(bridge.takeById("toolu_01"), null, "a call is paired once");

    // No id from the harness (Codex): the bridge mints one; pairing goes by name and arguments.
    await client.callTool({ name: "echo", arguments: { text: "b", n: { y: 1, x: 2 } } });
    assert.equal(seen[1].id, "bridge_1");
    assert.equal(bridge.takeByNameArgs("echo", { text: "a" }), null);
    assert.equal(
      bridge.takeByNameArgs("echo", { n: { x: 2, y: 1 }, text: "b" })?.callId,
      "bridge_1",
    );
  } finally {
    await client?.close();
    await bridge.close();
  }
});

Deno.test("bridge: refusals and dispatch failures come back as isError results", async () => {
  const { bridge } = startBridge((c) => {
    if (c.name === "request-input") return Promise.reject(new Error("gate unreachable"));
    return Promise.resolve({
      content: "tool 'echo' call refused by hook policy-gate",
      fenceSource: null,
      isError: true,
      exitCode: null,
      truncated: false,
      durationMs: 0,
      images: [{ mediaType: "image/png", data: new TextEncoder().encode("png!") }],
    });
  });
  let client: Client | null = null;
  try {
    client = await connect(bridge, bridge.token);
    const refused = await client.callTool({ name: "echo", arguments: { text: "x" } });
    assert.equal(refused.isError, true);
    assert.deepEqual(refused.content, [
      { type: "text", text: "tool 'echo' call refused by hook policy-gate" },
      { type: "image", data: btoa("png!"), mimeType: "image/png" },
    ]);
    const failed = await client.callTool({ name: "request-input", arguments: {} });
    assert.equal(failed.isError, true);
    assert.match((failed.content as { text: string }[])[0].text, /gate unreachable/);
    assert.equal(bridge.calls.every((c) => c.fenceSource === null), true);
  } finally {
    await client?.close();
    await bridge.close();
  }
});

Deno.test("bridge: a request outside any session (server/discover) is method-not-found; GET is 405", async () => {
  const { bridge } = startBridge(() => Promise.resolve(fenced("echo", "x")));
  try {
    const auth = { authorization: `Bearer ${bridge.token}` };
    const probe = await fetch(bridge.url, {
      method: "POST",
      headers: {
        ...auth,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "server-discover-probe-1",
        method: "server/discover",
        params: {},
      }),
    });
    assert.equal(probe.status, 200);
    assert.deepEqual(await probe.json(), {
      jsonrpc: "2.0",
      id: "server-discover-probe-1",
      error: { code: -32601, message: "Method not found" },
    });
    const get = await fetch(bridge.url, { headers: { ...auth, accept: "text/event-stream" } });
    assert.equal(get.status, 405);
    await get.body?.cancel();
  } finally {
    await bridge.close();
  }
});

Deno.test("bridge: with a ready gate, a call is dispatched only once the harness announced it", async () => {
  const { CallOrder } = await import("../../../src/drivers/process/call_order.ts");
  const order = new CallOrder(600_000);
  const seen: string[] = [];
  const bridge = ToolBridge.start({
    tools: TOOLS,
    ready: (name) => order.ready(name),
    dispatch: (c) => {
      seen.push(c.name);
      return Promise.resolve(fenced("echo", "ok"));
    },
  });
  let client: Client | null = null;
  try {
    client = await connect(bridge, bridge.token);
    const call = client.callTool({ name: "echo", arguments: { text: "hi" } });
    // The call reached the bridge (it is recorded) but waits for the announcement.
    await until("the call to reach the bridge", () => bridge.calls.length > 0 || undefined);
    assert.deepEqual(seen, [], "not dispatched before the announcement");
    order.announce("toolu_9", "echo");
    const res = await call;
    assert.equal(res.isError, false);
    assert.deepEqual(seen, ["echo"]);
  } finally {
    order.close();
    await client?.close();
    await bridge.close();
  }
});
