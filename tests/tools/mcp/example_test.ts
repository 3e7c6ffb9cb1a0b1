/**
 * examples/mcp as shipped (docs/mcp.md): `mur run --manifest examples/mcp` starts
 * server-everything with npx, the scripted model calls two of its tools, the task ends ok; the
 * trace names the server on each `tool_call` and has the slow tool's `tool_progress` lines.
 */
import assert from "node:assert/strict";
import { runMur } from "../../helpers/mur.ts";

const EXAMPLE = new URL("../../../examples/mcp", import.meta.url).pathname;

Deno.test("examples/mcp runs: server-everything's tools called through npx", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "mur-mcp-example-" });
  try {
    const { code, stdout, stderr } = await runMur({
      args: ["run", "--manifest", EXAMPLE, "--task", "add 2 and 40", "--workdir", `${tmp}/wd`],
      env: { MURMUR_HOME: `${tmp}/home`, NO_COLOR: "1" },
    }, 180_000);
    assert.equal(code, 0, stderr);
    assert.ok(stdout.split("\n").includes("status: ok"), stdout);
    assert.ok(!stderr.includes("W-MCP-001"), stderr);
    const [session] = [...Deno.readDirSync(`${tmp}/wd/.murmur`)].map((e) => e.name);
    const trace = (await Deno.readTextFile(`${tmp}/wd/.murmur/${session}/trace.jsonl`)).trim()
      .split("\n").map((l) => JSON.parse(l));
    const calls = trace.filter((e) => e.event_type === "tool_call");
    assert.deepEqual(calls.map((e) => [e.tool_name, e.server, e.status]), [
      ["mcp__everything__get-sum", "everything", "ok"],
      ["mcp__everything__trigger-long-running-operation", "everything", "ok"],
    ]);
    assert.ok(trace.some((e) => e.event_type === "tool_progress" && e.total === 3));
    const result = await Deno.readTextFile(`${tmp}/wd/.murmur/${session}/out/result.txt`);
    assert.equal(result, "2 + 40 = 42.");
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
