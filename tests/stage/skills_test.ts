/**
 * Skills on the wire (docs/manifest.md "artifacts"): a real `mur run` on the scripted model calls an operator
 * skill, a runtime skill an on-stage hook staged, and a runtime skill the model's own shell call
 * wrote during the task, in one task. The stream's artifact frames carry seed 000's toolName /
 * fenceSource / isError / exitCode; the trace has one `skill_call` per call with its origin and
 * trust, and none counted as a tool call; the conversation record shows the runtime skills'
 * text reached the model fenced and the operator's did not; `mur trace show` counts them apart.
 */
import assert from "node:assert/strict";
import { startCapsule } from "../helpers/capsule.ts";
import { readConversation } from "../helpers/conversation.ts";
import { runMur } from "../cli/helpers.ts";
import { finishedWithin, streamTask } from "../session/helpers.ts";
import {
  artifactFrames,
  GUIDE,
  NOTES,
  readTrace,
  type Rec,
  SKILL_ARTIFACTS,
  skillFiles,
} from "./helpers.ts";
import { ARTIFACT_FRAME_KEYS } from "../helpers/sse.ts";

const LATE = "# Late skill\n\nWritten during the task.\n";

const fenced = (name: string, text: string) =>
  `<untrusted-content source=skill:${name}>\n${text}\n</untrusted-content>`;

