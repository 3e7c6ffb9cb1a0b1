import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { type Out, WatchRenderer } from "../../src/watch/render.ts";
import { artifactLines, responseLines, unfence } from "../../src/watch/format.ts";
import { artifact, connectionFrame, responseArtifact, status, taskFrame } from "./fake_door.ts";

const T1 = "tsk_0199c4e2f1b7712a9d3e4f5061728394";
const T2 = "tsk_0199c4e2f1b7712a9d3e4f5061728395";
const C1 = "ctx_0199c4e2f1b7712a9d3e4f50617283a1";
const C2 = "ctx_0199c4e2f1b7712a9d3e4f50617283b2";

function render(r: WatchRenderer, events: unknown[]): { stdout: string; stderr: string } {
  const outs: Out[] = [];
  for (const e of events) outs.push(...r.handle(e));
  outs.push(...r.finish());
  return {
    stdout: outs.filter((o) => o.to === "stdout").map((o) => o.text).join(""),
    stderr: outs.filter((o) => o.to === "stderr").map((o) => o.text).join(""),
  };
}

Deno.test("status lines use murmur's words; a terminal status stands alone", () => {
  const { stdout } = render(new WatchRenderer(), [
    status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"),
    status(T1, C1, "TASK_STATE_INPUT_REQUIRED", "Which city?"),
    status(T1, C1, "TASK_STATE_WORKING", "resumed"),
    status(T1, C1, "TASK_STATE_CANCELED", "task canceled"),
  ]);
  assertEquals(
    stdout,
    "[working] inference turn 1\n[input-required] Which city?\n[working] resumed\n[canceled]\n",
  );
});

Deno.test("status lines name their task once a second task shows up, or always with labels", () => {
  const T3 = "tsk_0199c4e2f1b7712a9d3e4f50617283ff";
  const events = [
    status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"),
    taskFrame(T1, C1, { frame: "text", text: "one\n", final: false }),
    status(T2, C1, "TASK_STATE_CANCELED", "task canceled before it started"),
    status(T1, C1, "TASK_STATE_COMPLETED", "task completed"),
    status(T3, C1, "TASK_STATE_WORKING", "inference turn 1"),
  ];
  assertEquals(
    render(new WatchRenderer(), events).stdout,
    [
      "[working] inference turn 1",
      "one",
      "[tsk 728395] [canceled]",
      "[tsk 728394] [completed]",
      "[tsk 7283ff] [working] inference turn 1",
      "",
    ].join("\n"),
  );
  assertEquals(
    render(new WatchRenderer({ labels: true }), events).stdout.split("\n").slice(0, 2),
    ["[tsk 728394] [working] inference turn 1", "one"],
  );
  // A queued task's ending is named even when it is the only task the watch met.
  assertEquals(
    render(new WatchRenderer(), [status(T2, C1, "TASK_STATE_REJECTED", "task rejected")]).stdout,
    "[tsk 728395] [rejected]\n",
  );
});

Deno.test("text prints as it arrives and the next line starts on a new line", () => {
  const r = new WatchRenderer();
  assertEquals(r.handle(taskFrame(T1, C1, { frame: "text", text: "Hel", final: false })), [
    { to: "stdout", text: "Hel" },
  ]);
  assertEquals(r.handle(taskFrame(T1, C1, { frame: "text", text: "lo", final: false })), [
    { to: "stdout", text: "lo" },
  ]);
  // final:true with empty text writes nothing and ends nothing
  assertEquals(r.handle(taskFrame(T1, C1, { frame: "text", text: "", final: true })), []);
  assertEquals(r.handle(status(T1, C1, "TASK_STATE_WORKING", "inference turn 2")), [
    { to: "stdout", text: "\n" },
    { to: "stdout", text: "[working] inference turn 2\n" },
  ]);
  // text that ended its line needs no extra newline
  r.handle(taskFrame(T1, C1, { frame: "text", text: "done\n", final: false }));
  assertEquals(r.handle(status(T1, C1, "TASK_STATE_WORKING", "inference turn 3")), [
    { to: "stdout", text: "[working] inference turn 3\n" },
  ]);
});

