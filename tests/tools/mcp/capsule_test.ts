/**
 * MCP servers end to end through `mur run`: a scripted capsule and an HTTP-model capsule (the
 * fake Anthropic provider on loopback) call real server-everything and server-filesystem tools.
 * A watcher reads `tool-progress` frames and the artifacts (fenced under
 * `tool:mcp__<server>__<tool>`, an image as an attachment); the trace has `tool_call` lines with
 * the server, `tool_progress` lines, and a `source_error` for a server that could not start
 * (also `warning[W-MCP-001]` on stderr and `sourceErrors` in GetTask's metadata); the session
 * goes on without that server's tools. On SIGTERM the servers are stopped with the session.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../../helpers/capsule.ts";
import { runMur } from "../../helpers/mur.ts";
import { collect, frameOf, type SseEvent, streamRequest } from "../../helpers/sse.ts";
import { type FakeProvider, startFakeProvider } from "../../../scripts/fakes/server.ts";
import { ensureMcpServers } from "./servers.ts";

type R = Record<string, Record<string, unknown>>;
const KEY = "sk-test-fake-key-0123456789";

function isTerminal(e: SseEvent): boolean {
  const st = ((e.data.result as R)?.statusUpdate?.status as { state?: string })?.state;
  return st === "TASK_STATE_COMPLETED" || st === "TASK_STATE_FAILED";
}

/** Pids whose environment holds `mark` (the servers mur started for this capsule). */
async function pidsWith(mark: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      if ((await Deno.readTextFile(`/proc/${e.name}/environ`)).includes(mark)) {
        out.push(Number(e.name));
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}

async function runCapsule(
  inference: Record<string, unknown>,
  o: { script?: Record<string, unknown>; env?: Record<string, string>; task: string },
) {
  const { everything, filesystem } = await ensureMcpServers();
  // server-filesystem needs a folder on its command line (the manifest's, which the contained
  // server sees); mur's roots replace it.
  const mark = `MUR_MCP_TEST_${crypto.randomUUID().replaceAll("-", "")}`;
  const cap = await startCapsule({
    manifest: {
      name: "mcp-e2e",
      version: "0.1.0",
      inference,
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
      mcp_servers: {
        everything: { command: "node", args: [everything, "stdio"], env: { [mark]: "1" } },
        fs: { command: "node", args: [filesystem, "."], env: { [mark]: "1" } },
        // Dies at start, on stderr first (node, which the capsule's containment can reach).
        broken: {
          command: "node",
          args: [
            "-e",
            "process.stderr.write('hostile: dying at start on purpose\\n'); process.exit(3)",
          ],
        },
      },
    },
    script: o.script,
    env: o.env,
    args: ["--task", o.task],
    readyMs: 90_000,
  });
  try {
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" });
    assert.equal(res.status, 200);
    const events = await collect(res, isTerminal, 60_000);
    const taskId = events.map((e) => (e.data.result as R)?.statusUpdate?.taskId).find(Boolean);
    const task = await cap.rpc("GetTask", { id: taskId });
    // Both servers run, contained (docs/containment.md: the default `scoped` where the host
    // reaches it): bubblewrap gives them a pid namespace of their own.
    const running = await pidsWith(mark);
    assert.ok(running.length >= 2, `both servers run: ${running}`);
    const own = await Deno.readLink("/proc/self/ns/pid");
    const contained = await Promise.all(
      running.map((p) => Deno.readLink(`/proc/${p}/ns/pid`).catch(() => own)),
    );
    assert.ok(
      contained.some((ns) => ns !== own),
      "the servers run in a pid namespace of their own",
    );
    cap.kill("SIGTERM");
    const end = await cap.finished();
    const trace = (await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const murmurMd = await Deno.readTextFile(`${cap.ready.workdir}/MURMUR.md`);
    const shown = await runMur({
      args: ["trace", "show", `${cap.ready.workdir}/trace.jsonl`],
      env: { NO_COLOR: "1" },
    }, 30_000);
    return {
      events,
      task,
      end,
      trace,
      left: await pidsWith(mark),
      workdir: cap.ready.workdir,
      murmurMd,
      traceShow: shown.stdout,
      brokenLog: await Deno.readTextFile(`${cap.ready.workdir}/logs/mcp-broken.log`),
    };
  } finally {
    await cap.close();
  }
}

function frames(events: SseEvent[]) {
  return events.map(frameOf).filter((f): f is Record<string, unknown> => f !== undefined);
}

function commonChecks(r: Awaited<ReturnType<typeof runCapsule>>) {
  const f = frames(r.events);
  // The dead server: told at launch on stderr, in the trace and in the task's metadata.
  assert.match(
    r.end.stderr,
    /warning\[W-MCP-001\]: MCP server 'broken': the server exited with code 3/,
  );
  const se = r.trace.find((l) => l.event_type === "source_error");
  assert.equal(se?.source, "broken");
  assert.equal(se?.phase, "launch");
  // deno-lint-ignore no-explicit-any
  const meta = (r.task as any).result.metadata.murmur.sourceErrors;
  assert.equal(meta.length, 1, JSON.stringify(meta));
  assert.equal(meta[0].kind, "mcp");
  assert.equal(meta[0].source, "broken");
  // Progress of the long-running call: frames and trace lines, at most one per 250 ms of clock.
  const progress = f.filter((x) => x.frame === "tool-progress");
  assert.ok(progress.length >= 1, JSON.stringify(f.map((x) => x.frame)));
  assert.equal(progress[0].toolName, "mcp__everything__trigger-long-running-operation");
  assert.equal(progress[0].total, 3);
  const tp = r.trace.filter((l) => l.event_type === "tool_progress");
  assert.equal(tp.length, progress.length);
  assert.equal(tp[0].server, "everything");
  // Artifacts: fenced under the tool's full name; tool_call lines name the server.
  const arts = f.filter((x) => x.frame === "artifact");
  const echo = arts.find((a) => a.toolName === "mcp__everything__echo");
  assert.equal(echo?.fenceSource, "tool:mcp__everything__echo");
  assert.ok(String(echo?.content).includes("Echo: héllo 世界"));
  const calls = r.trace.filter((l) => l.event_type === "tool_call");
  assert.ok(calls.length >= 3);
  for (const c of calls) assert.equal(c.server, String(c.tool_name).split("__")[1]);
  // The dead server's stderr, in the session's logs.
  assert.match(r.brokenLog, /hostile: dying at start on purpose/);
  // `mur trace show` names the source that failed.
  assert.match(
    r.traceShow,
    /Tool sources[\s\S]*mcp broken \(launch\): the server exited with code 3/,
  );
  // MURMUR.md lists the servers' tools as tools (not skills).
  const installed = r.murmurMd.slice(r.murmurMd.indexOf("## Installed Tools"));
  assert.match(installed, /^- \*\*mcp__everything__echo\*\* — Echoes back the input string$/m);
  assert.ok(!/mcp__\S+\*\* \([^)]*skill\)/.test(r.murmurMd), "no MCP tool listed as a skill");
  // SIGTERM ended the session and stopped both servers.
  assert.equal(r.trace.at(-1).event_type, "session_end");
  assert.deepEqual(r.left, []);
}

Deno.test("a scripted capsule calls server-everything and server-filesystem tools", async () => {
  const r = await runCapsule({ transport: "http" }, {
    task: "use the tools",
    script: {
      tasks: [{
        turns: [
          {
            steps: [
              {
                tool_call: {
                  id: "c1",
                  name: "mcp__everything__echo",
                  input: { message: "héllo 世界" },
                },
              },
              {
                tool_call: {
                  id: "c2",
                  name: "mcp__everything__trigger-long-running-operation",
                  input: { duration: 1.5, steps: 3 },
                },
              },
              { tool_call: { id: "c3", name: "mcp__everything__get-tiny-image", input: {} } },
              { tool_call: { id: "c4", name: "mcp__fs__list_allowed_directories", input: {} } },
            ],
          },
          { steps: [{ text: "done" }] },
        ],
      }],
    },
  });
  commonChecks(r);
  const arts = frames(r.events).filter((x) => x.frame === "artifact");
  const img = arts.find((a) => a.toolName === "mcp__everything__get-tiny-image");
  const att = (img?.attachments as { mediaType: string }[])[0];
  assert.equal(att.mediaType, "image/png");
  // server-filesystem took mur's root (the workdir) instead of the folder on its command line.
  const fs = arts.find((a) => a.toolName === "mcp__fs__list_allowed_directories");
  assert.ok(String(fs?.content).includes(r.workdir), String(fs?.content));
});

Deno.test("an HTTP-model capsule (fake provider) calls MCP tools and the model gets their results", async () => {
  const fake: FakeProvider = startFakeProvider({
    kind: "anthropic",
    apiKey: KEY,
    turns: [
      {
        steps: [
          {
            toolCall: {
              id: "call_1",
              name: "mcp__everything__echo",
              input: { message: "héllo 世界" },
            },
          },
          {
            toolCall: {
              id: "call_2",
              name: "mcp__everything__trigger-long-running-operation",
              input: { duration: 1.5, steps: 3 },
            },
          },
          { toolCall: { id: "call_3", name: "mcp__everything__get-sum", input: { a: 2, b: 40 } } },
        ],
        usage: { input: 100, output: 20 },
      },
      { steps: [{ text: "The sum is 42." }], usage: { input: 200, output: 5 } },
    ],
  });
  try {
    const r = await runCapsule({
      transport: "http",
      driver: "anthropic",
      model: "claude-sonnet-4-5",
      endpoint: fake.baseURL,
      api_key: "${FAKE_PROVIDER_KEY}",
      max_tokens: 512,
    }, { env: { FAKE_PROVIDER_KEY: KEY }, task: "add 2 and 40" });
    commonChecks(r);
    // The provider was offered the servers' tools with their schemas, none of the dead one's.
    const first = r.trace && fake.requests.find((q) => q.path.includes("messages"))!;
    const tools =
      (first.body as { tools: { name: string; input_schema: { type: string } }[] }).tools;
    const sum = tools.find((t) => t.name === "mcp__everything__get-sum");
    assert.equal(sum?.input_schema.type, "object");
    assert.ok(tools.some((t) => t.name === "mcp__fs__read_text_file"));
    assert.ok(!tools.some((t) => t.name.startsWith("mcp__broken__")));
    // The tool results went back to the model fenced.
    const last = fake.requests.at(-1)!.body as {
      messages: { content: { type: string; content?: unknown }[] | string }[];
    };
    const sent = JSON.stringify(last.messages.at(-1));
    assert.ok(sent.includes("<untrusted-content source=tool:mcp__everything__get-sum>"), sent);
    assert.ok(sent.includes("42"));
  } finally {
    await fake.close();
  }
});
