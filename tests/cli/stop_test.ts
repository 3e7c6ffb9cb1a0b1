/**
 * `mur stop` against a fake door and a real process standing in for the capsule: StopSession,
 * the output lines, SIGTERM, escalation to SIGKILL, and the record's removal.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { listRunningRecords } from "../../src/home/running_records.ts";
import { startFakeDoor } from "../watch/fake_door.ts";
import { fakeSessionId, runMur, tempHome, writeRecord } from "./helpers.ts";

const T1 = "tsk_0199c4e2f1b7712a9d3e4f5061728394";
const T2 = "tsk_0199c4e2f1b7712a9d3e4f5061728395";

/** A process that prints `ready` once its SIGTERM handling is in place, then idles (≤ 60 s). */
async function startStandIn(ignoreSigterm: boolean) {
  const code = `
    ${ignoreSigterm ? 'Deno.addSignalListener("SIGTERM", () => {});' : ""}
    setTimeout(() => Deno.exit(3), 60000);
    await Deno.stdout.write(new TextEncoder().encode("ready\\n"));
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + 15_000;
  while (!seen.includes("ready\n") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  assert(seen.includes("ready"), "stand-in did not start");
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return child;
}

Deno.test("mur stop escalates to SIGKILL for a process that ignores SIGTERM", async () => {
  const home = await tempHome();
  const sid = fakeSessionId();
  const stopCalls: unknown[] = [];
  const door = startFakeDoor({
    sessionId: sid,
    rpc(method, params) {
      if (method !== "murmur.StopSession") {
        return { error: { code: -32601, message: "Method not found" } };
      }
      stopCalls.push(params);
      return {
        result: {
          sessionId: sid,
          canceled: [T1],
          residue: [{
            kind: "detached_shell",
            work_id: "wrk_9f2a1c",
            binary: "/usr/bin/sleep",
            command: "30",
            started_at_ms: 1,
          }],
        },
      };
    },
  });
  const child = await startStandIn(true);
  try {
    const workdir = `${home}/workdir/${sid}`;
    await Deno.mkdir(workdir, { recursive: true });
    await Deno.writeTextFile(
      `${workdir}/trace.jsonl`,
      JSON.stringify({
        event_type: "task_end",
        event_id: "evt_1",
        parent_id: "evt_0",
        session_id: sid,
        timestamp: 1,
        task_id: T1,
        exit_status: "canceled",
      }) + "\n",
    );
    await writeRecord(home, { session_id: sid, url: door.url, pid: child.pid, workdir });
    const r = await runMur(["stop", sid.slice(-5), "--timeout", "1"], { MURMUR_HOME: home });
    assertEquals(r.stderr, "");
    assertEquals(r.code, 0);
    assertEquals(
      r.stdout,
      [
        `stopped: ${sid}`,
        "capsule: fake@0.0.1",
        "signal:  SIGTERM, then SIGKILL after 1s",
        `canceled: ${T1}`,
        "running: wrk_9f2a1c  detached shell  sleep 30",
        "",
      ].join("\n"),
    );
    assertEquals(stopCalls.length, 1);
    const st = await child.status;
    // The fake capsule ignores SIGTERM: only the SIGKILL after the timeout ended it.
    assertEquals(st.signal, "SIGKILL");
    assertEquals(await listRunningRecords(home), []);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await door.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mur stop: SIGTERM is enough for a process that obeys; unended tasks are named", async () => {
  const home = await tempHome();
  const sid = fakeSessionId();
  const door = startFakeDoor({
    sessionId: sid,
    rpc: (method) =>
      method === "murmur.StopSession"
        ? { result: { sessionId: sid, canceled: [T1, T2], residue: [] } }
        : { error: { code: -32601, message: "Method not found" } },
  });
  const child = await startStandIn(false);
  try {
    const workdir = `${home}/workdir/${sid}`;
    await Deno.mkdir(workdir, { recursive: true });
    await Deno.writeTextFile(
      `${workdir}/trace.jsonl`,
      JSON.stringify({
        event_type: "task_end",
        event_id: "evt_1",
        parent_id: "evt_0",
        session_id: sid,
        timestamp: 1,
        task_id: T1,
        exit_status: "canceled",
      }) + "\n",
    );
    await writeRecord(home, { session_id: sid, url: door.url, pid: child.pid, workdir });
    const r = await runMur(["stop", sid], { MURMUR_HOME: home });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(
      r.stdout,
      [
        `stopped: ${sid}`,
        "capsule: fake@0.0.1",
        "signal:  SIGTERM",
        `canceled: ${T1}`,
        `canceled: ${T2}`,
        "residue: nothing else was left running",
        `unended: ${T2}  the trace does not record how this task ended`,
        "",
      ].join("\n"),
    );
    assertEquals((await child.status).signal, "SIGTERM");
    assertEquals(await listRunningRecords(home), []);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await door.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("mur stop refuses --url and a stale session", async () => {
  const home = await tempHome();
  try {
    const url = await runMur(["stop", "--url", "localhost:1"], { MURMUR_HOME: home });
    assertEquals(url.code, 2);
    assert(url.stderr.includes("takes no --url"), url.stderr);

    const sid = fakeSessionId();
    const gone = new Deno.Command(Deno.execPath(), { args: ["eval", ""] }).spawn();
    await gone.status;
    await writeRecord(home, { session_id: sid, url: "localhost:1", pid: gone.pid });
    const r = await runMur(["stop", sid], { MURMUR_HOME: home });
    assertEquals(r.code, 1);
    assert(
      r.stderr.startsWith(
        `error[E-RUN-022]: ${sid} is not running: no process holds pid ${gone.pid}`,
      ),
      r.stderr,
    );
    assertEquals(await listRunningRecords(home), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
