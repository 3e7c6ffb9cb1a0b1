/**
 * A launch with no task (no `--task`, no task.md) waits for one on its door; when none comes in
 * `MURMUR_A2A_TIMEOUT_SECS` the session ends ok, and stderr says no task came (W-RUN-004), so
 * an empty `status: ok` is not mistaken for work done. A launch that ran a task says nothing.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { spawnRun } from "./helpers.ts";

const MANIFEST = { name: "idle", version: "0.1.0", inference: { driver: "scripted" } };

Deno.test("no task came: the session ends ok and W-RUN-004 says it waited and ran nothing", async () => {
  const run = await spawnRun({ manifest: MANIFEST, env: { MURMUR_A2A_TIMEOUT_SECS: "0.3" } });
  try {
    const end = await run.end(60_000);
    assertEquals(end.code, 0, end.stderr);
    assert.match(end.stdout, /\nstatus: ok\n$/);
    assertEquals(
      end.stderr.split("\n").filter((l) => l.startsWith("warning[W-RUN-004]")),
      [
        "warning[W-RUN-004]: no task came: the session waited 0.3 s for one (no --task, no task.md, nothing sent to its door) and ended without running any; give --task TEXT, or send a task sooner (MURMUR_A2A_TIMEOUT_SECS sets the wait)",
      ],
    );
  } finally {
    await run.close();
  }
});

Deno.test("a launch that ran its task does not say no task came", async () => {
  const run = await spawnRun({
    manifest: MANIFEST,
    args: ["--task", "hello"],
    env: { MURMUR_A2A_TIMEOUT_SECS: "0.3" },
  });
  try {
    const end = await run.end(60_000);
    assertEquals(end.code, 0, end.stderr);
    assert.doesNotMatch(end.stderr, /W-RUN-004/);
  } finally {
    await run.close();
  }
});

Deno.test("a wait for a first task cut short by a stop does not say it waited the whole timeout", async () => {
  // The default wait (30 s) is far longer than this test: the SIGTERM comes while it waits.
  const run = await spawnRun({ manifest: MANIFEST });
  try {
    assert.match((await run.line())!, /^murmur: url /);
    assert.match((await run.line())!, /^session: ses_/);
    run.signal("SIGTERM");
    const end = await run.end(60_000);
    assertEquals(end.code, 0, end.stderr);
    assert.match(end.stdout, /status: ok\n$/);
    assert.doesNotMatch(end.stderr, /W-RUN-004/);
  } finally {
    await run.close();
  }
});

Deno.test("MURMUR.md of a launch without a task lists no task.md; a context budget that is set is in tokens", async () => {
  const run = await spawnRun({
    manifest: { ...MANIFEST, context: { max_tokens: 50_000 } },
    env: { MURMUR_A2A_TIMEOUT_SECS: "0.3" },
    args: ["--json"],
  });
  try {
    const ready = JSON.parse((await run.line())!);
    const end = await run.end(60_000);
    assertEquals(end.code, 0, end.stderr);
    const md = await Deno.readTextFile(`${ready.workdir}/MURMUR.md`);
    assert.doesNotMatch(md, /task\.md/);
    assert.ok(md.includes("\n- Context budget: 50000 tokens (compaction not configured)\n"), md);
  } finally {
    await run.close();
  }
});
