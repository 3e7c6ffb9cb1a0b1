/**
 * An idle capsule gives memory back once per idle period (src/session/idle_collect.ts): the
 * worker's sleep (src/session/wakeup.ts) arms one collection, and whatever ends the sleep first
 * disarms it. On a real `mur run` started the way the installed `mur` starts it
 * (`--v8-flags=--expose-gc`), V8's `gc()` is wrapped by a preload that counts its calls in a file.
 */
import assert from "node:assert/strict";
import { Wakeup } from "../../src/session/wakeup.ts";
import { startCapsule, userMessage } from "../helpers/capsule.ts";
import { until } from "../helpers/until.ts";

Deno.test("idle collect: a sleep that lasts collects once", async () => {
  let calls = 0;
  let collected!: () => void;
  const done = new Promise<void>((r) => (collected = r));
  const w = new Wakeup(() => {
    calls++;
    collected();
  }, 1);
  const sleeping = w.idle(null);
  // The collection's timer does not hold the process open (a capsule exits while idle); this bound does.
  const bound = setTimeout(() => collected(), 10_000);
  await done;
  clearTimeout(bound);
  w.kick();
  await sleeping;
  assert.equal(calls, 1);
});

Deno.test("idle collect: a sleep ended first (a kick, or its own timeout) leaves no collection armed", async () => {
  // Timers fire in order of their deadlines: had a 1 ms collection stayed armed, it would fire
  // before the 5 ms timer each check waits on.
  let calls = 0;
  const w = new Wakeup(() => calls++, 1);
  const later = () => new Promise((r) => setTimeout(r, 5));
  const sleeping = w.idle(null);
  w.kick();
  await sleeping;
  await later();
  assert.equal(calls, 0, "kicked");
  const w2 = new Wakeup(() => calls++, 2);
  await w2.idle(1);
  await later();
  assert.equal(calls, 0, "timed out");
});

Deno.test("idle collect: without V8's gc() exposed, nothing is armed", async () => {
  const w = new Wakeup(null, 1);
  const sleeping = w.idle(null);
  w.kick();
  await sleeping;
});

Deno.test({
  name: "idle collect: a real capsule collects after readiness and again after a task, last-resort",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "mur-idle-gc-" });
    const log = `${dir}/gc.log`;
    const preload = `${dir}/count_gc.js`;
    await Deno.writeTextFile(
      preload,
      `const gc = globalThis.gc;
globalThis.gc = (o) => {
  Deno.writeTextFileSync(${
        JSON.stringify(log)
      }, JSON.stringify(o ?? null) + "\\n", { append: true });
  return gc(o);
};
`,
    );
    const calls = () => {
      try {
        return Deno.readTextFileSync(log).trim().split("\n").map((l) => JSON.parse(l));
      } catch {
        return [];
      }
    };
    const cap = await startCapsule({
      manifest: {
        name: "idle-gc",
        version: "0.1.0",
        lifecycle: { task_acceptance: "queue", after_task: "sleep", queue_depth: 2 },
      },
      script: { tasks: [{ turns: [{ steps: [{ text: "ok" }] }] }] },
      denoArgs: ["--v8-flags=--expose-gc", `--preload=${preload}`],
    });
    try {
      await until("a collection after readiness", () => calls().length >= 1 || undefined, 30_000);
      assert.deepEqual(calls()[0], { type: "major", execution: "sync", flavor: "last-resort" });
      // Blocking: the answer is the task at its end.
      const sent: { result?: { task?: { status?: { state?: string } } } } = await cap.rpc(
        "SendMessage",
        userMessage("hi"),
      );
      assert.equal(sent.result?.task?.status?.state, "TASK_STATE_COMPLETED", JSON.stringify(sent));
      await until(
        "a second collection once the task is done",
        () => calls().length >= 2 || undefined,
        30_000,
      );
    } finally {
      await cap.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
