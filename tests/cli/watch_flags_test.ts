/**
 * `mur watch`'s pipe flags (docs/watch.md "`mur watch` in pipes"), each through a real pipe: the real
 * `mur watch` process following a real capsule (`mur run` on the scripted model), its stdout a
 * pipe (or, for colour, a pty from util-linux `script`).
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import {
  mur,
  murOnTerminal,
  reach,
  runTasks,
  send,
  startMur,
  startPipes,
  TOOL_LINE,
  wireReplay,
} from "./pipes.ts";

const ESC = "\x1b[";
/** A watch that lost its capsule to `mur stop`: the seed's line, then the end told as an end. */
const LOST =
  /\nerror\[E-IO-003\]: connection to ses_[0-9a-f]{32} lost after event id \d+\n\[murmur\] the capsule ended: status ok \(its stream said so as it closed\)\n?$/;

interface Line {
  id: number | null;
  event: Record<string, Record<string, unknown>>;
}

/** Every stdout line parsed; fails unless each is one JSON object with exactly `id` and `event`. */
function ndjson(stdout: string): Line[] {
  assert(stdout.endsWith("\n"), `stdout does not end its last line: ${stdout.slice(-80)}`);
  return stdout.slice(0, -1).split("\n").map((l) => {
    const o = JSON.parse(l);
    assertEquals(Object.keys(o), ["id", "event"], l.slice(0, 200));
    return o as Line;
  });
}

function taskOf(e: Line["event"]): string | undefined {
  return (e.statusUpdate?.taskId ?? e.artifactUpdate?.taskId ?? e.task?.id) as string | undefined;
}

function stateOf(e: Line["event"]): string | undefined {
  return (e.statusUpdate?.status as { state?: string } | undefined)?.state;
}

Deno.test("--json: exactly one JSON object per line through a pipe, the events on the wire", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    const { weather } = await runTasks(cap);

    // --help says it
    const help = await mur(["watch", "--help"], env);
    assertEquals(help.code, 0);
    assert(help.stdout.includes("NDJSON: exactly one JSON object per line"), help.stdout);

    // The whole session, until the capsule stops: every line is an object, the numbered ones are
    // exactly the wire's events, ids 1..N with no hole.
    const full = startMur(["watch", "--json"], env);
    assert((await full.err.next(30_000))!.startsWith("[murmur] watching ses_"));
    const wire = await wireReplay(cap.base);
    const stop = await mur(["stop", "@1"], env);
    assertEquals(stop.code, 0, stop.stderr);
    const r = await full.result;
    assertEquals(r.code, 1);
    assert(LOST.test(r.stderr), r.stderr);
    const lines = ndjson(r.stdout);
    assertEquals(lines[0].id, null); // the connection-ack
    assert(JSON.stringify(lines[0].event).includes('"connection-ack"'), JSON.stringify(lines[0]));
    const numbered = lines.filter((l) => l.id !== null);
    assertEquals(numbered.map((l) => l.id), numbered.map((_, i) => i + 1));
    assertEquals(
      numbered.slice(0, wire.length).map((l) => ({ id: l.id, result: l.event })),
      wire,
    );

    // The tool's 16 KiB of multi-byte lines with quotes, tabs and backslashes is one line, and
    // decodes to the very text the tool printed.
    const art = numbered.find((l) => JSON.stringify(l.event).includes('"frame":"artifact"'));
    assert(art, "no artifact frame");
    const content = Object.values(
      art.event.statusUpdate.metadata as Record<string, { content?: string }>,
    )[0].content!;
    assert(content.split("\n").filter((l) => l === TOOL_LINE).length > 300, content.slice(0, 300));
    assert(numbered.some((l) => JSON.stringify(l.event).includes("Sunny in 東京 ✓")));
    assert(numbered.some((l) => taskOf(l.event) === weather));
  } finally {
    await cap.close();
  }
});

