/**
 * Token accounting (driver usage, else the estimate) in inference, task_end and session_end, and
 * inference.max_session_tokens as a spend ceiling (docs/manifest.md "inference"): a refused call is
 * never sent, the task fails with the refusal, result.txt says `stopped: spend ceiling reached: …
 * retrying will not get past it`, and `status: spend_ceiling_reached`.
 */
import assert from "node:assert/strict";
import { ofType, runLaunch } from "./helpers.ts";

Deno.test("token accounting: driver usage per turn, summed in task_end and session_end", async () => {
  const run = await runLaunch({
    manifest: { name: "tokens", version: "0.1.0" },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{ tool_call: { id: "c", name: "none", input: {} } }, {
              usage: { input_tokens: 120, output_tokens: 30 },
            }],
          },
          { steps: [{ text: "ok" }, { usage: { input_tokens: 200, output_tokens: 5 } }] },
        ],
      }],
    },
    task: "count",
  });
  try {
    assert.equal(run.code, 0);
    assert.deepEqual(
      ofType(run.trace, "inference").map((e) => [e.input_tokens, e.output_tokens]),
      [[120, 30], [200, 5]],
    );
    const end = ofType(run.trace, "task_end")[0];
    assert.deepEqual([end.input_tokens, end.output_tokens], [320, 35]);
    const s = ofType(run.trace, "session_end")[0];
    assert.deepEqual([s.total_input_tokens, s.total_output_tokens, s.total_turns], [320, 35, 2]);
  } finally {
    await run.cleanup();
  }
});

Deno.test("spend ceiling: the call that would cross inference.max_session_tokens is refused and never sent", async () => {
  const run = await runLaunch({
    manifest: {
      name: "spend",
      version: "0.1.0",
      inference: { max_session_tokens: 360, max_tokens: 50 },
    },
    script: {
      tasks: [{
        turns: [
          {
            steps: [{ tool_call: { id: "c", name: "none", input: {} } }, {
              usage: { input_tokens: 300, output_tokens: 20 },
            }],
          },
          { steps: [{ text: "never sent" }] },
        ],
      }],
    },
    task: "spend it",
    args: [],
  });
  try {
    assert.equal(run.code, 1);
    assert.match(
      run.result,
      /^stopped: spend ceiling reached: this session has used 320 of the 360 tokens inference\.max_session_tokens allows, and the next inference call could need \d+ more; .*retrying will not get past it$/,
    );
    assert.equal(ofType(run.trace, "inference").length, 1, "the refused call was never sent");
    const hit = ofType(run.trace, "spend_ceiling_reached")[0];
    assert.equal(hit.limit, "session");
    assert.equal(hit.ceiling, 360);
    assert.equal(hit.used, 320);
    assert.ok((hit.requested as number) > 40);
    assert.equal(hit.parent_id, ofType(run.trace, "inference")[0].event_id);
    assert.equal(ofType(run.trace, "task_end")[0].exit_status, "spend_ceiling_reached");
    assert.equal(ofType(run.trace, "session_end")[0].exit_status, "spend_ceiling_reached");
    assert.match(
      run.stderr,
      /error\[E-RUN-040\]: the launch task tsk_[0-9a-f]{32} ended spend_ceiling_reached: stopped: spend ceiling reached/,
    );
  } finally {
    await run.cleanup();
  }
});
