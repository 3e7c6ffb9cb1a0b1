/**
 * The CLI against real capsules: `mur run --json` on the scripted driver, then `mur watch`,
 * `mur ps` and `mur stop` as subprocesses, each with its own MURMUR_HOME.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { listRunningRecords } from "../../src/home/running_records.ts";
import { userMessage } from "../helpers/capsule.ts";
import { type Mur, startMur } from "../helpers/mur.ts";
import { rpc } from "../run/helpers.ts";
import { type LiveMur, runMur, spawnMur, tempHome } from "./helpers.ts";

const MANIFEST = `name: realwatch
version: "0.2.0"
inference:
  transport: http
  driver: scripted
  script: script.yaml
  max_turns: 4
lifecycle:
  task_acceptance: queue
  queue_depth: 2
  after_task: sleep
capabilities:
  shell:
    allow: [bash]
`;

const SCRIPT = `tasks:
  - match: "fail"
    turns:
      - steps:
          - error: "provider overloaded"
  - match: "slow"
    turns:
      - steps:
          - text: "slow start "
          - delay_ms: 20000
          - text: "slow end"
  - turns:
      - steps:
          - thinking: "The user wants the weather."
          - text: "Let me check. "
          - tool_call: {id: toolu_01, name: bash, input: {command: "echo hello"}, chunks: 2}
      - steps:
          - text: "It is sunny in Paris."
`;

interface Ready {
  url: string;
  pid: number;
  session_id: string;
  workdir: string;
}

interface Capsule {
  mur: Mur;
  ready: Ready;
}

/** `mur run --json` on the manifest text, in the MURMUR_HOME the watch reads too. */
async function startCapsule(home: string): Promise<{ capsule: Capsule; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "mur-capsule-" });
  await Deno.writeTextFile(`${dir}/murmur.yaml`, MANIFEST);
  await Deno.writeTextFile(`${dir}/script.yaml`, SCRIPT);
  const mur = await startMur({
    args: ["run", "--manifest", dir, "--json"],
    env: { MURMUR_HOME: home, MURMUR_HEARTBEAT_MS: "300" },
    readyMs: 30_000,
    removeOnClose: [dir],
  });
  return { capsule: { mur, ready: mur.ready as unknown as Ready }, dir };
}

/** SendMessage with returnImmediately to the door at `localhost:<port>`: the task's id. */
async function send(url: string, text: string): Promise<string> {
  const body = await rpc(url, "SendMessage", {
    ...userMessage(text),
    configuration: { returnImmediately: true },
  }) as { result?: { task?: { id?: string } } };
  assert(body.result?.task?.id, JSON.stringify(body));
  return body.result.task.id;
}

async function taskState(url: string, id: string): Promise<string> {
  const body = await rpc(url, "GetTask", { id }) as { result: { status: { state: string } } };
  return body.result.status.state;
}

async function cleanup(capsule: Capsule | undefined, home: string) {
  await capsule?.mur.close();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}