Deno.test("--color: auto colours a terminal only, NO_COLOR, always and never; --json never", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    const { fail } = await runTasks(cap);
    const args = ["watch", "--task", fail];
    const red = `${ESC}31m[failed]${ESC}0m`;

    const pipe = await mur(args, env);
    assertEquals([pipe.code, pipe.stdout], [0, "[working] inference turn 1\n[failed]\n"]);

    const always = await mur([...args, "--color", "always"], { ...env, NO_COLOR: "1" });
    assertEquals(always.code, 0);
    assertEquals(always.stdout, `${ESC}36m[working]${ESC}0m inference turn 1\n${red}\n`);

    const tty = await murOnTerminal(args, env);
    assertEquals([tty.code, tty.stdout], [
      0,
      `${ESC}36m[working]${ESC}0m inference turn 1\n${red}\n`,
    ]);
    // no-color.org: present and not empty
    const emptyNoColor = await murOnTerminal(args, { ...env, NO_COLOR: "" });
    assert(emptyNoColor.stdout.includes(red), emptyNoColor.stdout);
    const noColor = await murOnTerminal(args, { ...env, NO_COLOR: "1" });
    assertEquals(noColor.stdout, "[working] inference turn 1\n[failed]\n");
    const never = await murOnTerminal([...args, "--color", "never"], env);
    assertEquals(never.stdout, "[working] inference turn 1\n[failed]\n");

    const json = await mur([...args, "--json", "--color", "always"], env);
    assert(!json.stdout.includes("\x1b"), json.stdout);
    assertEquals(ndjson(json.stdout).map((l) => stateOf(l.event)).at(-1), "TASK_STATE_FAILED");

    const bad = await mur([...args, "--color", "sometimes"], env);
    assertEquals(bad.code, 2);
    assert(
      bad.stderr.startsWith(
        "error[E-CLI-003]: mur watch: --color 'sometimes' is not one of auto, always, never",
      ),
      bad.stderr,
    );
  } finally {
    await cap.close();
  }
});

Deno.test("--exit-status: 3 failed, 4 canceled, 0 completed; a lost connection after a failure is 3", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    const { weather, fail } = await runTasks(cap);
    assertEquals((await mur(["watch", "--task", fail, "--exit-status"], env)).code, 3);
    assertEquals((await mur(["watch", "--task", fail], env)).code, 0);
    assertEquals((await mur(["watch", "--task", weather, "--exit-status"], env)).code, 0);

    // A live task, canceled while the watch follows it.
    const slow = await send(cap, "slow one");
    await reach(cap, slow, "TASK_STATE_WORKING");
    const live = startMur(["watch", "--task", slow, "--exit-status"], env);
    assert((await live.err.next(30_000))!.startsWith("[murmur] watching ses_"));
    const cancel = await mur(["cancel", "@1", slow], env);
    assertEquals(cancel.code, 0, cancel.stderr);
    const r = await live.result;
    assertEquals(r.code, 4, r.stderr);
    assert(r.stdout.endsWith("[canceled]\n"), r.stdout);

    // Every task of the session: one failed, so the watch that loses its connection says 3, and
    // still prints E-IO-003; without --exit-status it is 1.
    const all = startMur(["watch", "--exit-status"], env);
    const plain = startMur(["watch"], env);
    assert((await all.err.next(30_000))!.startsWith("[murmur] watching ses_"));
    assert((await plain.err.next(30_000))!.startsWith("[murmur] watching ses_"));
    assertEquals((await mur(["stop", "@1"], env)).code, 0);
    const [a, p] = await Promise.all([all.result, plain.result]);
    assertEquals([a.code, p.code], [3, 1]);
    assert(LOST.test(a.stderr), a.stderr);
    assertEquals(a.stdout, p.stdout);
  } finally {
    await cap.close();
  }
});

Deno.test("--exit-status: a queued task rejected as the session ends is 3", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    // SIGTERM cancels the working task and rejects the queued one with a numbered status.
    const working = await send(cap, "slow 1");
    await reach(cap, working, "TASK_STATE_WORKING");
    const queued = await send(cap, "slow 2");
    const live = startMur(["watch", "--task", queued, "--exit-status"], env);
    assert((await live.err.next(30_000))!.startsWith("[murmur] watching ses_"));
    cap.kill("SIGTERM");
    const r = await live.result;
    assertEquals(r.code, 3, r.stderr);
    assertEquals(r.stdout.split("\n").filter((l) => l.startsWith("[")).at(-1), "[rejected]");
  } finally {
    await cap.close();
  }
});

