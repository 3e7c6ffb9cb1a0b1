/** Contract §4: what a hook may print, and what is unreadable (a hook failure, not an arm). */
import assert from "node:assert/strict";
import { parseHookOutput } from "../../src/hooks/output.ts";

Deno.test("hook output: none, every arm, and what cannot be read", () => {
  assert.deepEqual(parseHookOutput("{}\n"), { arm: "none" });
  assert.deepEqual(parseHookOutput('{"none":true}'), { arm: "none" });
  assert.deepEqual(parseHookOutput('{"reopen_task":"again"}'), {
    arm: "reopen-task",
    feedback: "again",
  });
  assert.deepEqual(parseHookOutput('{"seed_context":[{"role":"user","content":"m"}]}'), {
    arm: "seed-context",
    messages: [{ role: "user", content: "m" }],
  });
  assert.deepEqual(parseHookOutput('{"replace_context":[{"role":"assistant","content":"s"}]}'), {
    arm: "replace-context",
    messages: [{ role: "assistant", content: "s" }],
  });
  assert.deepEqual(parseHookOutput('{"deny":"no"}'), { arm: "deny", reason: "no" });
  assert.deepEqual(parseHookOutput('{"artifact":{"k":1}}'), { arm: "artifact", json: { k: 1 } });
  for (
    const [out, why] of [
      ["", /printed nothing/],
      ["nope", /not one JSON object/],
      ["[1]", /not an object/],
      ['{"deny":"a","artifact":{}}', /sets deny and artifact/],
      ['{"reopen_task":3}', /reopen_task/],
      ['{"seed_context":[{"role":"system","content":"x"}]}', /seed_context\.0\.role/],
      ['{"surprise":1}', /unknown key surprise/],
      ['{"none":false}', /none/],
    ] as const
  ) {
    const r = parseHookOutput(out);
    assert.ok("unreadable" in r, out);
    assert.match((r as { unreadable: string }).unreadable, why, out);
  }
});