Deno.test("the response artifact is held and printed under [completed]", () => {
  const r = new WatchRenderer();
  assertEquals(r.handle(responseArtifact(T1, C1, "line one\nline two\n")), []);
  assertEquals(
    render(r, [status(T1, C1, "TASK_STATE_COMPLETED", "task completed")]).stdout,
    "[completed]\n  line one\n  line two\n",
  );
  // another task's completion does not pick up a response it does not own
  const r2 = new WatchRenderer();
  r2.handle(responseArtifact(T1, C1, "mine"));
  assertEquals(
    render(r2, [status(T2, C1, "TASK_STATE_COMPLETED")]).stdout,
    "[tsk 728395] [completed]\n",
  );
});

Deno.test("hidden frames, unknown frames and members write nothing", () => {
  const { stdout, stderr } = render(new WatchRenderer(), [
    taskFrame(T1, C1, { frame: "thinking", text: "hmm", final: false }),
    taskFrame(T1, C1, { frame: "tool-call-started", toolCallId: "toolu_01", toolName: "bash" }),
    taskFrame(T1, C1, { frame: "tool-call-progress", toolCallId: "toolu_01", inputBytes: 3 }),
    taskFrame(T1, C1, { frame: "quota", windows: [{ name: "five-hour", used: 0.4 }] }),
    taskFrame(T1, C1, { frame: "suggested-prompt", text: "Run the tests" }),
    taskFrame(T1, C1, { frame: "hologram", beams: 3 }),
    { task: { id: T1, contextId: C1, status: { state: "TASK_STATE_SUBMITTED" } } },
    { somethingNew: { x: 1 } },
    connectionFrame({ frame: "connection-ack", role: "observer", conversationMode: "stateless" }),
  ]);
  assertEquals(stdout, "");
  assertEquals(stderr, "");
});

Deno.test("a reopen-annotated status is a status, not a frame", () => {
  const ev = status(T1, C1, "TASK_STATE_WORKING", "reopened by hook review-gate") as {
    statusUpdate: Record<string, unknown>;
  };
  ev.statusUpdate.metadata = {
    "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1": { reopen: 1 },
  };
  assertEquals(
    render(new WatchRenderer(), [ev]).stdout,
    "[working] reopened by hook review-gate\n",
  );
});

Deno.test("gap, lagged and capsule-closed go to stderr", () => {
  const r = new WatchRenderer();
  const { stdout, stderr } = render(r, [
    connectionFrame({ frame: "gap", firstAvailableId: 37 }),
    taskFrame(T1, C1, { frame: "text", text: "partial", final: false }),
    connectionFrame({ frame: "lagged", missed: 40 }),
    connectionFrame({ frame: "capsule-closed" }),
  ]);
  assertEquals(stdout, "partial\n");
  assert(stderr.includes("firstAvailableId 37"), stderr);
  assert(stderr.includes("missed 40 events"), stderr);
  assert(stderr.endsWith("[murmur] capsule closed\n"), stderr);
  assert(r.closed);
});

Deno.test("artifact lines: bracket contents, unfenced content, continuation indent", () => {
  assertEquals(
    artifactLines(
      artifact({
        toolName: "bash",
        content:
          "<untrusted-content source=tool:bash>\nExit code: 3\nStdout:\nhello\n\n</untrusted-content>",
        fenceSource: "tool:bash",
        durationMs: 12,
        exitCode: 3,
        truncated: true,
      }) as never,
      false,
    ),
    ["[artifact] tool: bash [ok, exit 3, 12ms, truncated] | Exit code: 3", "  Stdout:", "  hello"],
  );
  assertEquals(
    artifactLines(
      artifact({ toolName: "my-hook", content: '{"reviewed":true}' }) as never,
      false,
    ),
    ['[artifact] tool: my-hook [ok] | {"reviewed":true}'],
  );
  assertEquals(
    artifactLines(
      artifact({ toolName: "x", content: "", isError: true, durationMs: 0 }) as never,
      false,
    ),
    ["[artifact] tool: x [error, 0ms]"],
  );
  // a note after the closer is kept; unfenced content is shown as it is
  assertEquals(
    unfence(
      "<untrusted-content source=member:a>\nhi\n</untrusted-content>\n[call-member] note",
      "member:a",
    ),
    "hi\n[call-member] note",
  );
  assertEquals(
    unfence("<untrusted-content source=tool:x>\nhi", "tool:x"),
    "<untrusted-content source=tool:x>\nhi",
  );
});

