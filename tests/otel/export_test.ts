/**
 * OpenTelemetry export (docs/opentelemetry.md, src/otel/): a real `mur run` of a scripted
 * session whose one task calls a tool, is reopened by an on-task-end hook, and then fails,
 * exporting to a real OTLP/HTTP receiver on loopback (./receiver.ts). The span tree, the GenAI
 * attributes and the token counts are checked against the session's own trace.jsonl. Then the
 * same session with the collector down (a closed port) and stuck (a receiver that never answers):
 * the session ends with the same result, and the trace counts the spans it could not deliver.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { runMur } from "../helpers/mur.ts";
import { finishedWithin, hookScript, ofType, type Rec, traceOf } from "../session/helpers.ts";
import { closedPort, type ReceivedSpan, startReceiver } from "./receiver.ts";

const SCRIPT = {
  tasks: [{
    match: "report",
    turns: [
      {
        steps: [
          { text: "Looking. " },
          { tool_call: { id: "toolu_ls", name: "bash", input: { command: "echo counted" } } },
          { usage: { input_tokens: 120, output_tokens: 30 } },
        ],
      },
      { steps: [{ text: "draft" }, { usage: { input_tokens: 170, output_tokens: 5 } }] },
      { steps: [{ error: "provider overloaded" }] },
    ],
  }],
};

/** Reopens the task once, when its answer is the draft. */
const FILES = {
  "hooks/review.sh": hookScript(`case "$in" in
  *'"result":"draft"'*) echo '{"reopen_task":"Check it again."}';;
  *) echo '{}';;
esac`),
};

function manifest(observability?: Rec): Rec {
  return {
    name: "reporter",
    version: "2.3.4",
    capabilities: { shell: { allow: ["bash"] } },
    hooks: [{
      name: "review",
      binding: "on-task-end",
      commit_policy: "reopen-task",
      command: ["./hooks/review.sh"],
    }],
    ...(observability && { observability }),
  };
}

interface Run {
  /** trace.jsonl as written (the capsule's folder is gone after the run). */
  traceText: string;
  code: number;
  stdout: string;
  stderr: string;
  trace: Rec[];
  result: string;
}

/** Runs the launch task to the end (after_task: exit) and reads what it left. */
async function run(o: { observability?: Rec; env?: Record<string, string> }): Promise<Run> {
  const cap = await startCapsule({
    manifest: manifest(o.observability),
    script: SCRIPT,
    files: FILES,
    args: ["--task", "write the report"],
    env: o.env,
  });
  try {
    const end = await finishedWithin(cap, 60_000);
    const workdir = cap.ready.workdir;
    return {
      traceText: await Deno.readTextFile(`${workdir}/trace.jsonl`),
      code: end.code,
      stdout: end.stdout,
      stderr: end.stderr,
      trace: await traceOf(workdir),
      result: await Deno.readTextFile(`${workdir}/out/result.txt`),
    };
  } finally {
    await cap.close();
  }
}

/** What a session did, with what differs between runs (ids, times) left out. */
function outcome(r: Run) {
  const end = ofType(r.trace, "task_end")[0];
  return {
    code: r.code,
    status: r.stdout.split("\n").find((l) => l.startsWith("status:")),
    result: r.result,
    lines: r.trace.map((l) => l.event_type).filter((t) => t !== "otel_export"),
    task_end: [end.exit_status, end.turns, end.input_tokens, end.output_tokens, end.reopen_count],
  };
}

function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  assertEquals(found.length, 1, `one ${name} span, got ${found.length}`);
  return found[0];
}