Deno.test("an operator skill and runtime skills in one task: frames, skill_call lines, fencing", async () => {
  const cap = await startCapsule({
    manifest: {
      name: "skills",
      version: "0.1.0",
      lifecycle: { task_acceptance: "single" },
      capabilities: { shell: { allow: ["sh"] } },
      artifacts: SKILL_ARTIFACTS,
    },
    files: skillFiles(),
    script: {
      tasks: [{
        turns: [
          {
            steps: [
              { tool_call: { id: "toolu_op", name: "style-guide" } },
              { tool_call: { id: "toolu_rt", name: "release-notes" } },
              {
                tool_call: {
                  id: "toolu_sh",
                  name: "sh",
                  input: {
                    command: `mkdir -p tools/late && printf '${
                      LATE.replaceAll("\n", "\\n")
                    }' > tools/late/skill.md`,
                  },
                },
              },
            ],
          },
          { steps: [{ tool_call: { id: "toolu_late", name: "late" } }] },
          { steps: [{ text: "read them all" }] },
        ],
      }],
    },
  });
  try {
    const events = await streamTask(cap, "read the skills");
    const fin = await finishedWithin(cap);
    assert.equal(fin.code, 0, fin.stderr);
    const dir = cap.ready.workdir;
    const trace = await readTrace(dir);
    const skillCalls = trace.filter((e) => e.event_type === "skill_call");
    const taskId = trace.find((e) => e.event_type === "task_start")!.task_id;

    // One skill_call per skill call, each with the listed fields and its origin and trust.
    const fields = (e: Rec) => ({
      turn: e.turn,
      task_id: e.task_id,
      skill_name: e.skill_name,
      output_bytes: e.output_bytes,
      status: e.status,
      origin: e.origin,
      trust: e.trust,
    });
    const bytes = (s: string) => new TextEncoder().encode(s).length;
    assert.deepEqual(skillCalls.map(fields), [
      {
        turn: 0,
        task_id: taskId,
        skill_name: "style-guide",
        output_bytes: bytes(GUIDE),
        status: "ok",
        origin: "operator",
        trust: "trusted",
      },
      {
        turn: 0,
        task_id: taskId,
        skill_name: "release-notes",
        output_bytes: bytes(fenced("release-notes", NOTES)),
        status: "ok",
        origin: "runtime",
        trust: "untrusted",
      },
      {
        turn: 1,
        task_id: taskId,
        skill_name: "late",
        output_bytes: bytes(fenced("late", LATE)),
        status: "ok",
        origin: "runtime",
        trust: "untrusted",
      },
    ]);
    for (const e of skillCalls) {
      assert.deepEqual(
        Object.keys(e).slice(5),
        [
          "turn",
          "task_id",
          "skill_name",
          "output_bytes",
          "duration_ms",
          "status",
          "origin",
          "trust",
        ],
      );
    }
    // Skill calls are not tool calls: one tool_call (the shell), and the totals say 1.
    assert.deepEqual(trace.filter((e) => e.event_type === "tool_call").map((e) => e.tool_name), [
      "sh",
    ]);
    assert.equal(trace.find((e) => e.event_type === "task_end")!.tool_calls, 1);
    assert.equal(trace.find((e) => e.event_type === "session_end")!.total_tool_calls, 1);
    const declared = trace.find((e) => e.event_type === "session_start")!.tools_declared;
    assert.deepEqual(declared, ["sh", "style-guide", "release-notes"]);

    // The frames off the wire: every key, in the seed's order, with the seed's values.
    const frames = artifactFrames(events);
    assert.deepEqual(frames.map((f) => f.toolName), ["style-guide", "release-notes", "sh", "late"]);
    for (const f of frames) assert.deepEqual(Object.keys(f), ARTIFACT_FRAME_KEYS);
    const byName = (n: string) => frames.find((f) => f.toolName === n)!;
    const durationOf = (n: string) => skillCalls.find((e) => e.skill_name === n)!.duration_ms;
    assert.deepEqual(byName("style-guide"), {
      frame: "artifact",
      toolName: "style-guide",
      content: GUIDE,
      fenceSource: null,
      toolCallId: "toolu_op",
      isError: false,
      durationMs: durationOf("style-guide"),
      exitCode: null,
      truncated: false,
      attachments: [],
    });
    assert.deepEqual(byName("release-notes"), {
      frame: "artifact",
      toolName: "release-notes",
      content: fenced("release-notes", NOTES),
      fenceSource: "skill:release-notes",
      toolCallId: "toolu_rt",
      isError: false,
      durationMs: durationOf("release-notes"),
      exitCode: null,
      truncated: false,
      attachments: [],
    });
    assert.equal(byName("late").fenceSource, "skill:late");
    assert.equal(byName("late").content, fenced("late", LATE));
    assert.equal(byName("sh").fenceSource, "tool:sh");

    // What the model received: the conversation record's tool results.
    const ctx = trace.find((e) => e.event_type === "task_start")!.context_id;
    const record = await readConversation(dir, ctx);
    const results = record.filter((m) => m.role === "tool").flatMap((m) => m.results);
    const sent = (n: string) => results.find((r) => r.toolName === n).content;
    assert.equal(sent("style-guide"), GUIDE);
    assert.ok(!sent("style-guide").includes("untrusted-content"));
    assert.equal(sent("release-notes"), fenced("release-notes", NOTES));
    assert.equal(sent("late"), fenced("late", LATE));

    // mur trace show: a Skill calls section apart from Tool calls.
    const show = await runMur(["trace", "show", dir]);
    assert.equal(show.code, 0, show.stderr);
    const lines = show.stdout.split("\n");
    const at = (title: string) => lines.indexOf(title);
    assert.ok(at("Skill calls") > at("Tool calls"), show.stdout);
    const toolSection = lines.slice(at("Tool calls") + 1, at("Skill calls"));
    assert.equal(toolSection.length, 1, show.stdout);
    assert.match(toolSection[0], /turn 1 {2}sh {2}ok/);
    const skillSection = lines.slice(at("Skill calls") + 1, at("Skill calls") + 5);
    assert.equal(skillSection[0], "  count: 3");
    assert.match(
      skillSection[1],
      /^ {2}turn 1 {2}style-guide {2}operator\/trusted {2}ok {2}\d+ bytes/,
    );
    assert.match(skillSection[2], /^ {2}turn 1 {2}release-notes {2}runtime\/untrusted {2}ok/);
    assert.match(skillSection[3], /^ {2}turn 2 {2}late {2}runtime\/untrusted {2}ok/);
  } finally {
    await cap.close();
  }
});