Deno.test("colour only when asked; control characters shown on a terminal only", () => {
  const plain = render(new WatchRenderer(), [status(T1, C1, "TASK_STATE_COMPLETED")]).stdout;
  assertEquals(plain, "[completed]\n");
  const coloured = render(new WatchRenderer({ color: true }), [
    status(T1, C1, "TASK_STATE_COMPLETED"),
  ]);
  assertEquals(coloured.stdout, "\x1b[32m[completed]\x1b[0m\n");
  const evil = taskFrame(T1, C1, { frame: "text", text: "a\x1b[2Jb\n", final: false });
  assertEquals(render(new WatchRenderer({ terminal: true }), [evil]).stdout, "a^[[2Jb\n");
  assertEquals(render(new WatchRenderer(), [evil]).stdout, "a\x1b[2Jb\n");
});

Deno.test("threaded sessions label every line with its context", () => {
  const { stdout } = render(new WatchRenderer(), [
    connectionFrame({ frame: "connection-ack", role: "observer", conversationMode: "threaded" }),
    status(T1, C1, "TASK_STATE_WORKING", "inference turn 1"),
    taskFrame(T1, C1, { frame: "text", text: "alpha ", final: false }),
    status(T2, C2, "TASK_STATE_WORKING", "inference turn 1"),
    taskFrame(T2, C2, { frame: "text", text: "beta\ngamma", final: false }),
    taskFrame(T1, C1, { frame: "text", text: "more", final: false }),
    taskFrame(T1, C1, { frame: "text", text: " again\n", final: false }),
    responseArtifact(T1, C1, "the answer"),
    status(T1, C1, "TASK_STATE_COMPLETED", "task completed"),
  ]);
  assertEquals(
    stdout,
    [
      "[ctx 7283a1] [working] inference turn 1",
      "[ctx 7283a1] alpha ",
      "[ctx 7283b2] [tsk 728395] [working] inference turn 1",
      "[ctx 7283b2] beta",
      "[ctx 7283b2] gamma",
      "[ctx 7283a1] more again",
      "[ctx 7283a1] [tsk 728394] [completed]",
      "[ctx 7283a1]   the answer",
      "",
    ].join("\n"),
  );
});

Deno.test("the response wraps to a terminal's width, and is kept whole in a pipe", () => {
  const text = "one two three four five six seven";
  assertEquals(responseLines(text), ["  one two three four five six seven"]);
  assertEquals(responseLines(text, 16), ["  one two three", "  four five six", "  seven"]);
});

Deno.test("a failed or canceled task's reason goes to stderr, its [<state>] alone on stdout; input-required names the command that answers", () => {
  const r = new WatchRenderer({ answerCommand: (id) => `mur answer ses_x ${id.slice(-6)} TEXT` });
  const { stdout, stderr } = render(r, [
    status(T1, C1, "TASK_STATE_INPUT_REQUIRED", "Which branch should I deploy?"),
    status(T1, C1, "TASK_STATE_FAILED", "task failed (driver_error): provider overloaded"),
    status(T2, C1, "TASK_STATE_CANCELED", "task canceled"),
    status(T2, C1, "TASK_STATE_COMPLETED", "task completed"),
  ]);
  assertEquals(stdout.split("\n").map((l) => l.replace(/^\[tsk \w+\] /, "")), [
    "[input-required] Which branch should I deploy?",
    "[failed]",
    "[canceled]",
    "[completed]",
    "",
  ]);
  assertEquals(
    stderr,
    [
      "[murmur] tsk 728394 waits for input; answer with `mur answer ses_x 728394 TEXT`",
      "[murmur] tsk 728394 failed: task failed (driver_error): provider overloaded",
      "[murmur] tsk 728395 canceled: task canceled",
      "",
    ].join("\n"),
  );
  // Without a command to give (a renderer told none), input-required adds nothing.
  assertEquals(
    render(new WatchRenderer(), [status(T1, C1, "TASK_STATE_INPUT_REQUIRED", "Which?")]).stderr,
    "",
  );
});