Deno.test("--task: one task's lines, ending at its final status; an unknown task is refused", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    const { weather, fail } = await runTasks(cap);
    const w = await mur(["watch", "--task", weather], env);
    assertEquals(w.code, 0, w.stderr);
    const lines = w.stdout.split("\n");
    assertEquals(lines.slice(0, 2), ["[working] inference turn 1", "Let me check. "]);
    assert(lines[2].startsWith("[artifact] tool: bash [ok, exit 0, "), lines[2]);
    assertEquals(lines.slice(-5), [
      "[working] inference turn 2",
      "Sunny in 東京 ✓",
      "[completed]",
      "  Sunny in 東京 ✓",
      "",
    ]);
    assert(!w.stdout.includes("[failed]"), w.stdout);

    const f = await mur(["watch", "--task", fail, "--json"], env);
    const events = ndjson(f.stdout);
    assertEquals(events[0].id, null); // the connection-ack is the session's, kept
    assert(events.slice(1).every((l) => taskOf(l.event) === fail), f.stdout);
    assertEquals(stateOf(events.at(-1)!.event), "TASK_STATE_FAILED");

    // The label a status line shows ([tsk a1b2c3], the id's last 6 hex digits) names it too,
    // as it does for mur cancel.
    const byLabel = await mur(["watch", "--task", weather.slice(-6)], env);
    assertEquals(byLabel.code, 0, byLabel.stderr);
    assertEquals(byLabel.stdout, w.stdout);
    const noLabel = await mur(["watch", "--task", "ffff00"], env);
    assertEquals(noLabel.code, 1);
    assert(
      noLabel.stderr.startsWith(
        `error[E-RUN-048]: ${cap.ready.session_id} holds no task ending in ffff00`,
      ),
      noLabel.stderr,
    );

    const missing = "tsk_0199c4e2f1b7712a9d3e4f5061720000";
    const m = await mur(["watch", "--task", missing], env);
    assertEquals(m.code, 1);
    assertEquals(m.stdout, "");
    assert(
      m.stderr.startsWith(
        `error[E-RUN-048]: ${cap.ready.session_id} holds no task ${missing} (-32001 Task not found)`,
      ),
      m.stderr,
    );
  } finally {
    await cap.close();
  }
});

Deno.test("--since N replays after N; after eviction a gap, and --task ends from GetTask", async () => {
  const cap = await startPipes();
  const env = { MURMUR_HOME: cap.home };
  try {
    const { weather, fail } = await runTasks(cap);
    const full = await mur(["watch", "--json", "--task", fail], env);
    const since = ndjson(full.stdout).filter((l) => l.id !== null)[0].id!;
    const r = await mur(["watch", "--json", "--task", fail, "--since", String(since)], env);
    assertEquals(r.code, 0, r.stderr);
    const numbered = ndjson(r.stdout).filter((l) => l.id !== null);
    assert(numbered.every((l) => l.id! > since), r.stdout);
    assertEquals(
      numbered,
      ndjson(full.stdout).filter((l) => l.id !== null && l.id > since),
    );
    // the door was asked for exactly that
    assertEquals(
      (await wireReplay(cap.base, since)).filter((e) => taskOf(e.result as Line["event"]) === fail)
        .map((e) => e.id),
      numbered.map((l) => l.id),
    );

    for (const bad of ["-1", "abc", "1.5", "", "99999999999999999999"]) {
      const b = await mur(["watch", `--since=${bad}`], env);
      assertEquals(b.code, 2, `--since ${bad}: ${b.stderr}`);
      assert(
        b.stderr.startsWith(`error[E-CLI-003]: mur watch: --since '${bad}' is not an event id`),
        b.stderr,
      );
    }

    // 600 text frames push the first tasks out of the 512-event replay.
    const chatty = await send(cap, "chatty");
    await reach(cap, chatty, "TASK_STATE_COMPLETED");
    const g = await mur(["watch", "--task", weather, "--since", "1", "--exit-status"], env);
    assertEquals(g.code, 0, g.stderr);
    assertEquals(g.stdout, "");
    const errs = g.stderr.split("\n");
    assert(
      /^\[murmur\] warning: gap: events before firstAvailableId \d+ are no longer in the capsule's replay buffer and are not shown$/
        .test(errs[1]),
      g.stderr,
    );
    assertEquals(
      errs.at(-1),
      `[murmur] task ${weather} ended completed (GetTask); this watch did not receive its final status`,
    );
    const gf = await mur(["watch", "--task", fail, "--exit-status"], env);
    assertEquals(gf.code, 3, gf.stderr);
  } finally {
    await cap.close();
  }
});
