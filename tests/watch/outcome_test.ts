/** `mur watch`'s exit code from the outcomes it read, and --task's end-of-replay rule. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Outcomes, WATCH_EXIT } from "../../src/watch/outcome.ts";
import { Follow, type TaskCheck } from "../../src/watch/follow.ts";

Deno.test("exit codes: failed or rejected 3 beats canceled 4 beats the base; off without --exit-status", () => {
  const cases: [string[], number, number][] = [
    [[], WATCH_EXIT.ok, 0],
    [[], WATCH_EXIT.lost, 1],
    [["completed"], WATCH_EXIT.lost, 1],
    [["completed", "canceled"], WATCH_EXIT.ok, 4],
    [["canceled", "failed", "completed"], WATCH_EXIT.ok, 3],
    [["rejected"], WATCH_EXIT.lost, 3],
    [["canceled"], WATCH_EXIT.lost, 4],
    [["working", "input-required"], WATCH_EXIT.ok, 0],
  ];
  for (const [words, base, want] of cases) {
    const o = new Outcomes();
    words.forEach((w, i) => o.see(`tsk_${i}`, w));
    assertEquals(o.code(base, true), want, `${words} from ${base}`);
    assertEquals(o.code(base, false), base);
  }
});

Deno.test("a task's latest terminal status is what counts (one entry per task)", () => {
  const o = new Outcomes();
  assertEquals(o.see("tsk_a", "working"), false);
  assertEquals(o.see("tsk_a", "failed"), true);
  assertEquals([...o.ended], [["tsk_a", "failed"]]);
});

function follow(answers: TaskCheck[]) {
  const asked: number[] = [];
  const f = new Follow({
    id: "tsk_a",
    check: () => {
      asked.push(1);
      return Promise.resolve(answers.shift() ?? { kind: "state", state: "TASK_STATE_WORKING" });
    },
  });
  return { f, asked };
}

Deno.test("--task: a task already ended ends the watch at the first heartbeat", async () => {
  const { f } = follow([{ kind: "state", state: "TASK_STATE_CANCELED" }]);
  assertEquals((await f.start()).kind, "state");
  assertEquals(await f.heartbeat(), "canceled");
});

Deno.test("--task: a live task never ends at a heartbeat unless the watch lagged", async () => {
  const { f, asked } = follow([{ kind: "state", state: "TASK_STATE_WORKING" }]);
  await f.start();
  for (let i = 0; i < 3; i++) assertEquals(await f.heartbeat(), undefined);
  assertEquals(asked.length, 1); // no GetTask per heartbeat without a lag
});

Deno.test("--task: after a lag, GetTask at a heartbeat; the next heartbeat ends the watch", async () => {
  const { f, asked } = follow([
    { kind: "state", state: "TASK_STATE_WORKING" },
    { kind: "state", state: "TASK_STATE_WORKING" },
    { kind: "state", state: "TASK_STATE_COMPLETED" },
  ]);
  await f.start();
  f.lagged();
  assertEquals(await f.heartbeat(), undefined); // still working
  assertEquals(await f.heartbeat(), undefined); // completed: one more heartbeat for its status
  assertEquals(await f.heartbeat(), "completed");
  assertEquals(asked.length, 3);
});

Deno.test("--task: a door that cannot be asked is followed by the stream alone", async () => {
  const { f, asked } = follow([{ kind: "unknown", why: "HTTP 403" }]);
  await f.start();
  f.lagged();
  for (let i = 0; i < 3; i++) assertEquals(await f.heartbeat(), undefined);
  assertEquals(asked.length, 1);
  assertEquals(f.keeps("tsk_a"), true);
  assertEquals(f.keeps(undefined), true);
  assertEquals(f.keeps("tsk_b"), false);
});