Deno.test("the span tree of a session with a tool call, a reopen and a failure, as the trace has it", async () => {
  const receiver = startReceiver();
  let r: Run;
  try {
    // The environment names the collector and a header, as an operator would set them.
    r = await run({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20t0k,x-team=agents",
      },
    });
  } finally {
    await receiver.close();
  }
  const spans = receiver.spans;
  const trace = r.trace;
  assertEquals(r.code, 1, "the task failed, so mur run exits 1");
  assert.ok(receiver.requests.length > 0);
  for (const q of receiver.requests) {
    assertEquals(q.path, "/v1/traces");
    assertEquals(q.headers.get("authorization"), "Bearer t0k");
    assertEquals(q.headers.get("x-team"), "agents");
    assertEquals(q.headers.get("content-type"), "application/json");
  }

  // One trace; the resource names the capsule.
  assertEquals(new Set(spans.map((s) => s.traceId)).size, 1);
  for (const s of spans) {
    assertEquals(s.resource["service.name"], "reporter");
    assertEquals(s.resource["service.version"], "2.3.4");
  }

  const start = ofType(trace, "session_start")[0];
  const taskStart = ofType(trace, "task_start")[0];
  const taskEnd = ofType(trace, "task_end")[0];
  const failed = ofType(trace, "task_failed")[0];
  const reopened = ofType(trace, "task_reopened")[0];
  const inferences = ofType(trace, "inference");
  const toolCall = ofType(trace, "tool_call")[0];
  const shell = ofType(trace, "shell")[0];
  assert.ok(failed && reopened && toolCall && shell, "the script did what the test needs");
  assertEquals(taskEnd.exit_status, "failed");
  assertEquals(taskEnd.reopen_count, 1);

  const session = one(spans, "capsule.session");
  assertEquals(session.parentSpanId, undefined);
  assertEquals(session.startMs, start.timestamp);
  assertEquals(session.attributes["mur.session.id"], r.trace[0].session_id);
  assertEquals(session.attributes["mur.session.exit_status"], "failed");
  assertEquals(session.status.code, 2);

  const task = one(spans, "capsule.task");
  assertEquals(task.parentSpanId, session.spanId);
  assertEquals([task.startMs, task.endMs], [taskStart.timestamp, taskEnd.timestamp]);
  assertEquals(task.attributes["gen_ai.operation.name"], "invoke_agent");
  assertEquals(task.attributes["gen_ai.agent.name"], "reporter");
  assertEquals(task.attributes["gen_ai.conversation.id"], taskStart.context_id);
  assertEquals(task.attributes["mur.task.id"], taskStart.task_id);
  assertEquals(task.attributes["mur.task.lane"], "user");
  assertEquals(task.attributes["mur.task.origin"], "user");
  assertEquals(task.attributes["mur.task.reopen_count"], 1);
  assertEquals(task.attributes["mur.task.exit_status"], "failed");
  assertEquals(task.status, { code: 2, message: failed.reason });
  assertEquals(task.attributes["error.type"], failed.error_code ?? failed.cause);

  // One inference span per inference line, in order, each a child of the task.
  const turns = spans.filter((s) => s.name === "capsule.inference")
    .sort((a, b) => Number(a.attributes["mur.turn"]) - Number(b.attributes["mur.turn"]));
  assertEquals(turns.length, inferences.length);
  assertEquals(inferences.length, 3);
  turns.forEach((span, i) => {
    const line = inferences[i];
    assertEquals(span.parentSpanId, task.spanId);
    assertEquals(span.endMs, line.timestamp);
    assertEquals(span.attributes["gen_ai.operation.name"], "chat");
    assertEquals(span.attributes["gen_ai.request.model"], line.model);
    assertEquals(span.attributes["gen_ai.response.finish_reasons"], [line.stop_reason]);
    assertEquals(span.attributes["gen_ai.usage.input_tokens"], line.input_tokens);
    assertEquals(span.attributes["gen_ai.usage.output_tokens"], line.output_tokens);
  });
  // The scripted usage, and the trace's sums, are what the spans say.
  assertEquals(turns.slice(0, 2).map((s) => s.attributes["gen_ai.usage.input_tokens"]), [120, 170]);
  const sum = (k: string) => turns.reduce((n, s) => n + Number(s.attributes[k] ?? 0), 0);
  assertEquals(sum("gen_ai.usage.input_tokens"), taskEnd.input_tokens);
  assertEquals(sum("gen_ai.usage.output_tokens"), taskEnd.output_tokens);
  // The failed turn is an error span with the trace's error.
  assertEquals(turns[2].status.code, 2);
  assertEquals(turns[2].attributes["error.type"], inferences[2].error_code);
  // A turn starts at the task's previous line (its start; the shell line of the turn before).
  const taskLines = trace.filter((l) => l.task_id === taskStart.task_id);
  const before = (line: Rec) => taskLines[taskLines.indexOf(line) - 1];
  assertEquals(before(inferences[0]), taskStart);
  assertEquals(before(inferences[1]), shell);
  assertEquals(turns[0].startMs, taskStart.timestamp);
  assertEquals(turns[1].startMs, shell.timestamp);

  // The tool call is the first turn's child, the shell command the tool call's.
  const tool = one(spans, "capsule.tool_call");
  assertEquals(tool.parentSpanId, turns[0].spanId);
  assertEquals(tool.attributes["gen_ai.operation.name"], "execute_tool");
  assertEquals(tool.attributes["gen_ai.tool.name"], "bash");
  assertEquals(tool.attributes["gen_ai.tool.call.id"], "toolu_ls");
  assertEquals(tool.attributes["mur.tool.duration_ms"], toolCall.duration_ms);
  assertEquals(tool.attributes["mur.tool.truncated"], false);
  assertEquals("truncated" in toolCall, false, "the line says truncated only when it was");
  assertEquals([tool.startMs, tool.endMs], [
    Number(toolCall.timestamp) - Number(toolCall.duration_ms),
    toolCall.timestamp,
  ]);
  const sh = one(spans, "capsule.shell");
  assertEquals(sh.parentSpanId, tool.spanId);
  assertEquals(sh.attributes["process.executable.name"], "bash");
  assertEquals(sh.attributes["process.exit.code"], 0);
  assertEquals(sh.attributes["mur.shell.stdout_bytes"], shell.stdout_bytes);
  // Content is off by default: no tool input, no command line, no task text.
  assertEquals(tool.attributes["gen_ai.tool.call.arguments"], undefined);
  assertEquals(sh.attributes["process.command_line"], undefined);
  assertEquals(task.attributes["gen_ai.input.messages"], undefined);

  // Each call of the on-task-end hook is a span under the task: the first answered reopen-task
  // (and the reopen is an event on the task span), the second, after the failure, none.
  const hooks = spans.filter((s) => s.name === "capsule.hook").sort((a, b) =>
    a.startMs - b.startMs
  );
  assertEquals(
    hooks.map((h) => [
      h.parentSpanId,
      h.attributes["mur.hook.name"],
      h.attributes["mur.hook.binding"],
      h.attributes["mur.hook.mode"],
      h.attributes["mur.hook.answer"],
    ]),
    [
      [task.spanId, "review", "on-task-end", "blocking", "reopen-task"],
      [task.spanId, "review", "on-task-end", "blocking", "none"],
    ],
  );
  assert.ok(hooks[0].endMs <= Number(reopened.timestamp), "the reopen follows the hook's answer");
  const reopenEvent = task.events.find((e) => e.name === "task_reopened");
  assertEquals(reopenEvent?.attributes, { "mur.hook.name": "review", "mur.task.reopen_number": 1 });

  // Every span arrived, and the trace says so just before session_end.
  const report = ofType(trace, "otel_export")[0];
  assertEquals(trace.at(-2), report);
  assertEquals(trace.at(-1)!.event_type, "session_end");
  assertEquals(report.endpoint, `${receiver.url}/v1/traces`);
  assertEquals([report.spans, report.exported, report.dropped], [spans.length, spans.length, 0]);
  assertEquals(spans.length, 9);
  assert.doesNotMatch(r.stderr, /W-OTEL-002/, "nothing dropped, nothing to say");
});

