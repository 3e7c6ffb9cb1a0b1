/**
 * ChildCapsule (src/crew/calls/child_capsule.ts) on real `mur run` children: the readiness line read
 * and served, stop() ending the session cleanly, the lifeline ending it, a death noticed, and a
 * child that never comes up reported as E-RUN-045 with nothing left running.
 */
import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { stringify } from "yaml";
import { ChildCapsule } from "../../src/crew/calls/child_capsule.ts";
import { MurError } from "../../src/errors.ts";
import { pidAlive } from "../../src/process_liveness.ts";
import { killTree } from "../helpers/kill_tree.ts";
import { until } from "../helpers/until.ts";

/** A scripted capsule that serves A2A tasks until it is stopped, in a fresh temp dir. */
export async function sleepingCapsule(name = "child"): Promise<{ dir: string; home: string }> {
  const dir = await Deno.makeTempDir({ prefix: "mur-crew-" });
  await Deno.writeTextFile(
    `${dir}/murmur.yaml`,
    stringify({
      name,
      version: "0.1.0",
      inference: { transport: "http", driver: "scripted" },
      lifecycle: { task_acceptance: "queue", after_task: "sleep" },
    }),
  );
  return { dir, home: `${dir}/.home` };
}

function traceEvents(sessionDir: string): string[] {
  return Deno.readTextFileSync(`${sessionDir}/trace.jsonl`).trim().split("\n").map((l) =>
    JSON.parse(l).event_type
  );
}

async function withChild(
  name: string,
  fn: (c: ChildCapsule, home: string) => Promise<void>,
): Promise<void> {
  const { dir, home } = await sleepingCapsule(name);
  const c = await ChildCapsule.start({ manifest: dir, env: { MURMUR_HOME: home } });
  try {
    await fn(c, home);
  } finally {
    killTree(c.pid);
    await c.exited;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("child capsule: ready line parsed, door serves that session, stop() ends it cleanly", async () => {
  await withChild("child-a", async (c, home) => {
    assert(/^http:\/\/127\.0\.0\.1:\d+$/.test(c.url), c.url);
    assert(/^ses_[0-9a-f]{32}$/.test(c.sessionId));
    assertEquals(c.ready.name, "child-a");
    const card = await (await fetch(`${c.url}/.well-known/agent-card.json`)).json();
    assert(JSON.stringify(card).includes(c.sessionId), "the card names the session");
    const record = `${home}/running/${c.sessionId}.json`;
    assert(Deno.statSync(record).isFile);
    const st = await c.stop(15_000);
    assertEquals(st.code, 0, "a sleeping capsule with no launch task stops ok");
    assertEquals(c.exitCode, 0);
    assert(!(await pidAlive(c.pid)));
    await rejects(Deno.stat(record), Deno.errors.NotFound);
    assertEquals(traceEvents(c.ready.session_dir).at(-1), "session_end");
  });
});

Deno.test("child capsule: closing the lifeline alone ends the session (session_end, record gone)", async () => {
  await withChild("child-b", async (c, home) => {
    c.closeLifeline();
    const st = await c.exited;
    assertEquals(st.code, 0);
    await rejects(Deno.stat(`${home}/running/${c.sessionId}.json`), Deno.errors.NotFound);
    assertEquals(traceEvents(c.ready.session_dir).at(-1), "session_end");
  });
});

Deno.test("child capsule: a child killed from outside is noticed through exited", async () => {
  await withChild("child-c", async (c) => {
    Deno.kill(c.pid, "SIGKILL");
    const st = await c.exited;
    assertEquals(st.signal, "SIGKILL");
    await until("exitCode set", () => (c.exitCode !== null ? true : undefined), 5_000);
    assertEquals(c.signal("SIGTERM"), false, "a dead child takes no signal");
  });
});

Deno.test("child capsule: a child that cannot come up is E-RUN-045 naming it, with its stderr", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mur-crew-" });
  try {
    const err = await ChildCapsule.start({
      manifest: `${dir}/nope`,
      label: "member 'ghost'",
      env: { MURMUR_HOME: `${dir}/.home` },
    }).then(() => null, (e) => e);
    assert(err instanceof MurError, String(err));
    assertEquals(err.code, "E-RUN-045");
    assert(err.message.includes("member 'ghost' did not come up: it exited 1"), err.message);
    assert(err.message.includes("E-IO-001"), `quotes the child's error: ${err.message}`);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("child capsule: no readiness line in time is E-RUN-045 and the child is killed", async () => {
  const { dir, home } = await sleepingCapsule("child-d");
  try {
    const err = await ChildCapsule.start({
      manifest: dir,
      env: { MURMUR_HOME: home },
      readyTimeoutMs: 1,
    }).then(() => null, (e) => e);
    assert(err instanceof MurError, String(err));
    assertEquals(err.code, "E-RUN-045");
    assert(err.message.includes("no readiness line within"), err.message);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("child capsule: a child does not inherit this process's formation membership", async () => {
  const id = "frm_0123456789abcdef0123456789abcdef";
  Deno.env.set("MURMUR_FORMATION_ID", id);
  Deno.env.set("MURMUR_CREW_CALLEES", "someone");
  try {
    await withChild("child-e", (c, home) => {
      const rec = JSON.parse(Deno.readTextFileSync(`${home}/running/${c.sessionId}.json`));
      assertEquals(rec.session_id, c.sessionId);
      assertEquals(rec.formation_id, undefined);
      return Promise.resolve();
    });
    // Given by the starter, it is taken.
    const { dir, home } = await sleepingCapsule("child-f");
    const c = await ChildCapsule.start({
      manifest: dir,
      env: { MURMUR_HOME: home, MURMUR_FORMATION_ID: id },
    });
    try {
      const rec = JSON.parse(Deno.readTextFileSync(`${home}/running/${c.sessionId}.json`));
      assertEquals(rec.formation_id, id);
    } finally {
      killTree(c.pid);
      await c.exited;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  } finally {
    Deno.env.delete("MURMUR_FORMATION_ID");
    Deno.env.delete("MURMUR_CREW_CALLEES");
  }
});
