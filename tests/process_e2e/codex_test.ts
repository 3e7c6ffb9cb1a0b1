/**
 * `transport: process, driver: codex` end to end: the real Codex CLI (installed by the test
 * setup; a failed install fails this test) run by `mur run --json`, offline against the fake
 * Responses endpoint (scripts/fakes/codex_endpoint.ts) named in a CODEX_HOME config.toml. A text
 * task (Codex streams no deltas, so the whole answer is one `text` `final:true` frame) and an
 * MCP tool call through the bridge to the capsule's shell tool.
 */
import assert from "node:assert/strict";
import { startCodexEndpoint } from "../../scripts/fakes/codex_endpoint.ts";
import { ensureCli } from "../drivers/process/install.ts";
import {
  frames,
  send,
  shape,
  startProcessCapsule,
  STREAM_URI,
  streamTask,
  taskIdOf,
  traceOf,
  until,
} from "./helpers.ts";
import { codexHome } from "../helpers/codex_home.ts";

Deno.test("codex through mur run: the card, a text task, an MCP tool call to a shell tool", async (t) => {
  const codex = await ensureCli("codex");
  const endpoint = startCodexEndpoint();
  const pc = await startProcessCapsule({
    driver: "codex",
    command: codex,
    env: async (home) => {
      return (await codexHome(home, endpoint.url)).env;
    },
    shell: ["bash"],
  }).catch(async (e) => {
    await endpoint.close();
    throw e;
  });
  const { cap } = pc;
  try {
    await t.step("the card: Codex streams no text; the process frames are listed", async () => {
      const card = await (await fetch(`${cap.base}/.well-known/agent-card.json`)).json();
      assert.equal(card.capabilities.streaming, false);
      const ext = card.capabilities.extensions.find((e: { uri: string }) => e.uri === STREAM_URI);
      const fs = ext.params.frames as string[];
      assert.deepEqual(fs.slice(fs.indexOf("artifact"), fs.indexOf("artifact") + 3), [
        "artifact",
        "quota",
        "suggested-prompt",
      ]);
    });

    await t.step("a text task: one turn, the whole answer as one final text frame", async () => {
      const events = await streamTask(cap, send("say hello"), { ms: 60_000 });
      assert.deepEqual(shape(events), [
        "task:TASK_STATE_SUBMITTED",
        "status:WORKING:inference turn 1",
        "frame:text:final",
        "artifact:response",
        "status:COMPLETED:task completed",
      ]);
      assert.deepEqual(frames(events), [
        { frame: "text", text: "Hello from fake OpenAI.", final: true },
      ]);
      const id = taskIdOf(events);
      const end = await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
      assert.deepEqual([end.exit_status, end.turns, end.input_tokens], ["ok", 1, 20]);
      const [start] = await traceOf(cap, id, "harness_start");
      assert.equal(start.driver, "codex");
      const req = endpoint.requests.find((r) =>
        JSON.stringify(r.body?.input).includes("say hello")
      );
      assert.match(JSON.stringify(req?.body?.input), /You are a test capsule\./);
    });

    await t.step(
      "an MCP tool call runs the capsule's shell tool and comes back fenced",
      async () => {
        const events = await streamTask(cap, send('MCPTEST {"command":"echo from-codex"}'), {
          ms: 60_000,
        });
        const s = shape(events);
        assert.equal(s.at(-1), "status:COMPLETED:task completed", s.join(" "));
        const at = (x: string) => s.indexOf(x);
        assert.ok(at("status:WORKING:inference turn 1") < at("frame:artifact"), s.join(" "));
        assert.ok(at("frame:artifact") < at("status:WORKING:inference turn 2"), s.join(" "));
        const art = frames(events).find((f) => f.frame === "artifact")!;
        assert.equal(art.toolName, "bash");
        // Codex sends no call id: the bridge call is matched by tool name and arguments.
        assert.equal(art.fenceSource, "tool:bash");
        assert.match(
          String(art.content),
          /^<untrusted-content source=tool:bash>\n[\s\S]*from-codex[\s\S]*<\/untrusted-content>$/,
        );
        assert.equal(art.exitCode, null);
        assert.deepEqual(art.attachments, []);
        const final = frames(events).filter((f) => f.frame === "text");
        assert.equal(final.length, 1);
        // The model got the fenced result (codex wraps the output in its own items).
        assert.match(
          String(final[0].text),
          /^Tool said: [\s\S]*<untrusted-content source=tool:bash>[\s\S]*from-codex/,
        );
        const id = taskIdOf(events);
        await until("task_end", async () => (await traceOf(cap, id, "task_end"))[0]);
        const [sh] = await traceOf(cap, id, "shell");
        assert.equal(sh.exit_code, 0);
        const [call] = await traceOf(cap, id, "tool_call");
        assert.deepEqual(call.input, { command: "echo from-codex" });
      },
    );
  } finally {
    await pc.close();
    await endpoint.close();
  }
});