Deno.test("otel_content: true puts tool input, command lines and the task's text on the spans", async () => {
  const receiver = startReceiver();
  let r: Run;
  try {
    r = await run({ observability: { otel_endpoint: `${receiver.url}/`, otel_content: true } });
  } finally {
    await receiver.close();
  }
  const tool = one(receiver.spans, "capsule.tool_call");
  assertEquals(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"])), {
    command: "echo counted",
  });
  assertEquals(
    one(receiver.spans, "capsule.shell").attributes["process.command_line"],
    "echo counted",
  );
  const task = one(receiver.spans, "capsule.task");
  assertEquals(JSON.parse(String(task.attributes["gen_ai.input.messages"])), [
    { role: "user", parts: [{ type: "text", content: "write the report" }] },
  ]);
  const reopen = task.events.find((e) => e.name === "task_reopened");
  assertEquals(reopen?.attributes["mur.hook.reason"], "Check it again.");
  assertEquals(ofType(r.trace, "otel_export")[0].dropped, 0);
});

Deno.test("a collector that is down or never answers: same session, same result, the drops counted", async () => {
  const baseline = await run({});
  assertEquals(ofType(baseline.trace, "otel_export").length, 0, "no collector named, no export");

  const down = await run({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort()}` },
  });

  const stuck = startReceiver({ hang: true });
  let hung: Run;
  try {
    hung = await run({ observability: { otel_endpoint: stuck.url } });
    assert.ok(stuck.requests.length > 0, "the stuck collector was asked");
  } finally {
    await stuck.close();
  }

  for (const [what, r] of [["down", down], ["stuck", hung]] as const) {
    assertEquals(outcome(r), outcome(baseline), `collector ${what}: the session is unchanged`);
    const report = ofType(r.trace, "otel_export")[0];
    assert.ok(report, `collector ${what}: the trace has the otel_export line`);
    assertEquals(r.trace.at(-1)!.event_type, "session_end");
    assertEquals(report.exported, 0, `collector ${what}`);
    assertEquals(report.spans, 9, `collector ${what}`);
    assertEquals(report.dropped, 9, `collector ${what}`);
    // One line on stderr says so, as push does for what it could not deliver.
    assertEquals(
      r.stderr.split("\n").filter((l) => l.startsWith("warning[W-OTEL-002]")),
      [
        `warning[W-OTEL-002]: 9 of 9 OpenTelemetry spans were not exported to ${report.endpoint} (collector unreachable, refused or too slow); the trace's otel_export line counts them`,
      ],
      `collector ${what}`,
    );
  }
  assert.doesNotMatch(baseline.stderr, /W-OTEL-002/);

  // `mur trace` says it too.
  const dir = await Deno.makeTempDir({ prefix: "mur-otel-trace-" });
  await Deno.writeTextFile(`${dir}/trace.jsonl`, down.traceText);
  const mur = async (...args: string[]) =>
    (await runMur({ args: ["trace", ...args, `${dir}/trace.jsonl`], env: { NO_COLOR: "1" } }))
      .stdout;
  const endpoint = ofType(down.trace, "otel_export")[0].endpoint;
  const show = await mur("show");
  assert.ok(
    show.includes(`OpenTelemetry\n  9 spans to ${endpoint}: 0 exported, 9 dropped`),
    show,
  );
  const steps = (await mur("steps")).split("\n");
  assert.ok(steps.includes("  otel_export  9 spans, 0 exported, 9 dropped"), steps.join("\n"));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("mur run -v names where spans go, and where that came from", async () => {
  const receiver = startReceiver();
  const dir = await Deno.makeTempDir({ prefix: "mur-otel-v-" });
  try {
    const out = await runMur({
      args: [
        "run",
        "--manifest",
        new URL("../../examples/hello", import.meta.url).pathname,
        "--task",
        "hi",
        "--workdir",
        dir,
        "-v",
      ],
      env: { NO_COLOR: "1", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const lines = out.stdout.split("\n");
    assertEquals(out.code, 0, out.stderr);
    assert.ok(
      lines.includes(`otel: ${receiver.url}/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT)`),
      lines.join("\n"),
    );
    assert.ok(receiver.spans.some((s) => s.name === "capsule.session"));
  } finally {
    await receiver.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a tool call whose output was cut: truncated on its trace line and on its span", async () => {
  const receiver = startReceiver();
  try {
    const cap = await startCapsule({
      manifest: {
        name: "big",
        version: "1.0.0",
        capabilities: { shell: { allow: ["bash"] } },
        observability: { otel_endpoint: receiver.url },
      },
      script: {
        tasks: [{
          turns: [
            {
              steps: [{
                tool_call: {
                  id: "toolu_big",
                  name: "bash",
                  input: { command: "head -c 40000 /dev/zero | tr '\\0' a; echo" },
                },
              }],
            },
            { steps: [{ text: "done" }] },
          ],
        }],
      },
      args: ["--task", "print a lot"],
    });
    let trace: Rec[];
    try {
      assertEquals((await finishedWithin(cap, 60_000)).code, 0);
      trace = await traceOf(cap.ready.workdir);
    } finally {
      await cap.close();
    }
    const [big] = ofType(trace, "tool_call");
    assertEquals(big.truncated, true);
    const span = receiver.spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "toolu_big");
    assertEquals(span?.attributes["mur.tool.truncated"], true);
  } finally {
    await receiver.close();
  }
});