Deno.test("real capsule: watch shows text, a tool call, a completion and a failure; stop ends it", async () => {
  const home = await tempHome();
  let capsule: Capsule | undefined;
  let dir: string | undefined;
  const watch = { live: undefined as LiveMur | undefined };
  try {
    ({ capsule, dir } = await startCapsule(home));
    const { url, session_id: sid } = capsule.ready;
    watch.live = await spawnMur(["watch", "@1"], { MURMUR_HOME: home });
    const w = watch.live;
    assertEquals(
      await w.err.next(30_000),
      `[murmur] watching ${sid} (realwatch@0.2.0) at ${url}`,
    );

    await send(url, "weather please");
    const failing = await send(url, "fail now");
    // From the second task on, status lines name their task (the suffix mur cancel takes).
    const tag = (id: string) => `[tsk ${id.slice(-6)}]`;
    const lines = await w.out.until((l) => l === `${tag(failing)} [failed]`, 30_000);
    const art = lines.findIndex((l) => l.startsWith("[artifact]"));
    assert(art > 0, JSON.stringify(lines));
    assert(/^\[artifact\] tool: bash \[ok, exit 0, \d+ms\] \| /.test(lines[art]), lines[art]);
    const turn2 = lines.indexOf("[working] inference turn 2");
    const block = lines.slice(art + 1, turn2);
    assert(block.every((l) => l.startsWith("  ")), JSON.stringify(block));
    assert(block.includes("  hello"), JSON.stringify(block));
    assertEquals(lines.slice(0, art), ["[working] inference turn 1", "Let me check. "]);
    assertEquals(lines.slice(turn2), [
      "[working] inference turn 2",
      "It is sunny in Paris.",
      "[completed]",
      "  It is sunny in Paris.",
      `${tag(failing)} [working] inference turn 1`,
      `${tag(failing)} [failed]`,
    ]);

    // A status line arrives through the pipe while its task is still running.
    const slow = await send(url, "slow one");
    const queued = await send(url, "queued weather");
    assertEquals(await w.out.next(30_000), `${tag(slow)} [working] inference turn 1`);
    assertEquals(await taskState(url, slow), "TASK_STATE_WORKING");

    const ps = await runMur(["ps"], { MURMUR_HOME: home });
    assert(ps.stdout.split("\n")[1].startsWith(`@1    ${sid}  realwatch@0.2.0`), ps.stdout);
    assert(ps.stdout.includes(" working "), ps.stdout);

    const stop = await runMur(["stop", sid.slice(-6)], { MURMUR_HOME: home });
    assertEquals(stop.code, 0, stop.stderr);
    const out = stop.stdout.trimEnd().split("\n");
    assertEquals(out.slice(0, 3), [
      `stopped: ${sid}`,
      "capsule: realwatch@0.2.0",
      "signal:  SIGTERM",
    ]);
    const canceled = out.filter((l) => l.startsWith("canceled: ")).map((l) => l.slice(10)).sort();
    assertEquals(canceled, [slow, queued].sort());
    assert(out.includes("residue: nothing else was left running"), stop.stdout);
    assert(!out.some((l) => l.startsWith("unended:")), stop.stdout);
    const st = await capsule.mur.status;
    assert(st.code !== null && st.signal === null, `capsule ended by signal ${st.signal}`);
    assertEquals(await listRunningRecords(home), []);

    // The watch sees both tasks end, each line naming its task (the queued one never ran), then
    // the connection drop without capsule-closed.
    const rest = await w.out.rest(15_000);
    assertEquals(
      rest.filter((l) => l.startsWith("[") && !l.includes("[working]")).sort(),
      [
        `${tag(slow)} [canceled]`,
        `${tag(queued)} [canceled]`,
      ].sort(),
    );
    assertEquals((await w.child.status).code, 1);
    const errs = await w.err.rest();
    // The seed's line, then the end told as an end: no reattach hint for a capsule that ended.
    assert(
      /^error\[E-IO-003\]: connection to ses_[0-9a-f]{32} lost after event id \d+$/
        .test(errs.at(-2)!),
      errs.join("\n"),
    );
    assert(errs.at(-2)!.includes(sid));
    assertEquals(
      errs.at(-1),
      "[murmur] the capsule ended: status ok (its stream said so as it closed)",
    );

    // The finished session's trace reads back as a tree and a summary.
    const steps = await runMur(["trace", "steps", sid.slice(-4), "--workdir", `${dir}/workdir`]);
    assertEquals(steps.code, 0, steps.stderr);
    const tree = steps.stdout.split("\n");
    assertEquals(tree[0], `session ${sid}  realwatch@0.2.0`);
    assert(tree.some((l) => l.startsWith("    turn 1  tool_call bash")), steps.stdout);
    assert(tree.some((l) => l.startsWith("      tool_call bash  ok  ")), steps.stdout);
    assert(tree.some((l) => l.startsWith("    task_failed  driver_error  ")), steps.stdout);
    const show = await runMur(["trace", "show", "--workdir", `${dir}/workdir`]);
    assertEquals(show.code, 0, show.stderr);
    assert(show.stdout.includes(`  session:   ${sid}\n`), show.stdout);
    assert(show.stdout.includes(`\n  ${slow}  phase turn\n`), show.stdout);
    assert(show.stdout.includes(`\n  ${queued}  phase queued\n`), show.stdout);
  } finally {
    watch.live?.kill();
    await watch.live?.child.status;
    await cleanup(capsule, home);
  }
});

Deno.test("real capsule killed before any event: watch exits 1, 'lost before any event'", async () => {
  const home = await tempHome();
  let capsule: Capsule | undefined;
  let live: LiveMur | undefined;
  try {
    ({ capsule } = await startCapsule(home));
    live = await spawnMur(["watch", "--url", capsule.ready.url, "--json"], {});
    // --url: the card names the session
    assertEquals(
      await live.err.next(30_000),
      `[murmur] watching ${capsule.ready.session_id} at ${capsule.ready.url}`,
    );
    // --json: the connection-ack is the first line; no numbered event yet
    const ack = JSON.parse((await live.out.next(15_000))!);
    assertEquals(ack.id, null);
    assert(ack.event.message, JSON.stringify(ack));
    capsule.mur.kill("SIGKILL");
    await capsule.mur.status;
    assertEquals(await live.out.rest(), []);
    assertEquals((await live.child.status).code, 1);
    // Killed: no record of it where this watch looks, and nothing answers at its address now.
    const errs = await live.err.rest();
    assertEquals(
      errs.at(-2),
      `error[E-IO-003]: connection to ${capsule.ready.url} lost before any event`,
    );
    assert(
      errs.at(-1)!.startsWith(`[murmur] nothing answers at ${capsule.ready.url} now (`),
      errs.join("\n"),
    );
  } finally {
    live?.kill();
    await live?.child.status;
    await cleanup(capsule, home);
  }
});
