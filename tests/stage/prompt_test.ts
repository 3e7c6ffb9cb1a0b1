/**
 * Skills as a real provider sees them (a fake Anthropic endpoint on loopback records every
 * request): `inference.system_prompt_artifact` puts the skill's text in the system prompt and the
 * skill is not offered; a 64 KiB multi-byte skill comes back byte for byte; a skill the model's
 * shell call writes during the task is offered from the next turn on.
 */
import assert from "node:assert/strict";
import { startFakeProvider } from "../../scripts/fakes/server.ts";
import { runLaunch } from "../session/helpers.ts";

const KEY = "sk-test-fake-key-0123456789";
const PERSONA = "# Persona\n\nYou are terse. Überall: 短い.\n";
/** Exactly 65,536 bytes, a 3-byte character ending on the last byte. */
const BIG = (() => {
  const head = "# Big\n";
  const pad = 65_536 - new TextEncoder().encode(head).length;
  return head + "x".repeat(pad % 3) + "日".repeat(Math.floor(pad / 3));
})();

Deno.test("system_prompt_artifact, a 64 KiB multi-byte skill, a skill written mid-task: what the provider got", async () => {
  assert.equal(new TextEncoder().encode(BIG).length, 65_536);
  const fake = startFakeProvider({
    kind: "anthropic",
    apiKey: KEY,
    turns: [
      {
        steps: [
          { toolCall: { id: "toolu_big", name: "big", input: {} } },
          {
            toolCall: {
              id: "toolu_sh",
              name: "sh",
              input: {
                command: "mkdir -p tools/fresh && printf '# Fresh skill\\n' > tools/fresh/skill.md",
              },
            },
          },
        ],
      },
      { steps: [{ toolCall: { id: "toolu_fresh", name: "fresh", input: {} } }] },
      { steps: [{ text: "done" }] },
    ],
  });
  try {
    const run = await runLaunch({
      task: "go",
      manifest: {
        name: "prompted",
        version: "0.1.0",
        inference: {
          driver: "anthropic",
          model: "claude-haiku-4-5",
          endpoint: fake.baseURL,
          api_key: "${FAKE_KEY}",
          system_prompt_artifact: "persona",
        },
        capabilities: { shell: { allow: ["sh"] } },
        artifacts: [
          { name: "persona", runtime: "skill", source: "persona" },
          { name: "big", runtime: "skill", source: "big" },
        ],
      },
      files: { "persona/skill.md": PERSONA, "big/skill.md": BIG },
      env: { FAKE_KEY: KEY },
    });
    try {
      assert.equal(run.code, 0, run.stderr);
      const bodies = fake.requests.map((r) => r.body!);
      assert.equal(bodies.length, 3);
      // The system prompt is the skill's text; the bound skill is not a tool.
      assert.ok(JSON.stringify(bodies[0].system).includes(JSON.stringify(PERSONA).slice(1, -1)));
      const tools = (b: Record<string, unknown>) =>
        (b.tools as { name: string }[]).map((t) => t.name);
      assert.deepEqual(tools(bodies[0]), ["sh", "big"]);
      // The skill the shell call wrote is offered from the next turn on.
      assert.deepEqual(tools(bodies[1]), ["sh", "big", "fresh"]);
      const fresh =
        (bodies[1].tools as { name: string; description: string; input_schema: unknown }[])
          .find((t) => t.name === "fresh")!;
      assert.equal(fresh.description, "Fresh skill");
      assert.deepEqual(fresh.input_schema, { type: "object", properties: {} });
      // The 64 KiB skill reached the provider byte for byte, unfenced.
      const results = (bodies[1].messages as { content: unknown }[]).flatMap((m) =>
        Array.isArray(m.content) ? m.content : []
      ) as { type: string; tool_use_id?: string; content?: unknown }[];
      const big = results.find((c) => c.type === "tool_result" && c.tool_use_id === "toolu_big")!;
      const text = typeof big.content === "string"
        ? big.content
        : (big.content as { text: string }[]).map((c) => c.text).join("");
      assert.equal(text, BIG);
      const calls = run.trace.filter((e) => e.event_type === "skill_call");
      assert.deepEqual(
        calls.map((e) => [e.skill_name, e.origin, e.output_bytes]),
        [["big", "operator", 65_536], [
          "fresh",
          "runtime",
          new TextEncoder().encode(
            "<untrusted-content source=skill:fresh>\n# Fresh skill\n\n</untrusted-content>",
          ).length,
        ]],
      );
      assert.equal(
        run.trace.find((e) => e.event_type === "session_start")!.system_prompt_source,
        "manifest",
      );
      const md = await Deno.readTextFile(`${run.workdir}/MURMUR.md`);
      assert.match(
        md,
        /- \*\*persona\*\* \(bound into the system prompt: not separately callable\) — Persona\n/,
      );
    } finally {
      await run.cleanup();
    }
  } finally {
    await fake.close();
  }
});
