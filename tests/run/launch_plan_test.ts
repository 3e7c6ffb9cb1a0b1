/**
 * `mur run`'s launch plan (src/cli/launch_plan.ts), without a process: the flags and the
 * environment over a real loaded manifest decide the door's address, the lifecycle, push, the
 * session tools and the waits, and refuse what cannot go together before anything starts.
 */
import assert from "node:assert/strict";
import { MurError } from "../../src/errors.ts";
import { planLaunch } from "../../src/cli/launch_plan.ts";
import { parseRun } from "../../src/cli/run_inputs.ts";
import type { Manifest } from "../../src/manifest/types.ts";
import { BASE, load } from "../manifest/helpers.ts";

const noEnv = () => undefined;
const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

async function manifestOf(yaml = BASE): Promise<Manifest> {
  return (await load(yaml)).manifest;
}

Deno.test("launch plan: defaults from the manifest alone", async () => {
  const m = await manifestOf();
  const p = planLaunch(parseRun([]), m, noEnv);
  assert.equal(p.bind, "127.0.0.1");
  assert.equal(p.port, 0);
  assert.equal(p.workdirSource, "the session folder");
  assert.equal(p.workdirArg, undefined);
  assert.equal(p.taskArg, undefined);
  assert.equal(p.idleTimeoutMs, 30_000);
  assert.equal(p.heartbeatMs, 15_000);
  assert.equal(p.push, false);
  assert.equal(p.background, "lost");
  assert.equal(p.requestInput, false);
  assert.deepEqual(p.callees, []);
  assert.equal(p.cluster, false);
  assert.equal(p.json, false);
  assert.deepEqual(p.warnings, []);
  assert.equal(p.manifest.lifecycle.taskAcceptance, m.lifecycle.taskAcceptance);
});

Deno.test("launch plan: the lifecycle flags override a copy; the loaded manifest is unchanged", async () => {
  const m = await manifestOf();
  const before = structuredClone(m.lifecycle);
  const p = planLaunch(
    parseRun(["--lifecycle-task-acceptance", "queue", "--lifecycle-after-task", "sleep"]),
    m,
    noEnv,
  );
  assert.equal(p.manifest.lifecycle.taskAcceptance, "queue");
  assert.equal(p.manifest.lifecycle.afterTask, "sleep");
  assert.equal(p.background, "delivered");
  assert.deepEqual(m.lifecycle, before);
});

Deno.test("launch plan: --port over network.internal_port; --bind off loopback without auth warns W-SEC-032", async () => {
  const m = await manifestOf(`${BASE}network:\n  internal_port: 4321\n`);
  assert.equal(planLaunch(parseRun([]), m, noEnv).port, 4321);
  assert.equal(planLaunch(parseRun(["--port", "0"]), m, noEnv).port, 0);
  for (const bind of ["127.0.0.2", "::1", "localhost"]) {
    assert.deepEqual(planLaunch(parseRun(["--bind", bind]), m, noEnv).warnings, [], bind);
  }
  const open = planLaunch(parseRun(["--bind", "0.0.0.0"]), m, noEnv);
  assert.equal(open.warnings.length, 1);
  assert.match(open.warnings[0], /^warning\[W-SEC-032\]: the door is bound to 0\.0\.0\.0/);
});

Deno.test("launch plan: --resume with --context is E-RUN-015, refused before anything is read", async () => {
  const m = await manifestOf();
  assert.throws(
    () => planLaunch(parseRun(["--resume", "@1", "--context", "ctx_x"]), m, noEnv),
    (e) => e instanceof MurError && e.code === "E-RUN-015",
  );
  const p = planLaunch(parseRun(["--resume"]), m, noEnv);
  assert.equal(p.resumeFrom, "@1");
});

Deno.test("launch plan: the environment's waits, push retry and crew callees", async () => {
  const m = await manifestOf();
  const p = planLaunch(
    parseRun(["--workdir", "/tmp/w", "--task", "hi", "--json"]),
    m,
    envOf({
      MURMUR_A2A_TIMEOUT_SECS: "2",
      MURMUR_HEARTBEAT_MS: "250",
      MURMUR_PUSH_RETRY_BASE_MS: "5",
      MURMUR_CREW_CALLEES: "b, c,b",
      MURMUR_CREW_FILE: "/tmp/crew.json",
      MURMUR_DEBUG_SUBSCRIPTIONS: "1",
    }),
  );
  assert.equal(p.idleTimeoutMs, 2_000);
  assert.equal(p.heartbeatMs, 250);
  assert.equal(p.pushRetryBaseMs, 5);
  assert.deepEqual(p.callees, ["b", "c"]);
  assert.equal(p.crewFile, "/tmp/crew.json");
  assert.equal(p.debugSubscriptions, true);
  assert.equal(p.workdirArg, "/tmp/w");
  assert.equal(p.workdirSource, "--workdir");
  assert.equal(p.taskArg, "hi");
  assert.equal(p.json, true);
  // Not a number: the defaults.
  const bad = planLaunch(
    parseRun([]),
    m,
    envOf({ MURMUR_A2A_TIMEOUT_SECS: "x", MURMUR_PUSH_RETRY_BASE_MS: "-1" }),
  );
  assert.equal(bad.idleTimeoutMs, 30_000);
  assert.equal(bad.pushRetryBaseMs, undefined);
});

Deno.test("launch plan: push only on a capsule that takes tasks; request-input as a builtin tool", async () => {
  const yaml = `${BASE}network:\n  push_notifications:\n    enabled: true\n` +
    `tools:\n  - builtin: request-input\n`;
  const m = await manifestOf(yaml);
  const on = planLaunch(parseRun([]), m, noEnv);
  assert.equal(on.push, true);
  assert.equal(on.requestInput, true);
  const none = planLaunch(parseRun(["--lifecycle-task-acceptance", "none"]), m, noEnv);
  assert.equal(none.push, false);
});
