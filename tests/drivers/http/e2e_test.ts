/**
 * End to end through `mur run`: a capsule on each http driver runs a tool-calling task against its
 * fake provider, and a `murmur.WatchSession` watcher sees the same kinds of frames, with the same
 * keys, in the same order as on the scripted driver playing the same turns (docs/protocol.md
 * "Frames"). The fake then checks the tool result went back exactly as the artifact
 * showed it.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../../helpers/capsule.ts";
import { collect as collectSse, frameOf, type SseEvent, streamRequest } from "../../helpers/sse.ts";
import { type FakeProvider, startFakeProvider } from "../../../scripts/fakes/server.ts";
import type { FakeTurn } from "../../../scripts/fakes/plan.ts";
import { parse as parseYaml } from "yaml";
import { FAKE_OF, type HttpDriverName, KEY, MODEL_OF } from "./harness.ts";

type R = Record<string, Record<string, unknown>>;

const TASK = "What is the weather in Paris?";
const SYSTEM = "You are a weather bot.";

const FAKE_TURNS: FakeTurn[] = [
  {
    steps: [
      { thinking: "The user wants the weather." },
      { text: "Let me check. " },
      { toolCall: { id: "call_e2e1", name: "bash", input: { command: "echo sunny" }, chunks: 4 } },
    ],
    usage: { input: 120, output: 30 },
  },
  { steps: [{ text: "It is sunny." }], usage: { input: 180, output: 5 } },
];

const SCRIPT = {
  tasks: [{
    turns: [
      {
        steps: [
          { thinking: "The user wants the weather." },
          { text: "Let me check. " },
          {
            tool_call: {
              id: "call_e2e1",
              name: "bash",
              input: { command: "echo sunny" },
              chunks: 4,
            },
          },
        ],
      },
      { steps: [{ text: "It is sunny." }] },
    ],
  }],
};

function manifest(inference: Record<string, unknown>) {
  return {
    name: "weather",
    version: "0.1.0",
    inference: { transport: "http", max_tokens: 512, system_prompt: SYSTEM, ...inference },
    // `queue` + `sleep`: the capsule outlives its launch task, so a watcher that connects after
    // the task ended (a loaded machine) still replays it from id 0 (`single` ends the session).
    lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    capabilities: { shell: { allow: ["bash"] } },
  };
}

function describe(e: SseEvent): string {
  const r = e.data.result as R;
  if (r.task) return `task:${(r.task.status as { state: string }).state}`;
  if (r.artifactUpdate) return `artifact:${(r.artifactUpdate.artifact as { name: string }).name}`;
  const f = frameOf(e);
  if (f) return `frame:${f.frame}${f.frame === "text" && f.final ? ":final" : ""}`;
  const st = r.statusUpdate.status as { state: string; message?: { parts: { text: string }[] } };
  return `status:${st.state.replace("TASK_STATE_", "")}${
    st.message ? `:${st.message.parts[0].text}` : ""
  }`;
}

function isTerminal(e: SseEvent): boolean {
  const r = e.data.result as R;
  const state = (r?.statusUpdate?.status as { state?: string } | undefined)?.state;
  return state === "TASK_STATE_COMPLETED" || state === "TASK_STATE_FAILED" ||
    state === "TASK_STATE_CANCELED";
}

interface Run {
  events: SseEvent[];
  trace: Record<string, unknown>[];
}

/** Start a capsule with the launch task, watch the session from id 0 to the task's end. */
async function run(
  m: Record<string, unknown>,
  opts: { script?: Record<string, unknown>; env?: Record<string, string> } = {},
): Promise<Run> {
  const cap = await startCapsule({
    manifest: m,
    script: opts.script,
    env: opts.env,
    args: ["--task", TASK],
  });
  try {
    const res = await streamRequest(cap.base, "murmur.WatchSession", {}, { "Last-Event-ID": "0" })
      .catch(async (e) => {
        // Say everything the capsule left. (Seen under load while the manifest said `single`:
        // the capsule had ended after its task, status 0, before this request reached it.)
        const trace = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`)
          .catch((x) => String(x));
        const alive = await Deno.stat(`/proc/${cap.ready.pid}`).then(() => true, () => false);
        cap.kill("SIGKILL");
        const status = await cap.proc.status;
        const { stdout, stderr } = await cap.finished();
        throw new Error(
          `WatchSession failed: ${e}; the capsule was ${alive ? "alive" : "gone"}, status ${
            JSON.stringify(status)
          }; ready: ${
            JSON.stringify(cap.ready)
          }\nstdout:\n${stdout}\nstderr:\n${stderr}\ntrace:\n${trace}`,
          { cause: e },
        );
      });
    assert.equal(res.status, 200);
    const events = await collectSse(res, isTerminal, 30_000);
    const traceText = await Deno.readTextFile(`${cap.ready.workdir}/trace.jsonl`);
    const trace = traceText.trim().split("\n").map((l) => JSON.parse(l));
    return { events, trace };
  } finally {
    await cap.close();
  }
}

/** The sequence a watcher reads; repeated progress frames collapse (their count is timing). */
function shape(events: SseEvent[]): string[] {
  const seq = events.map(describe);
  return seq.filter((s, i) => !(s === "frame:tool-call-progress" && seq[i - 1] === s));
}

function frames(events: SseEvent[]): Record<string, unknown>[] {
  return events.map(frameOf).filter((f): f is Record<string, unknown> => f !== undefined);
}

let reference: Promise<Run> | undefined;
function scriptedRun(): Promise<Run> {
  reference ??= run(manifest({ driver: "scripted" }), { script: SCRIPT });
  return reference;
}

/** The tool result the provider received on the second call, per wire format. */
function toolResultSent(name: HttpDriverName, body: Record<string, unknown>): unknown {
  if (name === "anthropic") {
    const msgs = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    return msgs.at(-1)?.content.find((c) => c.type === "tool_result")?.content;
  }
  if (name === "openai") {
    const input = body.input as Array<Record<string, unknown>>;
    return input.find((i) => i.type === "function_call_output")?.output;
  }
  const msgs = body.messages as Array<Record<string, unknown>>;
  return msgs.find((m) => m.role === "tool")?.content;
}

const STOPS: Record<HttpDriverName, [string, string]> = {
  "anthropic": ["tool_use", "end_turn"],
  "openai": ["completed", "completed"],
  "openai-compatible": ["tool_calls", "stop"],
};

for (const name of ["anthropic", "openai", "openai-compatible"] as const) {
  Deno.test(`e2e ${name}: a watcher sees the scripted driver's frames, in its order`, async () => {
    const fake: FakeProvider = startFakeProvider({
      kind: FAKE_OF[name],
      apiKey: KEY,
      // A 429 first: retried with a trace line and no frame, so the stream is unchanged.
      turns: [
        { steps: [], fault: { kind: "status", status: 429, retryAfterSecs: 0 } },
        ...FAKE_TURNS,
      ],
    });
    try {
      const http = await run(
        manifest({
          driver: name,
          model: MODEL_OF[name],
          endpoint: fake.baseURL,
          api_key: "${FAKE_PROVIDER_KEY}",
        }),
        { env: { FAKE_PROVIDER_KEY: KEY } },
      );
      const scripted = await scriptedRun();

      const got = shape(http.events);
      assert.deepEqual(got, shape(scripted.events));
      // The shape is the one docs/protocol.md "Frames" lists, not merely equal to the scripted
      // driver's.
      assert.deepEqual(got, [
        "frame:connection-ack",
        "status:WORKING:inference turn 1",
        "frame:thinking",
        "frame:text",
        "frame:tool-call-started",
        "frame:tool-call-progress",
        "frame:text:final",
        "frame:artifact",
        "status:WORKING:inference turn 2",
        "frame:text",
        "frame:text:final",
        "artifact:response",
        "status:COMPLETED:task completed",
      ]);
      // Same keys, in the same order, on every frame.
      assert.deepEqual(
        frames(http.events).map((f) => Object.keys(f)),
        frames(scripted.events).map((f) => Object.keys(f)),
      );
      const hf = frames(http.events);
      const started = hf.find((f) => f.frame === "tool-call-started");
      assert.deepEqual(started, {
        frame: "tool-call-started",
        toolCallId: "call_e2e1",
        toolName: "bash",
      });
      const progress = hf.filter((f) => f.frame === "tool-call-progress");
      assert.equal(
        progress.at(-1)?.inputBytes,
        new TextEncoder().encode(JSON.stringify({ command: "echo sunny" })).length,
      );
      const artifact = hf.find((f) => f.frame === "artifact")!;
      const scriptedArtifact = frames(scripted.events).find((f) => f.frame === "artifact")!;
      assert.equal(artifact.toolCallId, "call_e2e1");
      assert.equal(artifact.content, scriptedArtifact.content);
      assert.match(String(artifact.content), /sunny/);

      // The provider saw: the 429'd call, then two turns; the second carries the system prompt
      // and the tool result exactly as the artifact frame showed it.
      assert.equal(fake.requests.length, 3);
      const second = fake.requests[2].body!;
      assert.equal(second.model, MODEL_OF[name]);
      assert.equal(toolResultSent(name, second), artifact.content);
      const sys = JSON.stringify(
        name === "anthropic" ? second.system : second.input ?? second.messages,
      );
      assert.ok(sys.includes(SYSTEM), sys);

      // The trace: the retry, two turns with the provider's usage and stop reasons.
      const retries = http.trace.filter((t) => t.event_type === "harness_retry");
      assert.equal(retries.length, 1);
      assert.match(String(retries[0].reason), /HTTP 429/);
      const inference = http.trace.filter((t) => t.event_type === "inference");
      assert.deepEqual(inference.map((t) => t.decision), ["tool_call", "end_turn"]);
      assert.deepEqual(inference.map((t) => t.stop_reason), STOPS[name]);
      assert.deepEqual(inference.map((t) => t.input_tokens), [120, 180]);
      assert.deepEqual(inference.map((t) => t.output_tokens), [30, 5]);
    } finally {
      await fake.close();
    }
  });
}

Deno.test("e2e anthropic: a rejected key fails the task with credential_rejected", async () => {
  const fake = startFakeProvider({ kind: "anthropic", apiKey: "the-right-key", turns: FAKE_TURNS });
  try {
    const r = await run(
      manifest({
        driver: "anthropic",
        model: MODEL_OF.anthropic,
        endpoint: fake.baseURL,
        api_key: KEY,
      }),
    );
    const last = r.events.at(-1)!;
    const status = (last.data.result as R).statusUpdate.status as {
      state: string;
      message: { parts: { text: string }[] };
    };
    assert.equal(status.state, "TASK_STATE_FAILED");
    const text = status.message.parts[0].text;
    assert.match(text, /^task failed \(credential_rejected\): .*HTTP 401/);
    assert.ok(!text.includes(KEY), text);
    assert.equal(fake.requests.length, 1);
    const failed = r.trace.find((t) => t.event_type === "task_failed");
    assert.equal(failed?.cause, "credential_rejected");
  } finally {
    await fake.close();
  }
});

Deno.test("e2e openai-compatible: a turn cut at max_tokens keeps its text with W-RUN-001", async () => {
  const fake = startFakeProvider({
    kind: "openai-chat",
    turns: [{ steps: [{ text: "The weather in Paris is" }], stop: "max_tokens" }],
  });
  const m = manifest({ driver: "openai-compatible", model: "llama3.2", endpoint: fake.baseURL });
  const cap = await startCapsule({
    manifest: { ...m, lifecycle: { task_acceptance: "single", after_task: "exit" } },
    args: ["--task", TASK],
  });
  try {
    const timer = setTimeout(() => cap.kill(), 20_000);
    const done = await cap.finished();
    clearTimeout(timer);
    assert.match(done.stderr, /warning\[W-RUN-001\]: .*max_tokens output cap of 512 tokens/);
    const result = await Deno.readTextFile(`${cap.ready.workdir}/out/result.txt`);
    assert.ok(result.startsWith("The weather in Paris is"), result);
    assert.equal(fake.requests[0].body?.max_tokens, 512);
  } finally {
    await cap.close();
    await fake.close();
  }
});

Deno.test("e2e examples: each example capsule runs a tool-calling task with its one variable set", async () => {
  const examples = [
    { dir: "anthropic", kind: "anthropic", env: { ANTHROPIC_API_KEY: KEY } },
    { dir: "openai", kind: "openai-responses", env: { OPENAI_API_KEY: KEY } },
    { dir: "ollama", kind: "openai-chat", env: { OLLAMA_MODEL: "llama3.2" } },
  ] as const;
  for (const ex of examples) {
    const fake = startFakeProvider({
      kind: ex.kind,
      apiKey: ex.dir === "ollama" ? undefined : KEY,
      turns: [
        { steps: [{ toolCall: { id: "call_d", name: "date", input: { command: "+%Y" } } }] },
        { steps: [{ text: "It is the current year." }] },
      ],
    });
    const url = new URL(`../../../examples/${ex.dir}/murmur.yaml`, import.meta.url);
    const m = parseYaml(await Deno.readTextFile(url)) as Record<string, Record<string, unknown>>;
    // Only the address changes: the fake stands in for the provider.
    m.inference.endpoint = fake.baseURL;
    const cap = await startCapsule({ manifest: m, env: ex.env, args: ["--task", TASK] });
    try {
      const timer = setTimeout(() => cap.kill(), 20_000);
      const done = await cap.finished();
      clearTimeout(timer);
      assert.equal(done.code, 0, `${ex.dir}: ${done.stderr}`);
      assert.equal(fake.requests.length, 2, ex.dir);
      const result = await Deno.readTextFile(`${cap.ready.workdir}/out/result.txt`);
      assert.match(result, /current year/);
      const second = JSON.stringify(fake.requests[1].body);
      assert.ok(second.includes(String(new Date().getFullYear())), `${ex.dir}: ${second}`);
    } finally {
      await cap.close();
      await fake.close();
    }
  }
});
